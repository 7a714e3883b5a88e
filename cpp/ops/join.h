// Joining and selection: cat, stack, where, tril/triu, masked_fill.
//   cat/stack: inputs promoted to one dtype and copied into slices of the output; the grad is
//     split back into views (narrow / select of the grad), each cast to its input's dtype.
//   where(c, a, b) = c ? a : b, all three broadcast; grads: a gets c ? g : 0, b gets c ? 0 : g.
//   tril/triu keep j - i <= k (>= k) over the last two dims; their grad is tril/triu of the grad.
//   masked_fill(x, m, v) = m ? v : x (v a 0-d tensor); x's grad is zero where m, v's is sum(g[m]).
// The only saved tensors are the bool conditions/masks (version-checked).
#pragma once
#include <vector>

#include "core/tensor_impl.h"

namespace lucid {

// PyTorch's rules: 1-d tensors of size 0 are skipped; others match except along dim.
TensorImplPtr cat(const std::vector<TensorImplPtr>& ts, int64_t dim);
TensorImplPtr stack(const std::vector<TensorImplPtr>& ts, int64_t dim);
TensorImplPtr where(const TensorImplPtr& cond, const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr tril(const TensorImplPtr& x, int64_t diagonal);
TensorImplPtr triu(const TensorImplPtr& x, int64_t diagonal);
// value: a 0-d tensor (a Python number arrives as one). The out-of-place form broadcasts x
// and mask together; the in-place form needs mask to broadcast to x's shape.
TensorImplPtr masked_fill(const TensorImplPtr& x, const TensorImplPtr& mask, const TensorImplPtr& value);
TensorImplPtr masked_fill_(const TensorImplPtr& x, const TensorImplPtr& mask, const TensorImplPtr& value);

}  // namespace lucid
