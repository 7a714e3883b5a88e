#include "kernels/cpu/norm_channel.h"

#include "core/threads.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace lucid::kernels {

namespace {

constexpr int64_t kSerialWork = int64_t(1) << 15;  // elements: below this no parallel region
constexpr int kLanes = 16;

// sum_{j<n} f(j) with kLanes independent partial sums (vectorisable without reassociation by
// the compiler), added in a fixed order; the total is kept in double across calls by callers.
template <class A, class F>
inline A span_sum(int64_t n, F f) {
  A acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += f(j + l);
  for (int l = 0; j < n; ++j, ++l) acc[l] += f(j);
  A s = 0;
  for (int l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

template <class F>
void parallel_for(int64_t n, int64_t work, F&& f) {
  if (work < kSerialWork || n <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1) num_threads(lucid::num_threads())
  for (int64_t i = 0; i < n; ++i) f(i);
}

template <class T>
inline acc_t<T> at(const T* p, int64_t i) {
  return p ? acc_t<T>(p[i]) : acc_t<T>(1);
}

}  // namespace

template <class T>
void batch_norm_stats(const T* x, acc_t<T>* mean, acc_t<T>* var, int64_t N, int64_t C, int64_t S) {
  using A = acc_t<T>;
  const double M = double(N * S);
  parallel_for(C, N * C * S, [&](int64_t c) {
    // NOTE: per-span partial sums are folded into double, so long channels keep their digits.
    double s = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* p = x + (n * C + c) * S;
      s += double(span_sum<A>(S, [p](int64_t j) { return A(p[j]); }));
    }
    const A m = A(s / M);
    double v = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* p = x + (n * C + c) * S;
      v += double(span_sum<A>(S, [p, m](int64_t j) { A d = A(p[j]) - m; return d * d; }));
    }
    mean[c] = m;
    var[c] = A(v / M);
  });
}

template <class T>
void batch_norm_apply(const T* x, const T* w, const T* b, const acc_t<T>* mean, const acc_t<T>* rstd, T* y,
                      int64_t N, int64_t C, int64_t S) {
  using A = acc_t<T>;
  parallel_for(N * C, N * C * S, [&](int64_t nc) {
    const int64_t c = nc % C;
    const A scale = rstd[c] * at(w, c);
    const A shift = (b ? A(b[c]) : A(0)) - mean[c] * scale;
    const T* p = x + nc * S;
    T* q = y + nc * S;
    for (int64_t j = 0; j < S; ++j) q[j] = T(A(p[j]) * scale + shift);
  });
}

template <class T>
void batch_norm_backward(const T* x, const T* w, const T* grad_out, const acc_t<T>* mean, const acc_t<T>* rstd,
                         T* dx, acc_t<T>* dw, acc_t<T>* db, int64_t N, int64_t C, int64_t S, bool training) {
  using A = acc_t<T>;
  const A M = A(N * S);
  parallel_for(C, 2 * N * C * S, [&](int64_t c) {
    const A m = mean[c], r = rstd[c], wc = at(w, c);
    double sg = 0, sgx = 0;
    if (training || dw || db) {
      for (int64_t n = 0; n < N; ++n) {
        const T* p = x + (n * C + c) * S;
        const T* g = grad_out + (n * C + c) * S;
        sg += double(span_sum<A>(S, [g](int64_t j) { return A(g[j]); }));
        sgx += double(span_sum<A>(S, [=](int64_t j) { return A(g[j]) * (A(p[j]) - m); }));
      }
      sgx *= double(r);  // sum grad_out * xhat
    }
    if (dw) dw[c] = A(sgx);
    if (db) db[c] = A(sg);
    if (!dx) return;
    const A k = r * wc;
    const A mg = training ? A(sg) / M : A(0), mgx = training ? A(sgx) / M * r : A(0);
    for (int64_t n = 0; n < N; ++n) {
      const T* p = x + (n * C + c) * S;
      const T* g = grad_out + (n * C + c) * S;
      T* d = dx + (n * C + c) * S;
      // dx = r w (g - mean(g) - xhat mean(g xhat)), xhat mean(g xhat) = (x - m) r^2 sgx' / M
      for (int64_t j = 0; j < S; ++j) d[j] = T(k * (A(g[j]) - mg - (A(p[j]) - m) * mgx));
    }
  });
}

