// Creation ops: full, arange, linspace and fill_ (the random fills are in ops/random.h).
#pragma once
#include <cstdint>

#include "core/tensor_impl.h"
#include "ops/random.h"  // the random fills live there

namespace lucid {

TensorImplPtr full(const Shape& shape, double value, DType dtype);
TensorImplPtr arange(double start, double end, double step, DType dtype);
TensorImplPtr linspace(double start, double end, int64_t steps, DType dtype);
// Sets every element to `value` in place (no autograd; refused on a tensor that requires grad).
TensorImplPtr fill_(const TensorImplPtr& t, double value);

}  // namespace lucid
