// Per-channel normalisation kernels over a contiguous (N, C, S) input (S = product of the
// spatial dims; no autograd, no allocation). Statistics accumulate in A = acc_t<T>.
//   BatchNorm  statistics per channel c over (n, s):             M = N * S elements
//   GroupNorm  statistics per (n, g) over the group's C/G channels and all s: L = C/G * S
// Both then apply y = (x - mean) * rstd * w[c] + b[c]; w and b may be null. Backward, with
// xhat = (x - mean) rstd and the sums taken over one statistic's elements (count K):
//   dx = rstd (gy - sum(gy)/K - xhat sum(gy xhat)/K),  gy = grad_out w[c]
//   (eval-mode BatchNorm, whose statistics are constants: dx = rstd gy)
//   dw[c] = sum_{n,s} grad_out xhat,  db[c] = sum_{n,s} grad_out.
// Every sum runs in a fixed order (by channel or by row), so results do not depend on threads.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

// mean[c] and biased var[c] over (n, s); two passes (no E[x^2] - E[x]^2 cancellation).
template <class T>
void batch_norm_stats(const T* x, acc_t<T>* mean, acc_t<T>* var, int64_t N, int64_t C, int64_t S);
// y = (x - mean[c]) rstd[c] w[c] + b[c].
template <class T>
void batch_norm_apply(const T* x, const T* w, const T* b, const acc_t<T>* mean, const acc_t<T>* rstd, T* y,
                      int64_t N, int64_t C, int64_t S);
// dx (may be null), dw, db (may be null) as above; `training` selects the batch-statistics dx.
template <class T>
void batch_norm_backward(const T* x, const T* w, const T* grad_out, const acc_t<T>* mean, const acc_t<T>* rstd,
                         T* dx, acc_t<T>* dw, acc_t<T>* db, int64_t N, int64_t C, int64_t S, bool training);

// mean, rstd: N * G each. C % G == 0.
template <class T>
void group_norm_forward(const T* x, const T* w, const T* b, T* y, acc_t<T>* mean, acc_t<T>* rstd, int64_t N,
                        int64_t C, int64_t S, int64_t G, acc_t<T> eps);
template <class T>
void group_norm_backward(const T* x, const T* w, const T* grad_out, const acc_t<T>* mean, const acc_t<T>* rstd,
                         T* dx, acc_t<T>* dw, acc_t<T>* db, int64_t N, int64_t C, int64_t S, int64_t G);

}  // namespace lucid::kernels
