// dropout (inverted): out = x * mask / (1 - p), mask[i] ~ Bernoulli(1 - p) drawn from the global
// generator (pylucid.manual_seed makes it reproducible). p = 1 gives zeros; p = 0 or
// training=False returns the input itself. Backward: dx = g * mask / (1 - p).
// Saved: the bool mask and the scale. AmpPolicy KeepInput.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr dropout(const TensorImplPtr& x, double p, bool training);

// saved_[0] holds the mask (bool, x's shape).
struct DropoutBackward : FuncOp<DropoutBackward, 1> {
  static const OpSchema& schema_v1;
  double scale_ = 1;  // 1 / (1 - p); 0 when p == 1
  DType in_dtype_ = kDefaultFloat;
  const char* name() const override { return "DropoutBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: dx = g * mask * scale is linear in g and its own adjoint (a recorded linear map).
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

}  // namespace lucid
