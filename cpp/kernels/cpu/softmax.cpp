#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/loops.h"

namespace lucid::kernels {

namespace {

// One row of n elements at stride xs (the last-dim fast path when xs == 1).
template <class T>
void row_forward(const T* x, int64_t xs, T* y, int64_t n, bool log) {
  using A = acc_t<T>;
  // NOTE: a NaN is skipped by the max but then makes the sum NaN, so the whole row is NaN;
  // a row of all -inf gives (-inf) - (-inf) = NaN, as PyTorch.
  A m = -std::numeric_limits<A>::infinity();
  for (int64_t d = 0; d < n; ++d) {
    A v = A(x[d * xs]);
    m = v > m ? v : m;
  }
  A s = 0;
  for (int64_t d = 0; d < n; ++d) {
    A e = std::exp(A(x[d * xs]) - m);
    if constexpr (std::is_same_v<T, A>)
      if (!log) y[d] = e;  // kept unnormalised; rescaled below without a second exp
    s += e;
  }
  if (log) {
    const A lse = m + std::log(s);
    for (int64_t d = 0; d < n; ++d) y[d] = T(A(x[d * xs]) - lse);
  } else {
    const A inv = A(1) / s;
    for (int64_t d = 0; d < n; ++d) {
      if constexpr (std::is_same_v<T, A>) y[d] = y[d] * inv;
      else y[d] = T(std::exp(A(x[d * xs]) - m) * inv);  // half storage: recompute, don't re-read rounded
    }
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
      for (int64_t o = o0; o < o1; ++o) row_forward(x + o * g.xs_outer, g.xs_n, y + o * g.n, g.n, log);
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
        A s = 0;
        if (log) {
          for (int64_t d = 0; d < n; ++d) s += A(gr[d]);
          for (int64_t d = 0; d < n; ++d) xr[d] = T(A(gr[d]) - std::exp(A(yr[d])) * s);
        } else {
          for (int64_t d = 0; d < n; ++d) s += A(gr[d]) * A(yr[d]);
          for (int64_t d = 0; d < n; ++d) xr[d] = T(A(yr[d]) * (A(gr[d]) - s));
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

#define LUCID_SOFTMAX_INSTANTIATE(T)                                                   \
  template void softmax_forward<T>(const T*, T*, const SoftmaxGeom&, bool);          \
  template void softmax_backward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t, bool);
LUCID_SOFTMAX_INSTANTIATE(Half)
LUCID_SOFTMAX_INSTANTIATE(BFloat16)
LUCID_SOFTMAX_INSTANTIATE(float)
LUCID_SOFTMAX_INSTANTIATE(double)
#undef LUCID_SOFTMAX_INSTANTIATE

}  // namespace lucid::kernels
