// unfold (PyTorch's Tensor.unfold): the windows of length `size` taken every `step` along `dim`,
// as a view: dim's size becomes the window count (n - size) / step + 1 with stride step * s, and
// a new last dim of length size with stride s (s = the input's stride along dim). Windows overlap
// when step < size; the view then shares elements between windows, as in PyTorch.
// Backward: the gradient of every window element is added into a zero gradient of the input's
// shape (overlapping elements accumulate). Saved: geometry only. AmpPolicy KeepInput.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr unfold(const TensorImplPtr& x, int64_t dim, int64_t size, int64_t step);

struct UnfoldBackward : FuncOp<UnfoldBackward, 1> {
  static const OpSchema& schema_v1;  // {unfold, 1, KeepInput, produces_grad}
  Shape in_shape_;
  DType in_dtype_ = kDefaultFloat;
  int64_t outer_ = 1, n_ = 1, inner_ = 1, count_ = 0, size_ = 0, step_ = 1;
  const char* name() const override { return "UnfoldBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the accumulation is linear in grad_out; its adjoint is unfold of the gradient.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  TensorImplPtr accumulate(const TensorImplPtr& grad_out) const;  // dx (raw)
  TensorImplPtr windows(const TensorImplPtr& u) const;             // the unfold of u (raw, contiguous)
};

}  // namespace lucid
