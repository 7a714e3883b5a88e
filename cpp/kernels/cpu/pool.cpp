#include "kernels/cpu/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/threads.h"
#include "kernels/cpu/loops.h"

namespace lucid::kernels {

namespace {

// Threads for `planes` planes of `per_plane` element reads each (serial when small).
int threads_for(int64_t planes, int64_t per_plane) {
  const int64_t work = planes * std::max<int64_t>(per_plane, 1);
  return int(std::clamp<int64_t>(std::min<int64_t>(lucid::num_threads(), work / kParallelGrain), 1,
                                 std::max<int64_t>(planes, 1)));
}

template <class F>
void for_planes(const PoolGeom& g, int64_t per_plane, F f) {
  const int nt = threads_for(g.planes, per_plane);
  if (nt <= 1) {
    for (int64_t p = 0; p < g.planes; ++p) f(p);
    return;
  }
  parallel_threads(nt, [&](int t) {
    for (int64_t p = g.planes * t / nt; p < g.planes * (t + 1) / nt; ++p) f(p);
  });
}

// Every window along the axis is `k` consecutive taps starting at k * o (kernel k, stride k, no
// padding, dilation 1): the common MaxPool2d(2).
bool tiled(const PoolAxis& a, int64_t k) {
  if (a.step != 1) return false;
  for (size_t o = 0; o < a.begin.size(); ++o)
    if (a.begin[o] != k * int64_t(o) || a.count[o] != k) return false;
  return true;
}

// One tap of a max window (see max_pool_fwd's NOTE): branch-free, NaN wins, first maximum kept.
template <class T>
inline void take_max(T v, int64_t at, T& best, int64_t& bi) {
  const bool take = (v > best) | (v != v);
  best = take ? v : best;
  bi = take ? at : bi;
}

int64_t window_reads(const PoolGeom& g) {
  int64_t sh = 0, sw = 0;
  for (auto c : g.ah.count) sh += c;
  for (auto c : g.aw.count) sw += c;
  return sh * sw;
}

}  // namespace

template <class T>
void max_pool_fwd(const T* x, const PoolGeom& g, T* y, int64_t* idx) {
  const int64_t OH = g.OH(), OW = g.OW(), W = g.W, HW = g.H * W, L = OH * OW;
  // NOTE: locals, not g's vectors: idx is an int64_t* too, so through g the compiler would have
  // to reload every window bound after each store.
  const int64_t *hb = g.ah.begin.data(), *hc = g.ah.count.data(), *wb = g.aw.begin.data(), *wc = g.aw.count.data();
  const int64_t hs = g.ah.step, ws = g.aw.step;
  if (tiled(g.ah, 2) && tiled(g.aw, 2)) {
    // 2 x 2 windows at stride 2: the four taps unrolled in the general loop's order (same
    // results), without its per-window loop bounds.
    for_planes(g, 4 * L, [=](int64_t p) {
      const T* __restrict xp = x + p * HW;
      T* __restrict yp = y + p * L;
      int64_t* __restrict ip = idx + p * L;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t r0 = 2 * oh * W, r1 = r0 + W;
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t a = r0 + 2 * ow, b = r1 + 2 * ow;
          T best = -std::numeric_limits<T>::infinity();
          int64_t bi = a;
          take_max(xp[a], a, best, bi);
          take_max(xp[a + 1], a + 1, best, bi);
          take_max(xp[b], b, best, bi);
          take_max(xp[b + 1], b + 1, best, bi);
          yp[oh * OW + ow] = best;
          ip[oh * OW + ow] = bi;
        }
      }
    });
    return;
  }
  for_planes(g, window_reads(g), [=](int64_t p) {
    const T* __restrict xp = x + p * HW;
    T* __restrict yp = y + p * L;
    int64_t* __restrict ip = idx + p * L;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = hb[oh], nh = hc[oh];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = wb[ow], nw = wc[ow];
        // NOTE: start from -inf with the first tap's index, so an all -inf window still
        // reports a valid position; a NaN replaces anything, and a later NaN replaces it
        // (PyTorch's `val > max || isnan(val)`).
        T best = -std::numeric_limits<T>::infinity();
        int64_t bi = h0 * W + w0;
        for (int64_t i = 0; i < nh; ++i) {
          const int64_t row = (h0 + i * hs) * W;
          for (int64_t j = 0; j < nw; ++j) {
            const int64_t at = row + w0 + j * ws;
            const T v = xp[at];
            // Branch-free select: on real data the comparison is a coin flip, and a
            // mispredicted branch per tap costs more than the whole load.
            const bool take = (v > best) | (v != v);
            best = take ? v : best;
            bi = take ? at : bi;
          }
        }
        yp[oh * OW + ow] = best;
        ip[oh * OW + ow] = bi;
      }
    }
  });
}

