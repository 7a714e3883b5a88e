// pad (PyTorch's F.pad): constant, reflect, replicate and circular padding of the last k <= 3
// dims. `pads` lists (low, high) pairs starting from the last dim, as PyTorch does; constant
// padding may be negative (crops). Every mode is a gather with one index map per padded dim
// (src[i] in [0, size), or -1 for the constant), so forward and backward share one plan:
//   y[o, a, b, c] = x[o, ma[a], mb[b], mc[c]]  (value where any map is -1),
//   dx[o, ma[a], mb[b], mc[c]] += dy[o, a, b, c].
// Saved: nothing but the maps. AmpPolicy KeepInput.
#pragma once
#include <string>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

struct PadBackward : FuncOp<PadBackward, 1> {
  static const OpSchema& schema_v1;  // {pad, 1, KeepInput, produces_grad}
  Shape x_shape_;
  DType x_dtype_ = kDefaultFloat;
  int64_t outer_ = 1;
  std::vector<int64_t> maps_[3];  // output index -> input index (or -1), for the 3 trailing dims
  int64_t in_[3] = {1, 1, 1};
  const char* name() const override { return "PadBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the scatter is linear in grad_out; its adjoint is the gather (pad with 0).
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  TensorImplPtr scatter(const TensorImplPtr& grad_out) const;  // dx (raw)
};

TensorImplPtr pad(const TensorImplPtr& x, const std::vector<int64_t>& pads, const std::string& mode, double value,
                  const char* op);

}  // namespace lucid
