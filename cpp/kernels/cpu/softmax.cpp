// NOTE: GCC if-converts the float compares / selects of exp_vec (and so vectorises the row loops)
// only when it may assume FP operations do not trap; nothing here reads FP exception flags.
// clang assumes this by default.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"

namespace lucid::kernels {

// The float row primitives are compiled for AVX2 and for baseline x86-64; the loader picks one
// (cpu_features.h).

namespace {

// `omp simd` only vectorises (no threads): it lets the compiler reorder the sums. Short rows take
// plain loops with libm's exp instead: GCC's simd reductions go through a stack lane array whose
// narrow stores and wide reloads stall store forwarding, and one scalar exp_vec is a long chain
// of dependent operations; either costs more than a whole 2-class row.
constexpr int64_t kSimdMin = 32;

template <class A>
LUCID_ALWAYS_INLINE A max_impl(const A* x, int64_t n) {
  A m = -std::numeric_limits<A>::infinity();
  if (n < kSimdMin) {
    for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
  }
#pragma omp simd reduction(max : m)
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// sum_i exp(x[i] - m), optionally storing each term in e.
template <class A, bool Store>
LUCID_ALWAYS_INLINE A sum_exp_impl(const A* x, int64_t n, A m, A* e) {
  A s = 0;
  if (n < kSimdMin) {
    for (int64_t i = 0; i < n; ++i) {
      const A v = std::exp(x[i] - m);
      if constexpr (Store) e[i] = v;
      s += v;
    }
    return s;
  }
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) {
    const A v = exp_acc(x[i] - m);
    if constexpr (Store) e[i] = v;
    s += v;
  }
  return s;
}

// sum_i a[i] * (b ? b[i] : 1)
template <class A>
LUCID_ALWAYS_INLINE A dot_impl(const A* a, const A* b, int64_t n) {
  A s = 0;
  if (n < kSimdMin) {
    for (int64_t i = 0; i < n; ++i) s += b ? a[i] * b[i] : a[i];
    return s;
  }
  if (b) {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  } else {
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += a[i];
  }
  return s;
}

template <class A>
LUCID_ALWAYS_INLINE A lse_impl(const A* x, int64_t n) {
  const A m = max_impl(x, n);
  return m + std::log(sum_exp_impl<A, false>(x, n, m, nullptr));
}

template <class A>
LUCID_ALWAYS_INLINE void scaled_exp_impl(const A* x, int64_t n, A shift, A scale, A* out) {
  if (n < kSimdMin) {
    for (int64_t i = 0; i < n; ++i) out[i] = scale * std::exp(x[i] - shift);
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = scale * exp_acc(x[i] - shift);
}

template <class A>
LUCID_ALWAYS_INLINE void softmax_row_impl(const A* x, A* y, int64_t n, bool log) {
  // NOTE: a NaN may be skipped by the max but then makes the sum NaN, so the whole row is NaN;
  // a row of all -inf gives (-inf) - (-inf) = NaN, as PyTorch.
  const A m = max_impl(x, n);
  if (log) {
    const A lse = m + std::log(sum_exp_impl<A, false>(x, n, m, nullptr));
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - lse;
  } else {
    // The terms are kept unnormalised in y and rescaled without a second exp.
    const A inv = A(1) / sum_exp_impl<A, true>(x, n, m, y);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <class A>
LUCID_ALWAYS_INLINE void softmax_row_backward_impl(const A* y, const A* g, A* gx, int64_t n, bool log) {
  if (log) {
    const A s = dot_impl<A>(g, nullptr, n);
    if (n < kSimdMin) {
      for (int64_t i = 0; i < n; ++i) gx[i] = g[i] - std::exp(y[i]) * s;
      return;
    }
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) gx[i] = g[i] - exp_acc(y[i]) * s;
  } else {
    const A s = dot_impl(g, y, n);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) gx[i] = y[i] * (g[i] - s);
  }
}

// One row of softmax_double_backward (formulas in softmax.h).
template <class A>
LUCID_ALWAYS_INLINE void softmax_row_double_impl(const A* y, const A* g, const A* u, A* dg, A* dy, int64_t n,
                                              bool log) {
  A s1 = 0, s2 = 0;
  if (log) {
#pragma omp simd reduction(+ : s1, s2)
    for (int64_t i = 0; i < n; ++i) {
      s1 += g[i];
      s2 += u[i] * exp_acc(y[i]);
    }
    if (dg) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) dg[i] = u[i] - s2;
    }
    if (dy) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) dy[i] = -u[i] * exp_acc(y[i]) * s1;
    }
  } else {
#pragma omp simd reduction(+ : s1, s2)
    for (int64_t i = 0; i < n; ++i) {
      s1 += g[i] * y[i];
      s2 += u[i] * y[i];
    }
    if (dg) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) dg[i] = y[i] * (u[i] - s2);
    }
    if (dy) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) dy[i] = u[i] * (g[i] - s1) - g[i] * s2;
    }
  }
}

