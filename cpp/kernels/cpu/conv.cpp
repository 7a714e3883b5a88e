#include "kernels/cpu/conv.h"

#include <cstring>

namespace lucid::kernels {

namespace {
// The grid range [lo, hi) whose tap lands inside [0, size): lo*s - p + off >= 0 and
// (hi-1)*s - p + off < size, clipped to [0, n).
inline void valid_range(int64_t off, int64_t s, int64_t p, int64_t size, int64_t n, int64_t& lo, int64_t& hi) {
  const int64_t a = p - off;  // need o*s >= a
  lo = a <= 0 ? 0 : (a + s - 1) / s;
  const int64_t b = size + p - off;  // need o*s < b
  hi = b <= 0 ? 0 : (b + s - 1) / s;
  if (hi > n) hi = n;
  if (lo > hi) lo = hi;
}
}  // namespace

template <class T>
void im2col(const T* x, const ConvGeom& g, int64_t n0, int64_t nb, int64_t c0, int64_t Cg, T* col) {
  const int64_t L = g.OH * g.OW, HW = g.H * g.W, cols = nb * L;
  for (int64_t c = 0; c < Cg; ++c)
    for (int64_t i = 0; i < g.kH; ++i)
      for (int64_t j = 0; j < g.kW; ++j) {
        T* row = col + ((c * g.kH + i) * g.kW + j) * cols;
        const int64_t hoff = i * g.dH, woff = j * g.dW;
        int64_t ohlo, ohhi, owlo, owhi;
        valid_range(hoff, g.sH, g.pH, g.H, g.OH, ohlo, ohhi);
        valid_range(woff, g.sW, g.pW, g.W, g.OW, owlo, owhi);
        for (int64_t n = 0; n < nb; ++n) {
          const T* plane = x + ((n0 + n) * g.C + c0 + c) * HW;
          T* r = row + n * L;
          std::memset(static_cast<void*>(r), 0, size_t(ohlo * g.OW) * sizeof(T));
          for (int64_t oh = ohlo; oh < ohhi; ++oh) {
            const T* src = plane + (oh * g.sH - g.pH + hoff) * g.W - g.pW + woff;
            T* dst = r + oh * g.OW;
            for (int64_t ow = 0; ow < owlo; ++ow) dst[ow] = T(0);
            if (g.sW == 1) std::memcpy(static_cast<void*>(dst + owlo), src + owlo, size_t(owhi - owlo) * sizeof(T));
            else
              for (int64_t ow = owlo; ow < owhi; ++ow) dst[ow] = src[ow * g.sW];
            for (int64_t ow = owhi; ow < g.OW; ++ow) dst[ow] = T(0);
          }
          std::memset(static_cast<void*>(r + ohhi * g.OW), 0, size_t((g.OH - ohhi) * g.OW) * sizeof(T));
        }
      }
}

template <class T>
void col2im(const T* col, const ConvGeom& g, int64_t n0, int64_t nb, int64_t c0, int64_t Cg, T* x) {
  const int64_t L = g.OH * g.OW, HW = g.H * g.W, cols = nb * L;
  for (int64_t c = 0; c < Cg; ++c)
    for (int64_t i = 0; i < g.kH; ++i)
      for (int64_t j = 0; j < g.kW; ++j) {
        const T* row = col + ((c * g.kH + i) * g.kW + j) * cols;
        const int64_t hoff = i * g.dH, woff = j * g.dW;
        int64_t ohlo, ohhi, owlo, owhi;
        valid_range(hoff, g.sH, g.pH, g.H, g.OH, ohlo, ohhi);
        valid_range(woff, g.sW, g.pW, g.W, g.OW, owlo, owhi);
        for (int64_t n = 0; n < nb; ++n) {
          T* plane = x + ((n0 + n) * g.C + c0 + c) * HW;
          const T* r = row + n * L;
          for (int64_t oh = ohlo; oh < ohhi; ++oh) {
            T* dst = plane + (oh * g.sH - g.pH + hoff) * g.W - g.pW + woff;
            const T* src = r + oh * g.OW;
            if (g.sW == 1)
              for (int64_t ow = owlo; ow < owhi; ++ow) dst[ow] += src[ow];
            else
              for (int64_t ow = owlo; ow < owhi; ++ow) dst[ow * g.sW] += src[ow];
          }
        }
      }
}

template <class T>
void nc_to_cn(const T* src, int64_t C, int64_t L, int64_t n0, int64_t nb, T* dst) {
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t c = 0; c < C; ++c)
      std::memcpy(static_cast<void*>(dst + (c * nb + n) * L), src + ((n0 + n) * C + c) * L, size_t(L) * sizeof(T));
}

template <class T>
void cn_to_nc(const T* src, const T* bias, int64_t C, int64_t L, int64_t n0, int64_t nb, T* dst) {
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const T* s = src + (c * nb + n) * L;
      T* d = dst + ((n0 + n) * C + c) * L;
      if (bias) {
        const T b = bias[c];
        for (int64_t l = 0; l < L; ++l) d[l] = s[l] + b;
      } else {
        std::memcpy(static_cast<void*>(d), s, size_t(L) * sizeof(T));
      }
    }
}

template <class T>
void bias_grad(const T* g, int64_t N, int64_t C, int64_t L, T* out) {
  for (int64_t c = 0; c < C; ++c) {
    double s = 0;  // NOTE: a float sum over N*L terms loses digits; accumulate in double
    for (int64_t n = 0; n < N; ++n) {
      const T* p = g + (n * C + c) * L;
      for (int64_t l = 0; l < L; ++l) s += double(p[l]);
    }
    out[c] = T(s);
  }
}

#define LUCID_CONV_INST(T)                                                                              \
  template void im2col<T>(const T*, const ConvGeom&, int64_t, int64_t, int64_t, int64_t, T*);            \
  template void col2im<T>(const T*, const ConvGeom&, int64_t, int64_t, int64_t, int64_t, T*);            \
  template void nc_to_cn<T>(const T*, int64_t, int64_t, int64_t, int64_t, T*);                           \
  template void cn_to_nc<T>(const T*, const T*, int64_t, int64_t, int64_t, int64_t, T*);                 \
  template void bias_grad<T>(const T*, int64_t, int64_t, int64_t, T*);
LUCID_CONV_INST(float)
LUCID_CONV_INST(double)
#undef LUCID_CONV_INST

}  // namespace lucid::kernels
