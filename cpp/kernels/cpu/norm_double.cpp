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
  LUCID_ALWAYS_INLINE static void run(const T* x, const T* gamma, const T* g, const A* rstd, const T* u, const T* v,
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

// Rows [r0, r1) of the GroupRMSNorm double backward: the RMSNorm formulas per (row, group).
// `sums` is a 3 G scratch row of this chunk (per group: sum g x, sum u x, sum u g); `dg` its
// partial d_gamma row.
template <class T, bool HasGamma, bool HasU, bool HasV>
struct GroupDoubleRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const int64_t* grp, const int64_t* cnt, const T* gamma, const T* g,
                               const A* rstd, const T* u, const T* v, T* d_g, T* d_x, A* sums, A* dg, int64_t r0,
                               int64_t r1, int64_t C, int64_t S, int64_t G) {
    A *gx = sums, *ux = sums + G, *ug = sums + 2 * G;
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t o = row * C * S;
      const T *xr = x + o, *gr = g + o, *ur = HasU ? u + o : nullptr;
      const A* rr = rstd + row * G;
      std::fill(sums, sums + 3 * G, A(0));
      for (int64_t c = 0; c < C; ++c) {
        const T *xc = xr + c * S, *gc = gr + c * S;
        A a = 0, b = 0, d = 0;
        for (int64_t s = 0; s < S; ++s) {
          a += A(gc[s]) * A(xc[s]);
          if constexpr (HasU) b += A(ur[c * S + s]) * A(xc[s]), d += A(ur[c * S + s]) * A(gc[s]);
        }
        gx[grp[c]] += a;
        if constexpr (HasU) ux[grp[c]] += b, ug[grp[c]] += d;
      }
      for (int64_t c = 0; c < C; ++c) {
        const int64_t k = grp[c];
        const A r = rr[k], m = A(cnt[k] * S), cc = r * r * r / m, gm = gain<T, HasGamma>(gamma, k);
        const A vk = HasV ? A(v[k]) : A(0);
        const A a = gm * gx[k], U = ux[k];
        const A q = gm * ug[k] + vk * gx[k] - A(3) * r * r * a * U / m;
        const T *xc = xr + c * S, *gc = gr + c * S;
        A gt = 0;
        for (int64_t s = 0; s < S; ++s) {
          const A xv = A(xc[s]), gv = A(gc[s]), uv = HasU ? A(ur[c * S + s]) : A(0);
          const A t = r * uv - cc * U * xv;
          if (d_g) d_g[o + c * S + s] = T(gm * t + r * vk * xv);
          if (d_x) d_x[o + c * S + s] = T(r * vk * gv - cc * (gm * gv * U + uv * a) - cc * xv * q);
          gt += gv * t;
        }
        if (dg) dg[k] += gt;
      }
    }
  }
};

template <class T, bool HasGamma>
void group_double_dispatch(const T* x, const int64_t* grp, const int64_t* cnt, const T* gamma, const T* g,
                           const acc_t<T>* rstd, const T* u, const T* v, T* d_g, T* d_x, acc_t<T>* sums,
                           acc_t<T>* dg, int64_t r0, int64_t r1, int64_t C, int64_t S, int64_t G) {
  if (u && v)
    run_best<GroupDoubleRows<T, HasGamma, true, true>>(x, grp, cnt, gamma, g, rstd, u, v, d_g, d_x, sums, dg, r0, r1, C, S, G);
  else if (u)
    run_best<GroupDoubleRows<T, HasGamma, true, false>>(x, grp, cnt, gamma, g, rstd, u, v, d_g, d_x, sums, dg, r0, r1, C, S, G);
  else
    run_best<GroupDoubleRows<T, HasGamma, false, true>>(x, grp, cnt, gamma, g, rstd, u, v, d_g, d_x, sums, dg, r0, r1, C, S, G);
}

// Rows [r0, r1) of the LayerNorm double backward (formulas in norm_double.h): the seven row sums
// in three passes (the row stays in cache), then the outputs.
template <class T, bool HasW, bool HasU, bool HasV>
struct LnDoubleRows {
  using A = acc_t<T>;
  LUCID_ALWAYS_INLINE static void run(const T* x, const T* w, const T* g, const A* mean, const A* rstd, const T* u,
                               const T* v, const T* z, T* d_g, T* d_x, A* dw, int64_t r0, int64_t r1, int64_t N) {
    const A inv_n = A(1) / A(N);
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t o = row * N;
      const T *xr = x + o, *gr = g + o, *ur = HasU ? u + o : nullptr;
      const A mu = mean[row], r = rstd[row];
      auto xh = [=](int64_t j) { return (A(xr[j]) - mu) * r; };
      A sgy = 0, p = 0, su = 0, sux = 0, sugy = 0, svg = 0, svgx = 0;
      reduce_row2<A>(N, [=](int64_t j, A& s0, A& s1) {
        const A gy = A(gr[j]) * gain<T, HasW>(w, j);
        s0 += gy;
        s1 += gy * xh(j);
      }, sgy, p);
      if constexpr (HasU) {
        reduce_row2<A>(N, [=](int64_t j, A& s0, A& s1) {
          s0 += A(ur[j]);
          s1 += A(ur[j]) * xh(j);
        }, su, sux);
        sugy = reduce_row<A>(N, [=](int64_t j) { return A(ur[j]) * A(gr[j]) * gain<T, HasW>(w, j); });
      }
      if constexpr (HasV)
        reduce_row2<A>(N, [=](int64_t j, A& s0, A& s1) {
          const A vg = A(v[j]) * A(gr[j]);
          s0 += vg;
          s1 += vg * xh(j);
        }, svg, svgx);
      const A mu_u = su * inv_n, mux_u = sux * inv_n;  // mean(u), mean(u xh)
      const A ca = r * inv_n * sux, cb = r * inv_n * p;  // e_i = v_i g_i - ca gy_i - cb u_i
      const A me = (svg - ca * sgy - cb * su) * inv_n;
      const A mex = (svgx - A(2) * r * inv_n * p * sux) * inv_n;
      const A k0 = sugy - sgy * su * inv_n - p * sux * inv_n;
      const A cx = r * mex + r * r * inv_n * k0;  // coefficient of xh_i in d_x
      auto uj = [=](int64_t j) { return HasU ? A(ur[j]) : A(0); };
      auto vj = [=](int64_t j) { return HasV ? A(v[j]) : A(0); };
      if (d_g)
        write_row(d_g + o, N, false, [=](int64_t j) {
          A val = gain<T, HasW>(w, j) * r * (uj(j) - mu_u - xh(j) * mux_u) + vj(j) * xh(j);
          if (z) val += A(z[j]);
          return val;
        });
      if (d_x)
        write_row(d_x + o, N, false, [=](int64_t j) {
          const A gv = A(gr[j]);
          const A e = vj(j) * gv - ca * gv * gain<T, HasW>(w, j) - cb * uj(j);
          return r * (e - me) - cx * xh(j);
        });
      if (dw)
        for (int64_t j = 0; j < N; ++j) dw[j] += A(gr[j]) * r * (uj(j) - mu_u - xh(j) * mux_u);
    }
  }
};