template <class A>
LUCID_ALWAYS_INLINE A exp_dot_impl(const A* x, const A* u, int64_t n, A shift) {
  A s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += u[i] * exp_acc(x[i] - shift);
  return s;
}

template <class A>
LUCID_ALWAYS_INLINE void exp_mul_impl(const A* x, const A* u, int64_t n, A shift, A scale, A sub, A* out) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = scale * exp_acc(x[i] - shift) * (u[i] - sub);
}

}  // namespace

LUCID_CLONES_AVX2 float logsumexp_row(const float* x, int64_t n) { return lse_impl(x, n); }
double logsumexp_row(const double* x, int64_t n) { return lse_impl(x, n); }
LUCID_CLONES_AVX2 void scaled_exp_row(const float* x, int64_t n, float shift, float scale, float* out) {
  scaled_exp_impl(x, n, shift, scale, out);
}
void scaled_exp_row(const double* x, int64_t n, double shift, double scale, double* out) {
  scaled_exp_impl(x, n, shift, scale, out);
}
LUCID_CLONES_AVX512 void softmax_row(const float* x, float* y, int64_t n, bool log) { softmax_row_impl(x, y, n, log); }
void softmax_row(const double* x, double* y, int64_t n, bool log) { softmax_row_impl(x, y, n, log); }
LUCID_CLONES_AVX512 void softmax_row_backward(const float* y, const float* gy, float* gx, int64_t n, bool log) {
  softmax_row_backward_impl(y, gy, gx, n, log);
}
void softmax_row_backward(const double* y, const double* gy, double* gx, int64_t n, bool log) {
  softmax_row_backward_impl(y, gy, gx, n, log);
}

LUCID_CLONES_AVX2 void softmax_row_double_backward(const float* y, const float* g, const float* u, float* dg,
                                                  float* dy, int64_t n, bool log) {
  softmax_row_double_impl(y, g, u, dg, dy, n, log);
}
void softmax_row_double_backward(const double* y, const double* g, const double* u, double* dg, double* dy,
                                 int64_t n, bool log) {
  softmax_row_double_impl(y, g, u, dg, dy, n, log);
}
LUCID_CLONES_AVX2 float exp_dot_row(const float* x, const float* u, int64_t n, float shift) {
  return exp_dot_impl(x, u, n, shift);
}
double exp_dot_row(const double* x, const double* u, int64_t n, double shift) { return exp_dot_impl(x, u, n, shift); }
LUCID_CLONES_AVX2 void exp_mul_row(const float* x, const float* u, int64_t n, float shift, float scale, float sub,
                                  float* out) {
  exp_mul_impl(x, u, n, shift, scale, sub, out);
}
void exp_mul_row(const double* x, const double* u, int64_t n, double shift, double scale, double sub, double* out) {
  exp_mul_impl(x, u, n, shift, scale, sub, out);
}