template <class T>
void avg_pool_fwd(const T* x, const PoolGeom& g, T* y) {
  const int64_t OH = g.OH(), OW = g.OW(), HW = g.H * g.W, L = OH * OW;
  for_planes(g, window_reads(g), [&](int64_t p) {
    const T* xp = x + p * HW;
    T* yp = y + p * L;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = g.ah.begin[size_t(oh)], nh = g.ah.count[size_t(oh)];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = g.aw.begin[size_t(ow)], nw = g.aw.count[size_t(ow)];
        T s = 0;
        for (int64_t h = h0; h < h0 + nh; ++h)
          for (int64_t w = w0; w < w0 + nw; ++w) s += xp[h * g.W + w];
        if (g.adaptive) yp[oh * OW + ow] = s / T(nh) / T(nw);
        else if (g.divisor_override) yp[oh * OW + ow] = s / T(g.divisor_override);
        else yp[oh * OW + ow] = s / T(g.ah.div[size_t(oh)] * g.aw.div[size_t(ow)]);
      }
    }
  });
}

template <class T>
void avg_pool_adj(const T* gy, const PoolGeom& g, T* gx) {
  const int64_t OH = g.OH(), OW = g.OW(), HW = g.H * g.W, L = OH * OW;
  for_planes(g, window_reads(g) + HW, [&](int64_t p) {
    T* xp = gx + p * HW;
    const T* yp = gy + p * L;
    std::fill(xp, xp + HW, T(0));
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = g.ah.begin[size_t(oh)], nh = g.ah.count[size_t(oh)];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = g.aw.begin[size_t(ow)], nw = g.aw.count[size_t(ow)];
        T d;
        if (g.adaptive) d = yp[oh * OW + ow] / T(nh) / T(nw);
        else if (g.divisor_override) d = yp[oh * OW + ow] / T(g.divisor_override);
        else d = yp[oh * OW + ow] / T(g.ah.div[size_t(oh)] * g.aw.div[size_t(ow)]);
        for (int64_t h = h0; h < h0 + nh; ++h)
          for (int64_t w = w0; w < w0 + nw; ++w) xp[h * g.W + w] += d;
      }
    }
  });
}

template <class T>
void index_pool_adj(const T* gy, const int64_t* idx, const PoolGeom& g, T* gx) {
  const int64_t HW = g.H * g.W, L = g.OH() * g.OW();
  for_planes(g, L + HW, [&](int64_t p) {
    T* xp = gx + p * HW;
    std::fill(xp, xp + HW, T(0));
    const T* yp = gy + p * L;
    const int64_t* ip = idx + p * L;
    for (int64_t l = 0; l < L; ++l) xp[ip[l]] += yp[l];
  });
}

template <class T>
void index_pool_fwd(const T* x, const int64_t* idx, const PoolGeom& g, T* y) {
  const int64_t HW = g.H * g.W, L = g.OH() * g.OW();
  for_planes(g, L, [&](int64_t p) {
    const T* xp = x + p * HW;
    T* yp = y + p * L;
    const int64_t* ip = idx + p * L;
    for (int64_t l = 0; l < L; ++l) yp[l] = xp[ip[l]];
  });
}

#define LUCID_POOL_INST(T)                                                         \
  template void max_pool_fwd<T>(const T*, const PoolGeom&, T*, int64_t*);          \
  template void avg_pool_fwd<T>(const T*, const PoolGeom&, T*);                    \
  template void avg_pool_adj<T>(const T*, const PoolGeom&, T*);                    \
  template void index_pool_adj<T>(const T*, const int64_t*, const PoolGeom&, T*);  \
  template void index_pool_fwd<T>(const T*, const int64_t*, const PoolGeom&, T*);
LUCID_POOL_INST(float)
LUCID_POOL_INST(double)
#undef LUCID_POOL_INST

}  // namespace lucid::kernels
