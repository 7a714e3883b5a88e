// Reductions over a set of dims (empty = all) with keepdim: sum, mean, var/std (correction),
// amax/amin, max/min (full, or over one dim with indices), argmax/argmin, logsumexp, prod, norm.
// float32 sums accumulate in double, half types in float; all are ForceFP32 under autocast.
// Gradient of amax/amin (and norm p=inf): split evenly among the tied extremal elements
// (PyTorch's amax rule). max()/min() split evenly too, among the NaNs when the result is NaN;
// max(dim)/min(dim) route it to the returned index (PyTorch's nodes, all in ops/select_k.h).
// Saved: mean/sum nothing; var/logsumexp/max x (+ the output); prod x and the output.
// An empty reduction: sum 0, prod 1, mean/var NaN; max/min/argmax over a zero-size dim raise.
// sum_to reduces a broadcast gradient back to an operand's shape.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid {

// dims empty = all dims.
TensorImplPtr sum(const TensorImplPtr& x, std::vector<int64_t> dims, bool keepdim);
// sum accumulated and returned in `dtype` (PyTorch's dtype=); the gradient returns in x's dtype.
TensorImplPtr sum(const TensorImplPtr& x, std::vector<int64_t> dims, bool keepdim, DType dtype);
TensorImplPtr sum_to(const TensorImplPtr& g, const Shape& shape);

TensorImplPtr mean(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim);
// Divides the sum of squared deviations by max(0, N - correction).
TensorImplPtr var(const TensorImplPtr& x, const std::vector<int64_t>& dims, double correction, bool keepdim);
// `std` would shadow namespace std inside lucid; schema and Python name are "std".
TensorImplPtr std_dev(const TensorImplPtr& x, const std::vector<int64_t>& dims, double correction, bool keepdim);

TensorImplPtr amax(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim);
TensorImplPtr amin(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim);
// Full reduction to a 0-d tensor.
TensorImplPtr max(const TensorImplPtr& x);
TensorImplPtr min(const TensorImplPtr& x);
// Over one dim: (values, indices); the index of the first extremal element (first NaN if any).
std::pair<TensorImplPtr, TensorImplPtr> max(const TensorImplPtr& x, int64_t dim, bool keepdim);
std::pair<TensorImplPtr, TensorImplPtr> min(const TensorImplPtr& x, int64_t dim, bool keepdim);
// No dim: the index into the flattened tensor.
TensorImplPtr argmax(const TensorImplPtr& x, std::optional<int64_t> dim, bool keepdim);
TensorImplPtr argmin(const TensorImplPtr& x, std::optional<int64_t> dim, bool keepdim);

// log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the max (stable; m = +-inf
// gives m).
TensorImplPtr logsumexp(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim);
// Product over one dim or all (no dim); the gradient is exact with zeros (prefix/suffix products).
TensorImplPtr prod(const TensorImplPtr& x, std::optional<int64_t> dim, bool keepdim);
// Vector p-norm over dims: p = 2 (default), 1, inf, -inf, 0 (count of non-zeros), or any p > 0.
TensorImplPtr norm(const TensorImplPtr& x, double p, const std::vector<int64_t>& dims, bool keepdim);

}  // namespace lucid
