#include "kernels/cpu/norm.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lucid::kernels {

namespace {

#define LUCID_INLINE inline __attribute__((always_inline))

// ---- ISA dispatch -------------------------------------------------------------------------
// The package is built for baseline x86-64. Each row body below is compiled twice, once as is
// and once inside a target("avx2,fma") wrapper (the always_inline body takes the wrapper's
// ISA), and the wrapper is picked at run time. Elsewhere only the baseline copy exists.
#if defined(__x86_64__) || defined(__i386__)
bool has_avx2_fma() {
  static const bool v = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return v;
}
template <class Body, class... Args>
__attribute__((target("avx2,fma"))) void run_avx2(Args... a) {
  Body::run(a...);
}
#endif
template <class Body, class... Args>
void run_base(Args... a) {
  Body::run(a...);
}
template <class Body, class... Args>
void run_best(Args... a) {
#if defined(__x86_64__) || defined(__i386__)
  if (has_avx2_fma()) return run_avx2<Body>(a...);
#endif
  run_base<Body>(a...);
}

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
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) f(c);
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
  const int nt = omp_get_max_threads();
#pragma omp parallel for schedule(static)
  for (int t = 0; t < nt; ++t) col(n * t / nt, n * (t + 1) / nt);
}

// ---- row primitives -----------------------------------------------------------------------
// Reductions keep kLanes independent partial sums (4 AVX registers of float) so the
// compiler can vectorise them without reassociating anything itself; the lanes are added in
// a fixed order, so the result does not depend on the ISA's vector width.
constexpr int kLanes = 32;

template <class A>
LUCID_INLINE A sum_lanes(const A* acc) {
  A s = 0;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

// Lanes are folded into a double total every kFold elements, so long float rows (millions of
// features) keep ~double accuracy: float lanes alone would lose digits as they grow.
constexpr int64_t kFold = int64_t(kLanes) * 64;

// sum_j f(j) for j in [0, n), f returning A.
template <class A, class F>
LUCID_INLINE A reduce_row(int64_t n, F f) {
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
LUCID_INLINE void reduce_row2(int64_t n, F f, A& s0, A& s1) {
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
LUCID_INLINE acc_t<T> gain(const T* g, int64_t j) {
  if constexpr (HasGain) return acc_t<T>(g[j]);
  else return acc_t<T>(1);
}

// Large outputs are written with non-temporal (streaming) stores: a normal store first reads
// the destination line into cache (read-for-ownership), so writing y would cost a third memory
// stream on top of reading x and writing y. Only worth it when the output is far larger than
// the cache (the next op would not find it there anyway); float and double only.
#ifndef LUCID_NORM_STREAM_BYTES  // a compile-time knob for benchmarking the two store kinds
#define LUCID_NORM_STREAM_BYTES (int64_t(16) << 20)
#endif
constexpr int64_t kStreamBytes = LUCID_NORM_STREAM_BYTES;
template <class T>
bool use_stream(int64_t n) {
  return (std::is_same_v<T, float> || std::is_same_v<T, double>) && n * int64_t(sizeof(T)) >= kStreamBytes;
}

// dst[j] = T(f(j)) for j in [0, n). Streaming computes blocks into an L1-resident buffer with
// the plain (vectorised) loop, then copies each block out with 16-byte streaming stores.
template <class T, class F>
LUCID_INLINE void write_row(T* dst, int64_t n, bool stream, F f) {
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

// ---- RMSNorm ------------------------------------------------------------------------------
template <class T, bool HasGain>
struct RmsForwardRows {
  using A = acc_t<T>;
  LUCID_INLINE static void run(const T* x, const T* gamma, T* y, A* rstd, int64_t r0, int64_t r1, int64_t N,
                               int64_t k, A eps, bool stream) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      T* yr = y + i * N;
      const A ss = reduce_row<A>(k, [xr](int64_t j) { A v = A(xr[j]); return v * v; });
      const A r = A(1) / std::sqrt(ss / A(k) + eps);
      rstd[i] = r;
      write_row(yr, N, stream, [=](int64_t j) { return A(xr[j]) * r * gain<T, HasGain>(gamma, j); });
    }
    stream_fence(stream);
  }
};

// d_x_j = rstd * gy_j - [j < k] * x_j * rstd^3 / k * sum_i gy_i x_i,   gy = grad_out * gamma
// d_gamma_j += grad_out_j * x_j * rstd   (into this chunk's partial row `dg`)
template <class T, bool HasGain>
struct RmsBackwardRows {
  using A = acc_t<T>;
  LUCID_INLINE static void run(const T* x, const T* gamma, const T* go, const A* rstd, T* dx, A* dg, int64_t r0,
                               int64_t r1, int64_t N, int64_t k, bool stream) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      const T* gr = go + i * N;
      const A r = rstd[i];
      if (dx) {
        T* dr = dx + i * N;
        const A dot = reduce_row<A>(N, [=](int64_t j) { return A(gr[j]) * gain<T, HasGain>(gamma, j) * A(xr[j]); });
        const A c = r * r * r * dot / A(k);
        if (k == N) {
          write_row(dr, N, stream, [=](int64_t j) { return r * (A(gr[j]) * gain<T, HasGain>(gamma, j)) - A(xr[j]) * c; });
        } else {
          for (int64_t j = 0; j < k; ++j) dr[j] = T(r * (A(gr[j]) * gain<T, HasGain>(gamma, j)) - A(xr[j]) * c);
          for (int64_t j = k; j < N; ++j) dr[j] = T(r * (A(gr[j]) * gain<T, HasGain>(gamma, j)));
        }
      }
      if (dg)
        for (int64_t j = 0; j < N; ++j) dg[j] += A(gr[j]) * A(xr[j]) * r;
    }
    stream_fence(stream);
  }
};

