// Fused double backward of the norm family (the backward of the backward), over contiguous
// rows. RMSNorm: Inputs of the first backward: grad_out g, x, gamma (null: none); rstd saved by the
// forward. Upstream gradients: u for dx (rows x N, null: none), v for d_gamma (N, null: none).
// Per row, with gy = g * gamma, c = rstd^3 / k and m_i = [i < k] (the features feeding rstd):
//   A = sum_i gy_i x_i   U = sum_i m_i u_i x_i   Q = sum_i u_i gy_i + sum_i v_i g_i x_i - 3 rstd^2 A U / k
//   t_i = rstd u_i - c U x_i
//   d_g_i     = gamma_i t_i + rstd v_i x_i
//   d_x_i     = rstd v_i g_i - c (gy_i U + m_i u_i A) - c m_i x_i Q
//   d_gamma_i = sum over rows of g_i t_i
// GroupRMSNorm: the same per (row, group), k = N = n_g S values, gamma and v one per group.
// LayerNorm (xh = (x - mean) rstd, gy = g w, upstreams u for dx, v for d_w, z for d_b), per row:
//   t_i = r (u_i - mean(u) - xh_i mean(u xh)),  d_g_i = w_i t_i + v_i xh_i + z_i,  d_w_i = sum_rows g_i t_i
//   e_i = v_i g_i - r/N (gy_i sum(u xh) + u_i sum(gy xh))
//   d_x_i = r (e_i - mean(e) - xh_i mean(e xh)) - r^2/N xh_i (sum(u gy) - mean(gy) sum(u) - sum(gy xh) sum(u xh)/N)
// The formulas are derived on docs/rms_norm_backward.rst. d_g, d_x, d_gamma may be null.
// Instantiated for float and double (float16/bfloat16 run the float kernel, ops/norm_node.h).
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

// scratch: norm_chunks(rows, N) * N elements when d_gamma is requested.
template <class T>
void rms_norm_double_backward(const T* x, const T* gamma, const T* g, const acc_t<T>* rstd, const T* u,
                              const T* v, T* d_g, T* d_x, acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows,
                              int64_t N, int64_t k);

// groups, counts as group_rms_norm_forward; rstd (rows, G); u (rows, C S) or null; v (G,) or null.
// scratch: norm_chunks(rows, C * S) * 4 * G elements.
template <class T>
void group_rms_norm_double_backward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma,
                                    const T* g, const acc_t<T>* rstd, const T* u, const T* v, T* d_g, T* d_x,
                                    acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows, int64_t C, int64_t S,
                                    int64_t G);

// u (rows, N) or null; v, z (N,) or null (the upstreams of d_w and d_b). d_w needs u.
// scratch: norm_chunks(rows, N) * N elements when d_w is requested.
template <class T>
void layer_norm_double_backward(const T* x, const T* w, const T* g, const acc_t<T>* mean, const acc_t<T>* rstd,
                                const T* u, const T* v, const T* z, T* d_g, T* d_x, acc_t<T>* d_w,
                                acc_t<T>* scratch, int64_t rows, int64_t N);

}  // namespace lucid::kernels
