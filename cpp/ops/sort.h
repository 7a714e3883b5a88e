// sort, argsort and topk along one dim (PyTorch's). NaN ranks above every number; sort is
// stable; topk returns the k largest (or smallest) sorted best first. Indices are int64.
// Gradient (sort and topk): the incoming gradient scattered back to the positions the indices
// name, in zeros of the input's shape (recorded with scatter_add under create_graph, so it is
// differentiable again). Saved: the indices. argsort records nothing. k outside [0, size]
// raises ShapeMismatch (a ValueError) naming the op.
#pragma once
#include <utility>

#include "core/tensor_impl.h"

namespace lucid {

std::pair<TensorImplPtr, TensorImplPtr> sort(const TensorImplPtr& x, int64_t dim, bool descending);
TensorImplPtr argsort(const TensorImplPtr& x, int64_t dim, bool descending);
std::pair<TensorImplPtr, TensorImplPtr> topk(const TensorImplPtr& x, int64_t k, int64_t dim, bool largest);

}  // namespace lucid