// ---- LayerNorm ----------------------------------------------------------------------------
template <class T, bool HasW, bool HasB>
struct LnForwardRows {
  using A = acc_t<T>;
  LUCID_INLINE static void run(const T* x, const T* w, const T* b, T* y, A* mean, A* rstd, int64_t r0,
                               int64_t r1, int64_t N, A eps) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      T* yr = y + i * N;
      // NOTE: two passes (mean, then squared deviations) instead of E[x^2] - E[x]^2, which
      // cancels catastrophically when |mean| >> std; the row is in cache for the second.
      const A m = reduce_row<A>(N, [xr](int64_t j) { return A(xr[j]); }) / A(N);
      const A var = reduce_row<A>(N, [xr, m](int64_t j) { A d = A(xr[j]) - m; return d * d; }) / A(N);
      const A r = A(1) / std::sqrt(var + eps);
      mean[i] = m;
      rstd[i] = r;
      for (int64_t j = 0; j < N; ++j) {
        A v = (A(xr[j]) - m) * r * gain<T, HasW>(w, j);
        if constexpr (HasB) v += A(b[j]);
        yr[j] = T(v);
      }
    }
  }
};

// xhat = (x - mean) * rstd, gy = grad_out * w:
// d_x_j = rstd * (gy_j - mean(gy) - xhat_j * mean(gy * xhat)); d_w_j += grad_out_j xhat_j; d_b_j += grad_out_j
template <class T, bool HasW>
struct LnBackwardRows {
  using A = acc_t<T>;
  LUCID_INLINE static void run(const T* x, const T* w, const T* go, const A* mean, const A* rstd, T* dx, A* dw,
                               A* db, int64_t r0, int64_t r1, int64_t N) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * N;
      const T* gr = go + i * N;
      const A m = mean[i], r = rstd[i];
      if (dx) {
        T* dr = dx + i * N;
        A sg, sgx;
        reduce_row2<A>(N, [=](int64_t j, A& a0, A& a1) {
          const A gy = A(gr[j]) * gain<T, HasW>(w, j);
          a0 += gy;
          a1 += gy * (A(xr[j]) - m) * r;
        }, sg, sgx);
        const A mg = sg / A(N), mgx = sgx / A(N);
        for (int64_t j = 0; j < N; ++j) {
          const A xh = (A(xr[j]) - m) * r;
          dr[j] = T(r * (A(gr[j]) * gain<T, HasW>(w, j) - mg - xh * mgx));
        }
      }
      if (dw)
        for (int64_t j = 0; j < N; ++j) dw[j] += A(gr[j]) * (A(xr[j]) - m) * r;
      if (db)
        for (int64_t j = 0; j < N; ++j) db[j] += A(gr[j]);
    }
  }
};

