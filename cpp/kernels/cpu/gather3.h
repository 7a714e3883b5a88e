// A gather through three index maps (pad and friends): for each of `outer` blocks,
// y[o, a, b, c] = x[o, ma[a], mb[b], mc[c]], or `fill` where any map entry is -1; and its
// adjoint, a scatter-add of dy into dx (dx initialised by the caller). x is contiguous
// (outer, na, nb, nc); y is contiguous (outer, |ma|, |mb|, |mc|).
#pragma once
#include <cstdint>

namespace lucid::kernels {

template <class T>
void gather3(const T* x, int64_t outer, const int64_t* n_in, const int64_t* const* maps, const int64_t* n_out,
             T fill, T* y) {
  const int64_t plane = n_in[0] * n_in[1] * n_in[2];
  for (int64_t o = 0; o < outer; ++o) {
    const T* xo = x + o * plane;
    for (int64_t a = 0; a < n_out[0]; ++a) {
      const int64_t sa = maps[0][a];
      for (int64_t b = 0; b < n_out[1]; ++b) {
        const int64_t sb = maps[1][b];
        T* row = y + ((o * n_out[0] + a) * n_out[1] + b) * n_out[2];
        if (sa < 0 || sb < 0) {
          for (int64_t c = 0; c < n_out[2]; ++c) row[c] = fill;
          continue;
        }
        const T* xr = xo + (sa * n_in[1] + sb) * n_in[2];
        const int64_t* mc = maps[2];
        for (int64_t c = 0; c < n_out[2]; ++c) row[c] = mc[c] < 0 ? fill : xr[mc[c]];
      }
    }
  }
}

template <class T>
void scatter3_add(const T* dy, int64_t outer, const int64_t* n_in, const int64_t* const* maps, const int64_t* n_out,
                  T* dx) {
  const int64_t plane = n_in[0] * n_in[1] * n_in[2];
  for (int64_t o = 0; o < outer; ++o) {
    T* xo = dx + o * plane;
    for (int64_t a = 0; a < n_out[0]; ++a) {
      const int64_t sa = maps[0][a];
      if (sa < 0) continue;
      for (int64_t b = 0; b < n_out[1]; ++b) {
        const int64_t sb = maps[1][b];
        if (sb < 0) continue;
        const T* row = dy + ((o * n_out[0] + a) * n_out[1] + b) * n_out[2];
        T* xr = xo + (sa * n_in[1] + sb) * n_in[2];
        const int64_t* mc = maps[2];
        for (int64_t c = 0; c < n_out[2]; ++c)
          if (mc[c] >= 0) xr[mc[c]] += row[c];
      }
    }
  }
}

}  // namespace lucid::kernels
