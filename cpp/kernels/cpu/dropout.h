// The dropout multiply, shared by forward (on x) and backward (on the gradient):
// out[i] = v[i] * (mask[i] ? scale : 0). A multiply, not a select, so a NaN stays NaN under a
// dropped element as in PyTorch.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

template <class T>
void dropout_apply(int64_t n, const T* v, const bool* mask, double scale, T* out) {
  using A = acc_t<T>;
  const A s = A(scale);
  for (int64_t i = 0; i < n; ++i) out[i] = T(A(v[i]) * (mask[i] ? s : A(0)));
}

}  // namespace lucid::kernels