// ---- GroupRMSNorm -------------------------------------------------------------------------
// Channels are visited in order and scattered into per-group sums: any assignment of
// channels to groups works, and each group's sum is taken in channel order (deterministic).
template <class T, bool HasGain>
struct GroupForwardRows {
  using A = acc_t<T>;
  LUCID_INLINE static void run(const T* x, const int64_t* grp, const int64_t* cnt, const T* gamma, T* y, A* rstd,
                               int64_t r0, int64_t r1, int64_t C, int64_t S, int64_t G, A eps) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * C * S;
      T* yr = y + i * C * S;
      A* rr = rstd + i * G;  // accumulates the sums of squares, then becomes rstd
      std::fill(rr, rr + G, A(0));
      for (int64_t c = 0; c < C; ++c) {
        const T* xc = xr + c * S;
        A ss = 0;
        for (int64_t s = 0; s < S; ++s) ss += A(xc[s]) * A(xc[s]);
        rr[grp[c]] += ss;
      }
      for (int64_t g = 0; g < G; ++g) rr[g] = A(1) / std::sqrt(rr[g] / A(cnt[g] * S) + eps);
      for (int64_t c = 0; c < C; ++c) {
        const A scale = rr[grp[c]] * gain<T, HasGain>(gamma, grp[c]);
        for (int64_t s = 0; s < S; ++s) yr[c * S + s] = T(A(xr[c * S + s]) * scale);
      }
    }
  }
};

// Per group g of n_g channels (m_g = n_g S values):
//   d_x = rstd_g gy - x rstd_g^3 / m_g * sum_{values of g} gy x.
// `dot` is a G-long scratch row of this chunk; `dg` its partial d_gamma row.
template <class T, bool HasGain>
struct GroupBackwardRows {
  using A = acc_t<T>;
  LUCID_INLINE static void run(const T* x, const int64_t* grp, const int64_t* cnt, const T* gamma, const T* go,
                               const A* rstd, T* dx, A* dot, A* dg, int64_t r0, int64_t r1, int64_t C, int64_t S,
                               int64_t G) {
    for (int64_t i = r0; i < r1; ++i) {
      const T* xr = x + i * C * S;
      const T* gr = go + i * C * S;
      const A* rr = rstd + i * G;
      if (dx) {
        T* dr = dx + i * C * S;
        std::fill(dot, dot + G, A(0));
        for (int64_t c = 0; c < C; ++c) {
          A d = 0;
          for (int64_t s = 0; s < S; ++s) d += A(gr[c * S + s]) * A(xr[c * S + s]);
          dot[grp[c]] += gain<T, HasGain>(gamma, grp[c]) * d;
        }
        for (int64_t g = 0; g < G; ++g) dot[g] *= rr[g] * rr[g] * rr[g] / A(cnt[g] * S);
        for (int64_t c = 0; c < C; ++c) {
          const int64_t g = grp[c];
          const A k = rr[g] * gain<T, HasGain>(gamma, g);
          for (int64_t s = 0; s < S; ++s) dr[c * S + s] = T(k * A(gr[c * S + s]) - A(xr[c * S + s]) * dot[g]);
        }
      }
      if (dg)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t s = 0; s < S; ++s) dg[grp[c]] += A(gr[c * S + s]) * A(xr[c * S + s]) * rr[grp[c]];
    }
  }
};

}  // namespace

int64_t norm_chunks(int64_t rows, int64_t row_len) {
  const int64_t work = rows * row_len;
  if (work < kSerialWork) return 1;
  return std::clamp<int64_t>(work / kChunkWork, 1, std::min(rows, kMaxChunks));
}

template <class T>
void rms_norm_forward(const T* x, const T* gamma, T* y, acc_t<T>* rstd, int64_t rows, int64_t N, int64_t k,
                      acc_t<T> eps) {
  const int64_t P = norm_chunks(rows, N);
  const bool stream = use_stream<T>(rows * N);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    if (gamma) run_best<RmsForwardRows<T, true>>(x, gamma, y, rstd, r0, r1, N, k, eps, stream);
    else run_best<RmsForwardRows<T, false>>(x, gamma, y, rstd, r0, r1, N, k, eps, stream);
  });
}

template <class T>
void rms_norm_backward(const T* x, const T* gamma, const T* grad_out, const acc_t<T>* rstd, T* dx,
                       acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows, int64_t N, int64_t k) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, N);
  A* partial = d_gamma ? (P == 1 ? d_gamma : scratch) : nullptr;
  const bool stream = use_stream<T>(rows * N);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* dg = partial ? partial + c * N : nullptr;
    if (dg) std::fill(dg, dg + N, A(0));
    if (gamma) run_best<RmsBackwardRows<T, true>>(x, gamma, grad_out, rstd, dx, dg, r0, r1, N, k, stream);
    else run_best<RmsBackwardRows<T, false>>(x, gamma, grad_out, rstd, dx, dg, r0, r1, N, k, stream);
  });
  if (d_gamma && P > 1) combine_chunks(scratch, d_gamma, P, N);
}