template <class T, bool HasW>
void ln_double_dispatch(const T* x, const T* w, const T* g, const acc_t<T>* mean, const acc_t<T>* rstd, const T* u,
                        const T* v, const T* z, T* d_g, T* d_x, acc_t<T>* dw, int64_t r0, int64_t r1, int64_t N) {
  if (u && v) run_best<LnDoubleRows<T, HasW, true, true>>(x, w, g, mean, rstd, u, v, z, d_g, d_x, dw, r0, r1, N);
  else if (u) run_best<LnDoubleRows<T, HasW, true, false>>(x, w, g, mean, rstd, u, v, z, d_g, d_x, dw, r0, r1, N);
  else if (v) run_best<LnDoubleRows<T, HasW, false, true>>(x, w, g, mean, rstd, u, v, z, d_g, d_x, dw, r0, r1, N);
  else run_best<LnDoubleRows<T, HasW, false, false>>(x, w, g, mean, rstd, u, v, z, d_g, d_x, dw, r0, r1, N);
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

template <class T>
void group_rms_norm_double_backward(const T* x, const int64_t* groups, const int64_t* counts, const T* gamma,
                                    const T* g, const acc_t<T>* rstd, const T* u, const T* v, T* d_g, T* d_x,
                                    acc_t<T>* d_gamma, acc_t<T>* scratch, int64_t rows, int64_t C, int64_t S,
                                    int64_t G) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, C * S);
  A* partial = scratch + P * 3 * G;  // scratch: P sum rows of 3 G, then P partial d_gamma rows of G
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* sums = scratch + c * 3 * G;
    A* dg = d_gamma ? partial + c * G : nullptr;
    if (dg) std::fill(dg, dg + G, A(0));
    if (gamma)
      group_double_dispatch<T, true>(x, groups, counts, gamma, g, rstd, u, v, d_g, d_x, sums, dg, r0, r1, C, S, G);
    else
      group_double_dispatch<T, false>(x, groups, counts, gamma, g, rstd, u, v, d_g, d_x, sums, dg, r0, r1, C, S, G);
  });
  if (d_gamma) combine_chunks(partial, d_gamma, P, G);
}

template <class T>
void layer_norm_double_backward(const T* x, const T* w, const T* g, const acc_t<T>* mean, const acc_t<T>* rstd,
                                const T* u, const T* v, const T* z, T* d_g, T* d_x, acc_t<T>* d_w,
                                acc_t<T>* scratch, int64_t rows, int64_t N) {
  using A = acc_t<T>;
  const int64_t P = norm_chunks(rows, N);
  A* partial = d_w ? (P == 1 ? d_w : scratch) : nullptr;
  for_chunks(P, [&](int64_t c) {
    const int64_t r0 = chunk_begin(c, P, rows), r1 = chunk_begin(c + 1, P, rows);
    A* dw = partial ? partial + c * N : nullptr;
    if (dw) std::fill(dw, dw + N, A(0));
    if (w) ln_double_dispatch<T, true>(x, w, g, mean, rstd, u, v, z, d_g, d_x, dw, r0, r1, N);
    else ln_double_dispatch<T, false>(x, w, g, mean, rstd, u, v, z, d_g, d_x, dw, r0, r1, N);
  });
  if (d_w && P > 1) combine_chunks(scratch, d_w, P, N);
}

#define LUCID_NORM_DOUBLE_INSTANTIATE(T)                                                                   \
  template void rms_norm_double_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const T*, const T*, \
                                            T*, T*, acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t);     \
  template void group_rms_norm_double_backward<T>(const T*, const int64_t*, const int64_t*, const T*, const T*,   \
                                                  const acc_t<T>*, const T*, const T*, T*, T*, acc_t<T>*,         \
                                                  acc_t<T>*, int64_t, int64_t, int64_t, int64_t);                 \
  template void layer_norm_double_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const acc_t<T>*,     \
                                              const T*, const T*, const T*, T*, T*, acc_t<T>*, acc_t<T>*, int64_t, \
                                              int64_t);
LUCID_NORM_DOUBLE_INSTANTIATE(float)
LUCID_NORM_DOUBLE_INSTANTIATE(double)

}  // namespace lucid::kernels
