// parallel_ranges(n, body): body(lo, hi) over [0, n) in one call when n is small, else one
// contiguous chunk per thread. Each kernel's inner loop is then a plain loop over local restrict
// pointers, which vectorizes (the fused optimizer steps).
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/loops.h"

namespace lucid::kernels {

template <class F>
inline void parallel_ranges(int64_t n, F body) {
  if (n < 2 * kParallelGrain) {
    body(int64_t(0), n);
    return;
  }
  const int64_t nt = lucid::num_threads(), chunk = (n + nt - 1) / nt;
  parallel_threads(int(nt), [&](int t) {
    const int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
    body(lo, hi);
  });
}

}  // namespace lucid::kernels