template <class T>
void layer_norm_forward(const T* x, const T* w, const T* b, T* y, acc_t<T>* mean, acc_t<T>* rstd, int64_t rows,
                        int64_t N, acc_t<T> eps) {
  const int64_t P = norm_chunks(rows, N);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    if (w && b) run_best<LnForwardRows<T, true, true>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
    else if (w) run_best<LnForwardRows<T, true, false>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
    else if (b) run_best<LnForwardRows<T, false, true>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
    else run_best<LnForwardRows<T, false, false>>(x, w, b, y, mean, rstd, r0, r1, N, eps);
  });
}

template <class T>
void layer_norm_backward(const T* x, const T* w, const T* grad_out, const acc_t<T>* mean, const acc_t<T>* rstd,
                         T* dx, acc_t<T>* d_w, acc_t<T>* d_b, acc_t<T>* scratch, int64_t rows, int64_t N) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, N);
  A* pw = d_w ? (P == 1 ? d_w : scratch) : nullptr;
  A* pb = d_b ? (P == 1 ? d_b : scratch + (d_w ? P * N : 0)) : nullptr;
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* dw = pw ? pw + c * N : nullptr;
    A* db = pb ? pb + c * N : nullptr;
    if (dw) std::fill(dw, dw + N, A(0));
    if (db) std::fill(db, db + N, A(0));
    if (w) run_best<LnBackwardRows<T, true>>(x, w, grad_out, mean, rstd, dx, dw, db, r0, r1, N);
    else run_best<LnBackwardRows<T, false>>(x, w, grad_out, mean, rstd, dx, dw, db, r0, r1, N);
  });
  if (P > 1) {
    if (d_w) combine_chunks(pw, d_w, P, N);
    if (d_b) combine_chunks(pb, d_b, P, N);
  }
}

template <class T>
void group_rms_norm_forward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma, T* y,
                            acc_t<T>* rstd, int64_t rows, int64_t C, int64_t S, int64_t G, acc_t<T> eps) {
  const int64_t P = norm_chunks(rows, C * S);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    if (gamma) run_best<GroupForwardRows<T, true>>(x, groups, counts, gamma, y, rstd, r0, r1, C, S, G, eps);
    else run_best<GroupForwardRows<T, false>>(x, groups, counts, gamma, y, rstd, r0, r1, C, S, G, eps);
  });
}

template <class T>
void group_rms_norm_backward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma,
                             const T* grad_out, const acc_t<T>* rstd, T* dx, acc_t<T>* d_gamma, acc_t<T>* scratch,
                             int64_t rows, int64_t C, int64_t S, int64_t G) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, C * S);
  // scratch layout: P dot rows of G, then P partial d_gamma rows of G.
  A* partial = scratch + P * G;
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* dot = scratch + c * G;
    A* dg = d_gamma ? partial + c * G : nullptr;
    if (dg) std::fill(dg, dg + G, A(0));
    if (gamma) run_best<GroupBackwardRows<T, true>>(x, groups, counts, gamma, grad_out, rstd, dx, dot, dg, r0, r1, C, S, G);
    else run_best<GroupBackwardRows<T, false>>(x, groups, counts, gamma, grad_out, rstd, dx, dot, dg, r0, r1, C, S, G);
  });
  if (d_gamma) combine_chunks(partial, d_gamma, P, G);
}

#define LUCID_NORM_INSTANTIATE(T)                                                                             \
  template void rms_norm_forward<T>(const T*, const T*, T*, acc_t<T>*, int64_t, int64_t, int64_t, acc_t<T>); \
  template void rms_norm_backward<T>(const T*, const T*, const T*, const acc_t<T>*, T*, acc_t<T>*, acc_t<T>*, \
                                     int64_t, int64_t, int64_t);                                              \
  template void layer_norm_forward<T>(const T*, const T*, const T*, T*, acc_t<T>*, acc_t<T>*, int64_t,      \
                                      int64_t, acc_t<T>);                                                     \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const acc_t<T>*, T*,   \
                                       acc_t<T>*, acc_t<T>*, acc_t<T>*, int64_t, int64_t);                    \
  template void group_rms_norm_forward<T>(const T*, const int64_t*, const int64_t*, const T*, T*, acc_t<T>*, \
                                          int64_t, int64_t, int64_t, int64_t, acc_t<T>);                             \
  template void group_rms_norm_backward<T>(const T*, const int64_t*, const int64_t*, const T*, const T*,     \
                                           const acc_t<T>*, T*, acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t, int64_t);

LUCID_NORM_INSTANTIATE(Half)
LUCID_NORM_INSTANTIATE(BFloat16)
LUCID_NORM_INSTANTIATE(float)
LUCID_NORM_INSTANTIATE(double)

}  // namespace lucid::kernels
