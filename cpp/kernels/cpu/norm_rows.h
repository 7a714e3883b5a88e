// Row-kernel toolkit of the norm family (kernels/cpu/norm*.cpp): run-time ISA dispatch (a body
// compiled for baseline x86-64 and for AVX2+FMA), chunked OpenMP loops whose partial sums belong
// to chunks (reproducible), lane-split reductions the compiler vectorises without reassociating,
// and row writes with optional streaming stores. Everything is internal to the including file.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/dtype.h"
#include "core/threads.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"

namespace lucid::kernels {
namespace {

// ---- ISA dispatch -------------------------------------------------------------------------
// Each row body below is compiled for baseline x86-64 and for AVX2+FMA (run_best, see
// cpu_features.h); elsewhere only the baseline copy exists.

// ---- threading ----------------------------------------------------------------------------
constexpr int64_t kSerialWork = int64_t(1) << 16;  // elements: below this a parallel region costs more than it saves
constexpr int64_t kChunkWork = int64_t(1) << 15;   // elements per chunk, at least
constexpr int64_t kMaxChunks = 32;                 // bounds the d_gamma scratch to 32 rows

// Chunks are handed out dynamically: on a shared machine a descheduled thread's chunks go to
// the others instead of stalling the whole op. Results stay reproducible because partial sums
// belong to chunks (fixed by the shape), not to threads.
template <class F>
void for_chunks(int64_t chunks, F&& f) {
  if (chunks <= 1) {
    f(int64_t(0));
    return;
  }
  std::atomic<int64_t> next{0};
  parallel_threads(int(std::min<int64_t>(lucid::num_threads(), chunks)), [&](int) {
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) f(c);
  });
}
inline int64_t chunk_begin(int64_t c, int64_t chunks, int64_t rows) { return rows * c / chunks; }

// out[j] = sum over chunks c (in ascending order) of partial[c * n + j].
template <class A>
void combine_chunks(const A* partial, A* out, int64_t chunks, int64_t n) {
  auto col = [&](int64_t j0, int64_t j1) {
    for (int64_t j = j0; j < j1; ++j) out[j] = partial[j];
    for (int64_t c = 1; c < chunks; ++c) {
      const A* p = partial + c * n;
      for (int64_t j = j0; j < j1; ++j) out[j] += p[j];
    }
  };
  if (n * chunks < kSerialWork) return col(0, n);
  const int nt = lucid::num_threads();
  parallel_threads(nt, [&](int t) { col(n * t / nt, n * (t + 1) / nt); });
}

// ---- row primitives -----------------------------------------------------------------------
// Reductions keep kLanes independent partial sums (4 AVX registers of float) so the
// compiler can vectorise them without reassociating anything itself; the lanes are added in
// a fixed order, so the result does not depend on the ISA's vector width.
constexpr int kLanes = 32;

template <class A>
LUCID_ALWAYS_INLINE A sum_lanes(const A* acc) {
  A s = 0;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

// Lanes are folded into a double total every kFold elements, so long float rows (millions of
// features) keep ~double accuracy: float lanes alone would lose digits as they grow.
constexpr int64_t kFold = int64_t(kLanes) * 64;

// sum_j f(j) for j in [0, n), f returning A.
template <class A, class F>
LUCID_ALWAYS_INLINE A reduce_row(int64_t n, F f) {
  double total = 0;
  int64_t j = 0;
  while (j < n) {
    const int64_t end = std::min(n, j + kFold);
    A acc[kLanes] = {};
    for (; j + kLanes <= end; j += kLanes)
      for (int l = 0; l < kLanes; ++l) acc[l] += f(j + l);
    for (int l = 0; j < end; ++j, ++l) acc[l] += f(j);
    total += double(sum_lanes(acc));
  }
  return A(total);
}

// Two sums in one pass over the row.
template <class A, class F>
LUCID_ALWAYS_INLINE void reduce_row2(int64_t n, F f, A& s0, A& s1) {
  double t0 = 0, t1 = 0;
  int64_t j = 0;
  while (j < n) {
    const int64_t end = std::min(n, j + kFold);
    A a0[kLanes] = {}, a1[kLanes] = {};
    for (; j + kLanes <= end; j += kLanes)
      for (int l = 0; l < kLanes; ++l) f(j + l, a0[l], a1[l]);
    for (int l = 0; j < end; ++j, ++l) f(j, a0[l], a1[l]);
    t0 += double(sum_lanes(a0));
    t1 += double(sum_lanes(a1));
  }
  s0 = A(t0);
  s1 = A(t1);
}

template <class T, bool HasGain>
LUCID_ALWAYS_INLINE acc_t<T> gain(const T* g, int64_t j) {
  if constexpr (HasGain) return acc_t<T>(g[j]);
  else return acc_t<T>(1);
}

// Large outputs are written with non-temporal (streaming) stores: a normal store first reads
// the destination line into cache (read-for-ownership), so writing y would cost a third memory
// stream on top of reading x and writing y. Only worth it when the output is far larger than
// the cache (the next op would not find it there anyway); float and double only.
constexpr int64_t kStreamBytes = int64_t(16) << 20;
template <class T>
bool use_stream(int64_t n) {
  return (std::is_same_v<T, float> || std::is_same_v<T, double>) && n * int64_t(sizeof(T)) >= kStreamBytes;
}

// dst[j] = T(f(j)) for j in [0, n). Streaming computes blocks into an L1-resident buffer with
// the plain (vectorised) loop, then copies each block out with 16-byte streaming stores.
template <class T, class F>
LUCID_ALWAYS_INLINE void write_row(T* dst, int64_t n, bool stream, F f) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (stream) {
      constexpr int64_t V = int64_t(16 / sizeof(T));  // elements per 16-byte store
      constexpr int64_t B = 1024 / int64_t(sizeof(T));
      int64_t j = 0;
      for (; j < n && (reinterpret_cast<uintptr_t>(dst + j) & 15); ++j) dst[j] = T(f(j));
      alignas(64) T tmp[B];
      while (j + V <= n) {
        const int64_t m = std::min(B, (n - j) / V * V);
        for (int64_t l = 0; l < m; ++l) tmp[l] = T(f(j + l));
        for (int64_t l = 0; l < m; l += V) {
          if constexpr (std::is_same_v<T, float>) _mm_stream_ps(dst + j + l, _mm_load_ps(tmp + l));
          else _mm_stream_pd(dst + j + l, _mm_load_pd(tmp + l));
        }
        j += m;
      }
      for (; j < n; ++j) dst[j] = T(f(j));
      return;
    }
  }
#endif
  (void)stream;
  for (int64_t j = 0; j < n; ++j) dst[j] = T(f(j));
}

// Streaming stores are weakly ordered: fence before another thread may read the output.
inline void stream_fence(bool stream) {
#if defined(__SSE2__)
  if (stream) _mm_sfence();
#else
  (void)stream;
#endif
}

}  // namespace
}  // namespace lucid::kernels
