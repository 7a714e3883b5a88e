// Division with rounding, elementwise with broadcasting and PyTorch type promotion:
//   remainder(a, b) = a - b * floor(a / b)   (the sign of b, Python's %),
//   fmod(a, b)      = a - b * trunc(a / b)   (the sign of a, C's fmod),
//   floor_divide(a, b) = floor(a / b)        (Python's //; integers stay integers).
// Gradients (PyTorch's): d/da = g for remainder and fmod, d/db = -g * floor(a / b) (remainder)
// or -g * trunc(a / b) (fmod); the quotient is piecewise constant, so the double backward is a
// linear map of g. floor_divide records no gradient. Saved: a and b.
// An integer division by zero raises LucidError (it would trap); INT64_MIN // -1 wraps.
#pragma once
#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr remainder(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr fmod(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr floor_divide(const TensorImplPtr& a, const TensorImplPtr& b);

}  // namespace lucid
