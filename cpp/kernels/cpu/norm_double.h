// Fused double backward of the RMSNorm family (the backward of the backward), over contiguous
// rows. Inputs of the first backward: grad_out g, x, gamma (null: none); rstd saved by the
// forward. Upstream gradients: u for dx (rows x N, null: none), v for d_gamma (N, null: none).
// Per row, with gy = g * gamma, c = rstd^3 / k and m_i = [i < k] (the features feeding rstd):
//   A = sum_i gy_i x_i   U = sum_i m_i u_i x_i   Q = sum_i u_i gy_i + sum_i v_i g_i x_i - 3 rstd^2 A U / k
//   t_i = rstd u_i - c U x_i
//   d_g_i     = gamma_i t_i + rstd v_i x_i
//   d_x_i     = rstd v_i g_i - c (gy_i U + m_i u_i A) - c m_i x_i Q
//   d_gamma_i = sum over rows of g_i t_i
// The formulas are derived on docs/rms_norm_backward.rst. d_g, d_x, d_gamma may be null.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

// scratch: norm_chunks(rows, N) * N elements when d_gamma is requested.
template <class T>
void rms_norm_double_backward(const T* x, const T* gamma, const T* g, const acc_t<T>* rstd, const T* u,
                              const T* v, T* d_g, T* d_x, acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows,
                              int64_t N, int64_t k);

}  // namespace lucid::kernels
