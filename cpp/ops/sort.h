// sort, argsort and topk along one dim (PyTorch's). NaN ranks above every number; sort with
// stable keeps equal values in input order, without it equal values come in the order PyTorch's
// CPU sort leaves them (as do topk's); topk returns the k largest (or smallest), sorted best
// first (sorted=False: in PyTorch's selection order). Indices are int64.
// Gradient (sort and topk): the incoming gradient scattered back to the positions the indices
// name, in zeros of the input's shape (recorded with scatter_add under create_graph, so it is
// differentiable again). Saved: the indices. argsort records nothing. k outside [0, size]
// raises ShapeMismatch (a ValueError) naming the op.
#pragma once
#include <utility>

#include "core/tensor_impl.h"

namespace lucid {

std::pair<TensorImplPtr, TensorImplPtr> sort(const TensorImplPtr& x, int64_t dim, bool descending, bool stable);
TensorImplPtr argsort(const TensorImplPtr& x, int64_t dim, bool descending, bool stable);
std::pair<TensorImplPtr, TensorImplPtr> topk(const TensorImplPtr& x, int64_t k, int64_t dim, bool largest,
                                             bool sorted);

}  // namespace lucid
