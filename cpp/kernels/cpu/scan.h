// Inclusive scans along the middle axis of a contiguous (outer, n, inner) array: running sums
// (cumsum) and products (cumprod), forward or reversed (the reversed sum is cumsum's gradient),
// accumulated in Acc (double for float32 as PyTorch, float for the half types). cumprod_grad is
// cumprod's gradient for one column, exact when the column holds zeros:
//   dx_i = sum_{j >= i} g_j prod_{m <= j, m != i} x_m,
// which is (sum_{j >= i} g_j y_j) / x_i before the first zero k, the product of the other factors
// at k, and 0 after k (every term there keeps the factor x_k = 0).
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/loops.h"

namespace lucid::kernels {

template <class T, class Acc, bool Prod, bool Reverse>
void scan(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  constexpr int64_t kChunk = 256;  // columns per task when inner > 1
  const int64_t chunks = (inner + kChunk - 1) / kChunk, tasks = outer * chunks;
  const bool par = outer * n * inner >= 2 * kParallelGrain && tasks > 1;
#pragma omp parallel for schedule(static) if (par) num_threads(lucid::num_threads())
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / chunks, c0 = (t % chunks) * kChunk, c1 = std::min(inner, c0 + kChunk), w = c1 - c0;
    Acc acc[kChunk];
    for (int64_t j = 0; j < w; ++j) acc[j] = Prod ? Acc(1) : Acc(0);
    const T* xb = x + o * n * inner + c0;
    T* yb = y + o * n * inner + c0;
    for (int64_t s = 0; s < n; ++s) {
      const int64_t k = Reverse ? n - 1 - s : s;
      const T* xr = xb + k * inner;
      T* yr = yb + k * inner;
      for (int64_t j = 0; j < w; ++j) {
        if constexpr (Prod) acc[j] *= Acc(xr[j]);
        else acc[j] += Acc(xr[j]);
        yr[j] = T(acc[j]);
      }
    }
  }
}

// Gradient of cumprod for every column of (outer, n, inner): x the input, y the output, g the
// incoming gradient, all contiguous; dx written in place of out.
template <class T, class Acc>
void cumprod_grad(const T* x, const T* y, const T* g, T* out, int64_t outer, int64_t n, int64_t inner) {
  const int64_t cols = outer * inner;
  const bool par = cols * n >= 2 * kParallelGrain && cols > 1;
#pragma omp parallel for schedule(static) if (par) num_threads(lucid::num_threads())
  for (int64_t c = 0; c < cols; ++c) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    auto at = [&](int64_t i) { return base + i * inner; };
    int64_t k = n;  // the first zero
    for (int64_t i = 0; i < n; ++i)
      if (Acc(x[at(i)]) == Acc(0)) {
        k = i;
        break;
      }
    // i < k: the suffix sums of g_j y_j over all j >= i, divided by x_i.
    Acc suffix = 0;
    for (int64_t i = n - 1; i >= 0; --i) {
      suffix += Acc(g[at(i)]) * Acc(y[at(i)]);
      if (i < k) out[at(i)] = T(suffix / Acc(x[at(i)]));
      else out[at(i)] = T(0);
    }
    if (k < n) {  // at the first zero: sum_{j >= k} g_j * prefix * prod_{k < m <= j} x_m
      const Acc prefix = k > 0 ? Acc(y[at(k - 1)]) : Acc(1);
      Acc run = prefix, s = 0;
      for (int64_t j = k; j < n; ++j) {
        if (j > k) run *= Acc(x[at(j)]);
        s += Acc(g[at(j)]) * run;
      }
      out[at(k)] = T(s);
    }
  }
}

}  // namespace lucid::kernels
