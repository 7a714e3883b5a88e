// Strided loops over K operands that share one iteration shape. Dims are coalesced where
// every operand is contiguous across them, so a contiguous tensor runs as one flat row.
// `row(ptrs, n, inner_strides)` is called for each innermost row with byte-free element
// offsets already applied to the operands' base pointers. Large loops split rows over
// OpenMP threads; small ones stay serial (a parallel region costs microseconds).
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/threads.h"

namespace lucid::kernels {

constexpr int64_t kParallelGrain = 32768;  // elements per thread below which we stay serial

template <size_t K>
struct LoopPlan {
  std::vector<int64_t> shape;                   // coalesced, innermost last
  std::array<std::vector<int64_t>, K> strides;  // in elements, per operand
};

template <size_t K>
LoopPlan<K> plan_loop(const std::vector<int64_t>& shape,
                      const std::array<const std::vector<int64_t>*, K>& strides) {
  LoopPlan<K> p;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // size-1 dims never move a pointer
    bool merge = !p.shape.empty();
    for (size_t k = 0; k < K && merge; ++k)
      merge = p.strides[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      p.shape.back() *= shape[d];
      for (size_t k = 0; k < K; ++k) p.strides[k].back() = (*strides[k])[d];
    } else {
      p.shape.push_back(shape[d]);
      for (size_t k = 0; k < K; ++k) p.strides[k].push_back((*strides[k])[d]);
    }
  }
  if (p.shape.empty()) {  // 0-d or all-ones: one row of one element
    p.shape.push_back(1);
    for (size_t k = 0; k < K; ++k) p.strides[k].push_back(0);
  }
  return p;
}

// A non-owning reference to a callable. The loop drivers below take their row or chunk body
// through it, so each driver (and its OpenMP region) is compiled once in loops.cpp instead of
// once per functor and dtype; only the body's own loop is instantiated at the call site. The
// referenced callable must outlive the call (a lambda passed as an argument does).
template <class Sig>
class FnRef;
template <class R, class... Args>
class FnRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FnRef>>>
  FnRef(const F& f)  // NOLINT: implicit, so lambdas pass straight in
      : obj_(static_cast<const void*>(&f)),
        call_([](const void* o, Args... a) -> R { return (*static_cast<const F*>(o))(a...); }) {}
  R operator()(Args... a) const { return call_(obj_, a...); }

 private:
  const void* obj_;
  R (*call_)(const void*, Args...);
};

template <size_t K>
using RowFn = FnRef<void(std::array<char*, K>, int64_t, std::array<int64_t, K>)>;

// Runs body(t) for every t in [0, nt), each on its own thread of one parallel region; nt <= 1
// runs body(0) on the calling thread without opening a region.
void parallel_threads(int nt, FnRef<void(int)> body);

// Splits [0, n) into nt contiguous chunks and runs body(begin, end) for each on its own thread.
inline void parallel_chunks(int nt, int64_t n, FnRef<void(int64_t, int64_t)> body) {
  if (nt <= 1) return body(0, n);
  parallel_threads(nt, [&](int t) { body(n * t / nt, n * (t + 1) / nt); });
}

// Threads worth using for `work` elements: one per kParallelGrain, at most the pool's size.
inline int threads_for_work(int64_t work) {
  return int(std::max<int64_t>(1, std::min<int64_t>(lucid::num_threads(), work / kParallelGrain)));
}

// Runs rows [r0, r1) of the plan; `base` are the operands' element pointers (as char* with size).
template <size_t K>
void run_rows(const LoopPlan<K>& p, std::array<char*, K> base, const std::array<int64_t, K>& isz,
              int64_t r0, int64_t r1, RowFn<K> row);

// Calls row(ptrs, n, inner_strides) for every innermost row of `shape`, split over threads
// when large. Compiled once per operand count K (loops.cpp).
template <size_t K>
void strided_loop(const std::vector<int64_t>& shape,
                  const std::array<const std::vector<int64_t>*, K>& strides,
                  std::array<char*, K> base, std::array<int64_t, K> isz, RowFn<K> row);

// The same walk handing the body blocks of rows: body(ptrs, n, inner, m, outer) covers m rows of
// n elements, operand k's element (j, i) at ptrs[k] + (j outer[k] + i inner[k]) elements. Rows
// shorter than a vector (a chunk of a head dim, a broadcast mask row) then cost one call per
// block of the second-innermost dim instead of one per row. Compiled once per K (loops.cpp).
template <size_t K>
using BlockFn = FnRef<void(std::array<char*, K>, int64_t, std::array<int64_t, K>, int64_t, std::array<int64_t, K>)>;
template <size_t K>
void strided_blocks(const std::vector<int64_t>& shape,
                    const std::array<const std::vector<int64_t>*, K>& strides,
                    std::array<char*, K> base, std::array<int64_t, K> isz, BlockFn<K> body);

#define LUCID_LOOPS_EXTERN(K)                                                                 \
  extern template void run_rows<K>(const LoopPlan<K>&, std::array<char*, K>,                  \
                                   const std::array<int64_t, K>&, int64_t, int64_t, RowFn<K>); \
  extern template void strided_loop<K>(const std::vector<int64_t>&,                           \
                                       const std::array<const std::vector<int64_t>*, K>&,     \
                                       std::array<char*, K>, std::array<int64_t, K>, RowFn<K>); \
  extern template void strided_blocks<K>(const std::vector<int64_t>&,                         \
                                         const std::array<const std::vector<int64_t>*, K>&,   \
                                         std::array<char*, K>, std::array<int64_t, K>, BlockFn<K>);
LUCID_LOOPS_EXTERN(1)
LUCID_LOOPS_EXTERN(2)
LUCID_LOOPS_EXTERN(3)
LUCID_LOOPS_EXTERN(4)
#undef LUCID_LOOPS_EXTERN

}  // namespace lucid::kernels