namespace {

template <class T>
constexpr bool kNative = std::is_same_v<T, float> || std::is_same_v<T, double>;

// One row of n elements at stride xs, for half storage or strided rows (the contiguous float
// and double rows take softmax_row).
template <class T>
void row_forward(const T* x, int64_t xs, T* y, int64_t n, bool log) {
  using A = acc_t<T>;
  A m = -std::numeric_limits<A>::infinity();
  for (int64_t d = 0; d < n; ++d) {
    A v = A(x[d * xs]);
    m = v > m ? v : m;
  }
  A s = 0;
  for (int64_t d = 0; d < n; ++d) s += std::exp(A(x[d * xs]) - m);
  if (log) {
    const A lse = m + std::log(s);
    for (int64_t d = 0; d < n; ++d) y[d] = T(A(x[d * xs]) - lse);
  } else {
    const A inv = A(1) / s;  // NOTE: recomputes exp rather than re-reading a rounded half value
    for (int64_t d = 0; d < n; ++d) y[d] = T(std::exp(A(x[d * xs]) - m) * inv);
  }
}

// One (outer, inner-chunk) block when the softmax dim is not innermost: the inner positions are
// independent rows, walked together so every read is along the inner stride.
template <class T>
void block_forward(const T* x, const SoftmaxGeom& g, T* y, int64_t i0, int64_t i1, bool log,
                   std::vector<acc_t<T>>& mx, std::vector<acc_t<T>>& sm) {
  using A = acc_t<T>;
  const int64_t w = i1 - i0;
  mx.assign(size_t(w), -std::numeric_limits<A>::infinity());
  sm.assign(size_t(w), A(0));
  for (int64_t d = 0; d < g.n; ++d) {
    const T* xr = x + d * g.xs_n + i0 * g.xs_inner;
    for (int64_t i = 0; i < w; ++i) {
      A v = A(xr[i * g.xs_inner]);
      mx[i] = v > mx[i] ? v : mx[i];
    }
  }
  for (int64_t d = 0; d < g.n; ++d) {
    const T* xr = x + d * g.xs_n + i0 * g.xs_inner;
    for (int64_t i = 0; i < w; ++i) sm[i] += std::exp(A(xr[i * g.xs_inner]) - mx[i]);
  }
  for (int64_t i = 0; i < w; ++i) sm[i] = log ? mx[i] + std::log(sm[i]) : A(1) / sm[i];
  for (int64_t d = 0; d < g.n; ++d) {
    const T* xr = x + d * g.xs_n + i0 * g.xs_inner;
    T* yr = y + d * g.inner + i0;
    for (int64_t i = 0; i < w; ++i) {
      A v = A(xr[i * g.xs_inner]);
      yr[i] = T(log ? v - sm[i] : std::exp(v - mx[i]) * sm[i]);
    }
  }
}

template <class T>
void block_backward(const T* y, const T* gy, T* gx, int64_t n, int64_t inner, int64_t i0, int64_t i1,
                    bool log, std::vector<acc_t<T>>& acc) {
  using A = acc_t<T>;
  const int64_t w = i1 - i0;
  acc.assign(size_t(w), A(0));
  for (int64_t d = 0; d < n; ++d) {
    const int64_t o = d * inner + i0;
    for (int64_t i = 0; i < w; ++i) acc[i] += log ? A(gy[o + i]) : A(gy[o + i]) * A(y[o + i]);
  }
  for (int64_t d = 0; d < n; ++d) {
    const int64_t o = d * inner + i0;
    for (int64_t i = 0; i < w; ++i) {
      A yv = A(y[o + i]), gv = A(gy[o + i]);
      gx[o + i] = T(log ? gv - std::exp(yv) * acc[i] : yv * (gv - acc[i]));
    }
  }
}

constexpr int64_t kInnerChunk = 512;  // inner positions per work item (bounds the row buffers)

}  // namespace

template <class T>
void softmax_forward(const T* x, T* y, const SoftmaxGeom& g, bool log) {
  if (g.outer * g.n * g.inner == 0) return;
  if (g.inner == 1) {
    for_items(g.outer, g.n, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        if constexpr (kNative<T>) {
          if (g.xs_n == 1) {
            softmax_row(x + o * g.xs_outer, y + o * g.n, g.n, log);
            continue;
          }
        }
        row_forward(x + o * g.xs_outer, g.xs_n, y + o * g.n, g.n, log);
      }
    });
    return;
  }
  const int64_t chunks = (g.inner + kInnerChunk - 1) / kInnerChunk;
  for_items(g.outer * chunks, g.n * std::min(g.inner, kInnerChunk), [&](int64_t b0, int64_t b1) {
    std::vector<acc_t<T>> mx, sm;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t o = b / chunks, i0 = (b % chunks) * kInnerChunk;
      block_forward(x + o * g.xs_outer, g, y + o * g.n * g.inner, i0, std::min(g.inner, i0 + kInnerChunk), log,
                    mx, sm);
    }
  });
}

