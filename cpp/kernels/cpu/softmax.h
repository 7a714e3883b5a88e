// softmax / log_softmax over one dim of a tensor viewed as (outer, n, inner), and their
// closed-form backward. Rows are stabilised by their max: y = exp(x - m) / sum exp(x - m),
// log y = x - m - log sum exp(x - m); all arithmetic in acc_t<T>.
// Input x is read through strides (so a transposed matrix needs no copy); y, gy, gx are
// contiguous (outer, n, inner). Large inputs split the outer dim over OpenMP threads; small
// ones never open a parallel region. Contiguous float rows use a vectorisable exp and are
// also compiled for AVX2 (picked at load time); the losses share these row primitives.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/threads.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

// Threads for `items` independent rows of `elems_per_item` elements: 1 (no parallel region,
// which costs microseconds) unless every thread gets at least kParallelGrain elements.
inline int threads_for(int64_t items, int64_t elems_per_item) {
  return int(std::min<int64_t>({int64_t(lucid::num_threads()), items, items * elems_per_item / kParallelGrain}));
}

// Runs f(begin, end) over [0, items), serially or split over threads (also used by the losses).
template <class F>
void for_items(int64_t items, int64_t elems_per_item, F f) {
  parallel_chunks(threads_for(items, elems_per_item), items, f);
}

// Sums f(begin, end) -> P over [0, items); per-thread partials are added in thread order.
template <class P, class F>
P sum_items(int64_t items, int64_t elems_per_item, F f) {
  const int nt = threads_for(items, elems_per_item);
  if (nt <= 1) return f(int64_t(0), items);
  std::vector<P> parts(static_cast<size_t>(nt));
  parallel_threads(nt, [&](int t) { parts[size_t(t)] = f(items * t / nt, items * (t + 1) / nt); });
  P total{};
  for (auto& p : parts) total += p;
  return total;
}

// exp for float in plain arithmetic, so loops over it vectorise (glibc's expf does not without
// -ffast-math): exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln 2 / 2, with Cephes' degree-6
// polynomial (relative error ~2e-7). NOTE: below -87.33 it flushes to 0 (exp(-inf) is exactly 0,
// no denormals), above 88 it gives inf (callers pass x - max <= 0), and NaN stays NaN.
inline float exp_vec(float x) {
  constexpr float lo = -87.33654f, hi = 88.0f;
  float xc = x > lo ? x : lo;  // NaN -> lo too, so the int conversion below stays defined
  xc = xc < hi ? xc : hi;
  const float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  const float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;
  const float p = exp_poly_f32(r) * r * r + r + 1.0f;
  const uint32_t bits = uint32_t(int32_t(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float res = p * scale + (x - x);  // x - x is NaN for a NaN input, else 0
  return x < lo ? 0.0f : (x > hi ? std::numeric_limits<float>::infinity() : res);
}
// exp in the accumulation type inside vectorised loops: the float form above, libm for double
// (float64 results are compared against finite differences). Scalar loops call libm's exp,
// whose table-driven form has a much shorter dependency chain.
inline float exp_acc(float x) { return exp_vec(x); }
inline double exp_acc(double x) { return std::exp(x); }

// Contiguous-row primitives (float and double):
//   logsumexp_row:  m + log(sum exp(x - m)), m = max(x); NaN for a row of -inf or with a NaN.
//   scaled_exp_row: out[i] = scale * exp(x[i] - shift).
//   softmax_row / softmax_row_backward / softmax_row_double_backward: one row of softmax_forward /
//   softmax_backward / softmax_double_backward.
float logsumexp_row(const float* x, int64_t n);
double logsumexp_row(const double* x, int64_t n);
void scaled_exp_row(const float* x, int64_t n, float shift, float scale, float* out);
void scaled_exp_row(const double* x, int64_t n, double shift, double scale, double* out);
void softmax_row(const float* x, float* y, int64_t n, bool log);
void softmax_row(const double* x, double* y, int64_t n, bool log);
void softmax_row_backward(const float* y, const float* gy, float* gx, int64_t n, bool log);
void softmax_row_backward(const double* y, const double* gy, double* gx, int64_t n, bool log);
void softmax_row_double_backward(const float* y, const float* g, const float* u, float* dg, float* dy, int64_t n,
                                 bool log);
void softmax_row_double_backward(const double* y, const double* g, const double* u, double* dg, double* dy,
                                 int64_t n, bool log);
//   exp_dot_row: sum_i u[i] exp(x[i] - shift);  exp_mul_row: out[i] = scale exp(x[i] - shift) (u[i] - sub).
float exp_dot_row(const float* x, const float* u, int64_t n, float shift);
double exp_dot_row(const double* x, const double* u, int64_t n, double shift);
void exp_mul_row(const float* x, const float* u, int64_t n, float shift, float scale, float sub, float* out);
void exp_mul_row(const double* x, const double* u, int64_t n, double shift, double scale, double sub, double* out);

struct SoftmaxGeom {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t xs_outer = 0, xs_n = 0, xs_inner = 0;  // x strides in elements
};

// y = softmax(x) (Log: log_softmax) along n.
template <class T>
void softmax_forward(const T* x, T* y, const SoftmaxGeom& g, bool log);

// gx from the saved output y and the incoming gradient gy (all contiguous):
//   softmax:     gx = y * (gy - sum(gy * y))
//   log_softmax: gx = gy - exp(y) * sum(gy)
template <class T>
void softmax_backward(const T* y, const T* gy, T* gx, int64_t outer, int64_t n, int64_t inner, bool log);

// The backward of softmax_backward (create_graph), with u the gradient arriving for gx:
//   softmax:     d_g = y (u - sum(u y)),     d_y = u (g - sum(g y)) - g sum(u y)
//   log_softmax: d_g = u - sum(u p),          d_y = -u p sum(g),   p = exp(y)
// All contiguous (outer, n, inner); d_g or d_y may be null.
template <class T>
void softmax_double_backward(const T* y, const T* g, const T* u, T* d_g, T* d_y, int64_t outer, int64_t n,
                             int64_t inner, bool log);

}  // namespace lucid::kernels
