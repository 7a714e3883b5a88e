// softmax / log_softmax over one dim of a tensor viewed as (outer, n, inner), and their
// closed-form backward. Rows are stabilised by their max: y = exp(x - m) / sum exp(x - m),
// log y = x - m - log sum exp(x - m); all arithmetic in acc_t<T>.
// Input x is read through strides (so a transposed matrix needs no copy); y, gy, gx are
// contiguous (outer, n, inner). Large inputs split the outer dim over OpenMP threads; small
// ones never open a parallel region.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cpu/loops.h"

namespace lucid::kernels {

// Threads for `items` independent rows of `elems_per_item` elements: 1 (no parallel region,
// which costs microseconds) unless every thread gets at least kParallelGrain elements.
inline int threads_for(int64_t items, int64_t elems_per_item) {
  return int(std::min<int64_t>({int64_t(omp_get_max_threads()), items, items * elems_per_item / kParallelGrain}));
}

// Runs f(begin, end) over [0, items), serially or split over threads (also used by the losses).
template <class F>
void for_items(int64_t items, int64_t elems_per_item, F f) {
  const int nt = threads_for(items, elems_per_item);
  if (nt <= 1) {
    f(int64_t(0), items);
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int t = 0; t < nt; ++t) f(items * t / nt, items * (t + 1) / nt);
}

// Sums f(begin, end) -> P over [0, items); per-thread partials are added in thread order.
template <class P, class F>
P sum_items(int64_t items, int64_t elems_per_item, F f) {
  const int nt = threads_for(items, elems_per_item);
  if (nt <= 1) return f(int64_t(0), items);
  std::vector<P> parts(static_cast<size_t>(nt));
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int t = 0; t < nt; ++t) parts[size_t(t)] = f(items * t / nt, items * (t + 1) / nt);
  P total{};
  for (auto& p : parts) total += p;
  return total;
}

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

}  // namespace lucid::kernels
