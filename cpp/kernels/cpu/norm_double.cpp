#include "kernels/cpu/norm_double.h"

#include <algorithm>

#include "kernels/cpu/norm.h"
#include "kernels/cpu/norm_rows.h"

namespace lucid::kernels {

namespace {

// Rows [r0, r1) of the RMSNorm double backward (formulas in norm_double.h): two reduction
// passes over the row (the second finds it in cache), then the outputs written lane-parallel.
template <class T, bool HasGamma, bool HasU, bool HasV>
struct RmsDoubleRows {
  using A = acc_t<T>;
  LUCID_INLINE static void run(const T* x, const T* gamma, const T* g, const A* rstd, const T* u, const T* v,
                               T* d_g, T* d_x, A* dg, int64_t r0, int64_t r1, int64_t N, int64_t k, bool stream) {
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t o = row * N;
      const T *xr = x + o, *gr = g + o, *ur = HasU ? u + o : nullptr;
      const A r = rstd[row];
      A a = 0, pu = 0, pv = 0, uu = 0;
      reduce_row2<A>(N, [=](int64_t j, A& s0, A& s1) {
        const A gy = A(gr[j]) * gain<T, HasGamma>(gamma, j);
        s0 += gy * A(xr[j]);
        if constexpr (HasU) s1 += A(ur[j]) * gy;
      }, a, pu);
      if constexpr (HasU && HasV) {
        reduce_row2<A>(N, [=](int64_t j, A& s0, A& s1) {
          s0 += A(v[j]) * A(gr[j]) * A(xr[j]);
          if (j < k) s1 += A(ur[j]) * A(xr[j]);
        }, pv, uu);
      } else if constexpr (HasV) {
        pv = reduce_row<A>(N, [=](int64_t j) { return A(v[j]) * A(gr[j]) * A(xr[j]); });
      } else if constexpr (HasU) {
        uu = reduce_row<A>(k, [=](int64_t j) { return A(ur[j]) * A(xr[j]); });
      }
      const A c = r * r * r / A(k);
      const A q = pu + pv - A(3) * r * r * a * uu / A(k);
      const A cu = c * uu, ca = c * a, cq = c * q;
      auto uj = [=](int64_t j) { return HasU ? A(ur[j]) : A(0); };
      auto vj = [=](int64_t j) { return HasV ? A(v[j]) : A(0); };
      if (d_g)
        write_row(d_g + o, N, stream, [=](int64_t j) {
          return gain<T, HasGamma>(gamma, j) * (r * uj(j) - cu * A(xr[j])) + r * vj(j) * A(xr[j]);
        });
      if (d_x) {
        // [j < k]: the features feeding rstd get the u- and q-terms.
        write_row(d_x + o, k, stream, [=](int64_t j) {
          return r * vj(j) * A(gr[j]) - cu * A(gr[j]) * gain<T, HasGamma>(gamma, j) - ca * uj(j) - cq * A(xr[j]);
        });
        if (k < N)
          write_row(d_x + o + k, N - k, stream, [=](int64_t i) {
            const int64_t j = i + k;
            return r * vj(j) * A(gr[j]) - cu * A(gr[j]) * gain<T, HasGamma>(gamma, j);
          });
      }
      if (dg)
        for (int64_t j = 0; j < N; ++j) dg[j] += A(gr[j]) * (r * uj(j) - cu * A(xr[j]));
    }
    stream_fence(stream);
  }
};

template <class T, bool HasGamma>
void rms_double_dispatch(const T* x, const T* gamma, const T* g, const acc_t<T>* rstd, const T* u, const T* v,
                         T* d_g, T* d_x, acc_t<T>* dg, int64_t r0, int64_t r1, int64_t N, int64_t k, bool stream) {
  if (u && v) run_best<RmsDoubleRows<T, HasGamma, true, true>>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k, stream);
  else if (u) run_best<RmsDoubleRows<T, HasGamma, true, false>>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k, stream);
  else run_best<RmsDoubleRows<T, HasGamma, false, true>>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k, stream);
}

}  // namespace

template <class T>
void rms_norm_double_backward(const T* x, const T* gamma, const T* g, const acc_t<T>* rstd, const T* u,
                              const T* v, T* d_g, T* d_x, acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows,
                              int64_t N, int64_t k) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, N);
  A* partial = d_gamma ? (P == 1 ? d_gamma : scratch) : nullptr;
  const bool stream = use_stream<T>(rows * N);
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* dg = partial ? partial + c * N : nullptr;
    if (dg) std::fill(dg, dg + N, A(0));
    if (gamma) rms_double_dispatch<T, true>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k, stream);
    else rms_double_dispatch<T, false>(x, gamma, g, rstd, u, v, d_g, d_x, dg, r0, r1, N, k, stream);
  });
  if (d_gamma && P > 1) combine_chunks(scratch, d_gamma, P, N);
}

#define LUCID_NORM_DOUBLE_INSTANTIATE(T)                                                                   \
  template void rms_norm_double_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const T*, const T*, \
                                            T*, T*, acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t);
LUCID_NORM_DOUBLE_INSTANTIATE(Half)
LUCID_NORM_DOUBLE_INSTANTIATE(BFloat16)
LUCID_NORM_DOUBLE_INSTANTIATE(float)
LUCID_NORM_DOUBLE_INSTANTIATE(double)

}  // namespace lucid::kernels
