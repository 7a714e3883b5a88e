// Fused normalisation kernels over contiguous rows (no autograd, no allocation):
//   RMSNorm    rstd = 1/sqrt(mean_{j<k} x_j^2 + eps), y = x * rstd * gamma (k <= N: partial RMSNorm)
//   LayerNorm  mean, rstd = 1/sqrt(var + eps),     y = (x - mean) * rstd * w + b
//   GroupRMS   rstd per (row, group) over the channels of each group, y = x * rstd[g] * gamma[g]
// Each row is read from memory once: the second pass (scaling) finds it in cache. T is the
// storage type; statistics and d_gamma accumulate in A = acc_t<T> (float for half types).
// gamma/w/b may be null (no gain/bias); dx or d_gamma may be null (not requested).
// Parameter gradients are summed per chunk of rows into `scratch`, then the chunks are added
// in chunk order: the chunking depends only on the shape, so results do not depend on the
// number of threads and repeat bit for bit.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

// Number of row chunks the kernels split `rows` rows of length `row_len` into (1 = serial).
int64_t norm_chunks(int64_t rows, int64_t row_len);

template <class T>
void rms_norm_forward(const T* x, const T* gamma, T* y, acc_t<T>* rstd, int64_t rows, int64_t N,
                      int64_t k, acc_t<T> eps);
// scratch: norm_chunks(rows, N) * N elements when d_gamma is requested.
template <class T>
void rms_norm_backward(const T* x, const T* gamma, const T* grad_out, const acc_t<T>* rstd, T* dx,
                       acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows, int64_t N, int64_t k);

template <class T>
void layer_norm_forward(const T* x, const T* w, const T* b, T* y, acc_t<T>* mean, acc_t<T>* rstd,
                        int64_t rows, int64_t N, acc_t<T> eps);
// scratch: norm_chunks(rows, N) * N elements for each of d_w and d_b that is requested.
template <class T>
void layer_norm_backward(const T* x, const T* w, const T* grad_out, const acc_t<T>* mean,
                         const acc_t<T>* rstd, T* dx, acc_t<T>* d_w, acc_t<T>* d_b, acc_t<T>* scratch,
                         int64_t rows, int64_t N);

// x: rows of (C, S) (S spatial positions per channel; S = 1 for (B, C)); groups: C ids in
// [0, G); counts: channels per group (all >= 1); rstd: rows * G. A group's statistic covers its
// channels at every spatial position (counts[g] * S values).
template <class T>
void group_rms_norm_forward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma,
                            T* y, acc_t<T>* rstd, int64_t rows, int64_t C, int64_t S, int64_t G, acc_t<T> eps);
// scratch: norm_chunks(rows, C * S) * 2 * G elements.
template <class T>
void group_rms_norm_backward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma,
                             const T* grad_out, const acc_t<T>* rstd, T* dx, acc_t<T>* d_gamma,
                             acc_t<T>* scratch, int64_t rows, int64_t C, int64_t S, int64_t G);

}  // namespace lucid::kernels
