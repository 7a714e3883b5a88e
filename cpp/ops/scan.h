// Cumulative sums and products along one dim (PyTorch's cumsum/cumprod). The result dtype is
// `dtype` when given (the input is converted first), else the input's for floating inputs and
// int64 for integers and bool. Accumulation: double for float32, float for the half types.
// Gradients: cumsum's is the reversed cumulative sum of g (a linear map, differentiable to any
// order); cumprod's (saved: input and output) is exact with zeros (kernels/cpu/scan.h), and its
// double backward is recorded from differentiable ops. A 0-d input scans as one element.
#pragma once
#include <optional>

#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr cumsum(const TensorImplPtr& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
TensorImplPtr cumprod(const TensorImplPtr& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

}  // namespace lucid
