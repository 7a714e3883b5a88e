// The elementwise ops Python sees by name. Each op file registers its ops here during static
// initialisation, one line per op next to its definition (LUCID_UNARY_OP in ops/unary.cpp,
// LUCID_BINARY_OP in ops/binary.cpp); the bindings (bindings/ops_math.cpp) give every entry a
// module function _C.<name> and a Tensor method <name>. Adding an op touches no binding file.
#pragma once
#include <vector>

#include "core/tensor_impl.h"

namespace lucid {

using UnaryFn = TensorImplPtr (*)(const TensorImplPtr&);
using BinaryFn = TensorImplPtr (*)(const TensorImplPtr&, const TensorImplPtr&);

struct UnaryEntry {
  const char* name;
  UnaryFn fn;
  const char* doc;
};
// A binary op takes (input, other); other may also be a Python number (converted as the
// operators convert it).
struct BinaryEntry {
  const char* name;
  BinaryFn fn;
  const char* doc;
};

// In registration order (within one file, the order of the lines).
const std::vector<UnaryEntry>& unary_ops();
const std::vector<BinaryEntry>& binary_ops();
// Both return true, for a namespace-scope `static const bool` that runs them at start-up.
bool register_op(const UnaryEntry& e);
bool register_op(const BinaryEntry& e);

}  // namespace lucid