template <class T>
void softmax_backward(const T* y, const T* gy, T* gx, int64_t outer, int64_t n, int64_t inner, bool log) {
  using A = acc_t<T>;
  if (outer * n * inner == 0) return;
  if (inner == 1) {
    for_items(outer, n, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        const T *yr = y + o * n, *gr = gy + o * n;
        T* xr = gx + o * n;
        if constexpr (kNative<T>) {
          softmax_row_backward(yr, gr, xr, n, log);
        } else {
          A s = 0;
          if (log) {
            for (int64_t d = 0; d < n; ++d) s += A(gr[d]);
            for (int64_t d = 0; d < n; ++d) xr[d] = T(A(gr[d]) - std::exp(A(yr[d])) * s);
          } else {
            for (int64_t d = 0; d < n; ++d) s += A(gr[d]) * A(yr[d]);
            for (int64_t d = 0; d < n; ++d) xr[d] = T(A(yr[d]) * (A(gr[d]) - s));
          }
        }
      }
    });
    return;
  }
  const int64_t chunks = (inner + kInnerChunk - 1) / kInnerChunk;
  for_items(outer * chunks, n * std::min(inner, kInnerChunk), [&](int64_t b0, int64_t b1) {
    std::vector<A> acc;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t o = b / chunks, i0 = (b % chunks) * kInnerChunk, off = o * n * inner;
      block_backward(y + off, gy + off, gx + off, n, inner, i0, std::min(inner, i0 + kInnerChunk), log, acc);
    }
  });
}

namespace {

// One outer slice of softmax_double_backward: the two sums per (outer, inner) position
// accumulate over n in inner-long rows (contiguous reads for any inner), then the outputs.
template <class T, bool Log>
void double_backward_slice(const T* y, const T* g, const T* u, T* d_g, T* d_y, int64_t n, int64_t inner,
                           acc_t<T>* s1, acc_t<T>* s2) {
  using A = acc_t<T>;
  std::fill(s1, s1 + inner, A(0));
  std::fill(s2, s2 + inner, A(0));
  for (int64_t d = 0; d < n; ++d)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = d * inner + i;
      if constexpr (Log) {
        s1[i] += A(g[k]);                        // sum(g)
        s2[i] += A(u[k]) * exp_acc(A(y[k]));     // sum(u p)
      } else {
        s1[i] += A(g[k]) * A(y[k]);              // sum(g y)
        s2[i] += A(u[k]) * A(y[k]);              // sum(u y)
      }
    }
  for (int64_t d = 0; d < n; ++d)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = d * inner + i;
      const A yv = A(y[k]), gv = A(g[k]), uv = A(u[k]);
      if constexpr (Log) {
        const A pv = exp_acc(yv);
        if (d_g) d_g[k] = T(uv - s2[i]);
        if (d_y) d_y[k] = T(-uv * pv * s1[i]);
      } else {
        if (d_g) d_g[k] = T(yv * (uv - s2[i]));
        if (d_y) d_y[k] = T(uv * (gv - s1[i]) - gv * s2[i]);
      }
    }
}

}  // namespace

template <class T>
void softmax_double_backward(const T* y, const T* g, const T* u, T* d_g, T* d_y, int64_t outer, int64_t n,
                             int64_t inner, bool log) {
  using A = acc_t<T>;
  if (outer * n * inner == 0) return;
  for_items(outer, n * inner, [&](int64_t o0, int64_t o1) {
    std::vector<A> sums(static_cast<size_t>(2 * inner));
    for (int64_t o = o0; o < o1; ++o) {
      const int64_t off = o * n * inner;
      T* dg = d_g ? d_g + off : nullptr;
      T* dy = d_y ? d_y + off : nullptr;
      if constexpr (kNative<T>) {
        if (inner == 1) {
          softmax_row_double_backward(y + off, g + off, u + off, dg, dy, n, log);
          continue;
        }
      }
      if (log) double_backward_slice<T, true>(y + off, g + off, u + off, dg, dy, n, inner, sums.data(), sums.data() + inner);
      else double_backward_slice<T, false>(y + off, g + off, u + off, dg, dy, n, inner, sums.data(), sums.data() + inner);
    }
  });
}

#define LUCID_SOFTMAX_INSTANTIATE(T)                                                   \
  template void softmax_forward<T>(const T*, T*, const SoftmaxGeom&, bool);          \
  template void softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, bool);        \
  template void softmax_double_backward<T>(const T*, const T*, const T*, T*, T*, int64_t, int64_t, int64_t, bool);
LUCID_SOFTMAX_INSTANTIATE(Half)
LUCID_SOFTMAX_INSTANTIATE(BFloat16)
LUCID_SOFTMAX_INSTANTIATE(float)
LUCID_SOFTMAX_INSTANTIATE(double)
#undef LUCID_SOFTMAX_INSTANTIATE

}  // namespace lucid::kernels
