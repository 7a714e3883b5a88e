// Indexing: t[...] reading and writing, index_select, gather, scatter_add, nonzero.
// Basic items (ints, slices with positive steps, None, Ellipsis) give one strided view of x.
// Index tensors (int64, or bool masks turned into int64 by nonzero) then gather from that view
// with numpy's placement rule: the broadcast index shape B replaces the indexed dims when they
// are adjacent, else B comes first. As in PyTorch, ints (and 0-d int64 tensors) select before
// that rule applies, so x[0, :, [1, 2]] has shape (x.shape[1], 2), where numpy gives (2, ...).
// Every index is range-checked before any memory is read (IndexOutOfRange names op/index/dim).
// Backward of a gather is a scatter-add into zeros of x's shape, so repeated indices accumulate;
// nodes save the element offsets of the gathered positions in a contiguous layout of x.
#pragma once
#include <vector>

#include "core/tensor_impl.h"

namespace lucid {

struct IndexItem {
  enum class Kind { Int, Slice, NewAxis, Ellipsis, Tensor };
  Kind kind = Kind::Ellipsis;
  int64_t i = 0;                                  // Int
  int64_t start = 0, stop = 0, step = 1;          // Slice (Python semantics, clamped)
  bool has_start = false, has_stop = false;
  TensorImplPtr t;                                // Tensor: int64 or bool
};

TensorImplPtr index(const TensorImplPtr& x, const std::vector<IndexItem>& items);
// x[items] = value (value broadcast to the indexed shape, cast to x's dtype); bumps x's version.
// Under autograd (x or value requires grad) the write is recorded: x's history moves onto an
// IndexPutBackward node (PyTorch's semantics for x[i] = v).
void index_put_(const TensorImplPtr& x, const std::vector<IndexItem>& items, const TensorImplPtr& value);
// The out-of-place form: a copy of x with out[items] = value, differentiable in x and value.
TensorImplPtr index_put(const TensorImplPtr& x, const std::vector<IndexItem>& items, const TensorImplPtr& value);

TensorImplPtr index_select(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index);
// out[..., i_d, ...] = x[..., index[..., i_d, ...], ...] along dim; index has x's ndim.
TensorImplPtr gather(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index);
// A copy of x with src[..] added at the positions `index` names along dim (out of place).
TensorImplPtr scatter_add(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index, const TensorImplPtr& src);
TensorImplPtr scatter_add_(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index, const TensorImplPtr& src);
// (n, ndim) int64 coordinates of the nonzero elements in row-major order; and one (n,) per dim.
TensorImplPtr nonzero(const TensorImplPtr& x);
std::vector<TensorImplPtr> nonzero_tuple(const TensorImplPtr& x);

}  // namespace lucid