template <class T>
void group_norm_forward(const T* x, const T* w, const T* b, T* y, acc_t<T>* mean, acc_t<T>* rstd, int64_t N,
                        int64_t C, int64_t S, int64_t G, acc_t<T> eps) {
  using A = acc_t<T>;
  const int64_t D = C / G, L = D * S;
  parallel_for(N * G, N * C * S, [&](int64_t row) {
    const T* p = x + row * L;
    T* q = y + row * L;
    double s = 0;
    for (int64_t d = 0; d < D; ++d) s += double(span_sum<A>(S, [p, d, S](int64_t j) { return A(p[d * S + j]); }));
    const A m = A(s / double(L));
    double v = 0;
    for (int64_t d = 0; d < D; ++d)
      v += double(span_sum<A>(S, [=](int64_t j) { A e = A(p[d * S + j]) - m; return e * e; }));
    const A r = A(1) / std::sqrt(A(v / double(L)) + eps);
    mean[row] = m;
    rstd[row] = r;
    const int64_t c0 = (row % G) * D;
    for (int64_t d = 0; d < D; ++d) {
      const A scale = r * at(w, c0 + d);
      const A shift = (b ? A(b[c0 + d]) : A(0)) - m * scale;
      for (int64_t j = 0; j < S; ++j) q[d * S + j] = T(A(p[d * S + j]) * scale + shift);
    }
  });
}

template <class T>
void group_norm_backward(const T* x, const T* w, const T* grad_out, const acc_t<T>* mean, const acc_t<T>* rstd,
                         T* dx, acc_t<T>* dw, acc_t<T>* db, int64_t N, int64_t C, int64_t S, int64_t G) {
  using A = acc_t<T>;
  const int64_t D = C / G, L = D * S;
  if (dx)
    parallel_for(N * G, 2 * N * C * S, [&](int64_t row) {
      const T* p = x + row * L;
      const T* g = grad_out + row * L;
      T* q = dx + row * L;
      const A m = mean[row], r = rstd[row];
      const int64_t c0 = (row % G) * D;
      double sg = 0, sgx = 0;  // sums of gy and gy * (x - m)
      for (int64_t d = 0; d < D; ++d) {
        const A wc = at(w, c0 + d);
        const T* pd = p + d * S;
        const T* gd = g + d * S;
        sg += double(wc * span_sum<A>(S, [gd](int64_t j) { return A(gd[j]); }));
        sgx += double(wc * span_sum<A>(S, [=](int64_t j) { return A(gd[j]) * (A(pd[j]) - m); }));
      }
      const A mg = A(sg / double(L)), mgx = A(sgx / double(L)) * r * r;
      for (int64_t d = 0; d < D; ++d) {
        const A wc = at(w, c0 + d);
        for (int64_t j = 0; j < S; ++j) {
          const int64_t i = d * S + j;
          q[i] = T(r * (A(g[i]) * wc - mg - (A(p[i]) - m) * mgx));
        }
      }
    });
  if (dw || db)
    parallel_for(C, 2 * N * C * S, [&](int64_t c) {
      double sw = 0, sb = 0;
      for (int64_t n = 0; n < N; ++n) {
        const int64_t row = n * G + c / D;
        const A m = mean[row], r = rstd[row];
        const T* p = x + (n * C + c) * S;
        const T* g = grad_out + (n * C + c) * S;
        sb += double(span_sum<A>(S, [g](int64_t j) { return A(g[j]); }));
        sw += double(r * span_sum<A>(S, [=](int64_t j) { return A(g[j]) * (A(p[j]) - m); }));
      }
      if (dw) dw[c] = A(sw);
      if (db) db[c] = A(sb);
    });
}

#define LUCID_NORM_CHANNEL_INSTANTIATE(T)                                                                          \
  template void batch_norm_stats<T>(const T*, acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t);                     \
  template void batch_norm_apply<T>(const T*, const T*, const T*, const acc_t<T>*, const acc_t<T>*, T*, int64_t,    \
                                    int64_t, int64_t);                                                              \
  template void batch_norm_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const acc_t<T>*, T*,          \
                                       acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t, bool);                      \
  template void group_norm_forward<T>(const T*, const T*, const T*, T*, acc_t<T>*, acc_t<T>*, int64_t, int64_t,     \
                                      int64_t, int64_t, acc_t<T>);                                                  \
  template void group_norm_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const acc_t<T>*, T*,          \
                                       acc_t<T>*, acc_t<T>*, int64_t, int64_t, int64_t, int64_t);

LUCID_NORM_CHANNEL_INSTANTIATE(Half)
LUCID_NORM_CHANNEL_INSTANTIATE(BFloat16)
LUCID_NORM_CHANNEL_INSTANTIATE(float)
LUCID_NORM_CHANNEL_INSTANTIATE(double)

}  // namespace lucid::kernels
