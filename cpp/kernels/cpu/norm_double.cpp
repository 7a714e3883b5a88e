#include "kernels/cpu/norm_double.h"

#include <algorithm>

#include "kernels/cpu/norm.h"

namespace lucid::kernels {

namespace {

// One row of the RMSNorm double backward (formulas in norm_double.h).
template <class T, bool HasGamma, bool HasU, bool HasV>
void rms_double_row(const T* x, const T* gamma, const T* g, acc_t<T> r, const T* u, const T* v, T* d_g, T* d_x,
                    acc_t<T>* dg, int64_t N, int64_t k) {
  using A = acc_t<T>;
  auto gam = [&](int64_t i) { return HasGamma ? A(gamma[i]) : A(1); };
  A a = 0, uu = 0, pu = 0, pv = 0;
  for (int64_t i = 0; i < N; ++i) {
    const A xi = A(x[i]), gi = A(g[i]), gy = gi * gam(i);
    a += gy * xi;
    if constexpr (HasU) pu += A(u[i]) * gy;
    if constexpr (HasV) pv += A(v[i]) * gi * xi;
  }
  if constexpr (HasU)
    for (int64_t i = 0; i < k; ++i) uu += A(u[i]) * A(x[i]);
  const A c = r * r * r / A(k);
  const A q = pu + pv - A(3) * r * r * a * uu / A(k);
  for (int64_t i = 0; i < N; ++i) {
    const A xi = A(x[i]), gi = A(g[i]), gm = gam(i), m = i < k ? A(1) : A(0);
    const A ui = HasU ? A(u[i]) : A(0), vi = HasV ? A(v[i]) : A(0);
    const A t = r * ui - c * uu * xi;
    if (d_g) d_g[i] = T(gm * t + r * vi * xi);
    if (d_x) d_x[i] = T(r * vi * gi - c * (gi * gm * uu + m * ui * a) - c * m * xi * q);
    if (dg) dg[i] += gi * t;
  }
}

template <class T, bool HasGamma, bool HasU, bool HasV>
void rms_double_rows(const T* x, const T* gamma, const T* g, const acc_t<T>* rstd, const T* u, const T* v, T* d_g,
                     T* d_x, acc_t<T>* dg, int64_t r0, int64_t r1, int64_t N, int64_t k) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t o = r * N;
    rms_double_row<T, HasGamma, HasU, HasV>(x + o, gamma, g + o, rstd[r], HasU ? u + o : nullptr, v,
                                            d_g ? d_g + o : nullptr, d_x ? d_x + o : nullptr, dg, N, k);
  }
}

}  // namespace

template <class T>
void rms_norm_double_backward(const T* x, const T* gamma, const T* g, const acc_t<T>* rstd, const T* u,
                              const T* v, T* d_g, T* d_x, acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows,
                              int64_t N, int64_t k) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, N);
  A* partial = d_gamma ? (P == 1 ? d_gamma : scratch) : nullptr;
  auto chunk = [&](int64_t c) {
    const int64_t r0 = rows * c / P, r1 = rows * (c + 1) / P;
    A* dg = partial ? partial + c * N : nullptr;
    if (dg) std::fill(dg, dg + N, A(0));
    // Four row bodies: with/without gamma, and the dx-node (u) or d_gamma-node (v) upstream.
    if (gamma) {
      if (u && v) rms_double_rows<T, true, true, true>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k);
      else if (u) rms_double_rows<T, true, true, false>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k);
      else rms_double_rows<T, true, false, true>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k);
    } else {
      rms_double_rows<T, false, true, false>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k);
    }
  };
  if (P <= 1) {
    chunk(0);
  } else {
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t c = 0; c < P; ++c) chunk(c);
  }
  if (d_gamma && P > 1) {  // chunk partial sums added in chunk order: reproducible
    std::copy(scratch, scratch + N, d_gamma);
    for (int64_t c = 1; c < P; ++c)
      for (int64_t j = 0; j < N; ++j) d_gamma[j] += scratch[c * N + j];
  }
}

#define LUCID_NORM_DOUBLE_INSTANTIATE(T)                                                                   \
  template void rms_norm_double_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const T*, const T*, \
                                            T*, T*, acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t);
LUCID_NORM_DOUBLE_INSTANTIATE(Half)
LUCID_NORM_DOUBLE_INSTANTIATE(BFloat16)
LUCID_NORM_DOUBLE_INSTANTIATE(float)
LUCID_NORM_DOUBLE_INSTANTIATE(double)

}  // namespace lucid::kernels
