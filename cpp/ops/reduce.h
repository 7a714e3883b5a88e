// Reductions over a set of dims with keepdim: sum, mean, var (correction), max, min
// (values; gradient to the first extremal element... split evenly among ties as PyTorch's
// amax does), argmax/argmin. float32 sums accumulate in double, half types in float.
// sum_to reduces a broadcast gradient back to an operand's shape.
#pragma once
#include <vector>

#include "core/tensor_impl.h"

namespace lucid {

// dims empty = all dims.
TensorImplPtr sum(const TensorImplPtr& x, std::vector<int64_t> dims, bool keepdim);
TensorImplPtr sum_to(const TensorImplPtr& g, const Shape& shape);

}  // namespace lucid
