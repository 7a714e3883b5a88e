#include "kernels/cpu/loss.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/softmax.h"

namespace lucid::kernels {

namespace {

template <class T>
constexpr bool kNative = std::is_same_v<T, float> || std::is_same_v<T, double>;

// log sum_c exp(x_c) of one position (classes at stride cs), stabilised by the max. A row of
// all -inf (or any +inf / NaN) gives NaN, as PyTorch's log_softmax.
template <class T>
acc_t<T> row_lse(const T* x, int64_t C, int64_t cs) {
  using A = acc_t<T>;
  if constexpr (kNative<T>)
    if (cs == 1) return logsumexp_row(x, C);
  A m = -std::numeric_limits<A>::infinity();
  for (int64_t c = 0; c < C; ++c) {
    A v = A(x[c * cs]);
    m = v > m ? v : m;
  }
  A s = 0;
  for (int64_t c = 0; c < C; ++c) s += std::exp(A(x[c * cs]) - m);
  return m + std::log(s);
}

// Position p = (o, i) of a (outer, C, inner) tensor: offset of its class 0.
inline int64_t base_of(int64_t p, const ClassGeom& g) {
  return g.inner == 1 ? p * g.classes : (p / g.inner) * g.classes * g.inner + p % g.inner;
}

template <class A, class T>
A weight_sum(const T* w, int64_t C) {
  if (!w) return A(C);
  A s = 0;
  for (int64_t c = 0; c < C; ++c) s += A(w[c]);
  return s;
}

template <class A>
A softplus_neg(A x) {  // log(1 + exp(-x)) without overflow for either sign
  return std::log1p(std::exp(-std::abs(x))) + (x < A(0) ? -x : A(0));
}

template <class A>
A sigmoid(A x) {
  if (x >= A(0)) return A(1) / (A(1) + std::exp(-x));
  A e = std::exp(x);
  return e / (A(1) + e);
}

}  // namespace

template <class T>
LossSum cross_entropy_forward(const T* x, const int64_t* t, const T* w, T* loss, acc_t<T>* lse,
                              const ClassGeom& g, int64_t ignore, double eps) {
  using A = acc_t<T>;
  const int64_t C = g.classes, cs = g.inner;
  const A keep = A(1 - eps), spread = C > 0 ? A(eps / double(C)) : A(0);
  return sum_items<LossSum>(g.outer * g.inner, C, [&](int64_t p0, int64_t p1) {
    LossSum acc;
    for (int64_t p = p0; p < p1; ++p) {
      const T* xr = x + base_of(p, g);
      const A l = row_lse(xr, C, cs);
      lse[p] = l;
      const int64_t tp = t[p];
      A v = 0;
      if (tp != ignore) {
        const A wt = w ? A(w[tp]) : A(1);
        v = keep * wt * (l - A(xr[tp * cs]));
        if (eps > 0) {
          A sm = 0;
          for (int64_t c = 0; c < C; ++c) sm += (w ? A(w[c]) : A(1)) * (l - A(xr[c * cs]));
          v += spread * sm;
        }
        acc.weight += double(wt);
      }
      if (loss) loss[p] = T(v);
      acc.loss += double(v);
    }
    return acc;
  });
}

template <class T>
void cross_entropy_backward(const T* x, const int64_t* t, const T* w, const acc_t<T>* lse, const T* gl,
                            double scale, T* gx, const ClassGeom& g, int64_t ignore, double eps) {
  using A = acc_t<T>;
  const int64_t C = g.classes, cs = g.inner;
  const A keep = A(1 - eps), spread = C > 0 ? A(eps / double(C)) : A(0), W = weight_sum<A>(w, C);
  for_items(g.outer * g.inner, C, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = base_of(p, g), tp = t[p];
      const T* xr = x + b;
      T* gr = gx + b;
      if (tp == ignore) {
        for (int64_t c = 0; c < C; ++c) gr[c * cs] = T(0);
        continue;
      }
      const A s = gl ? A(gl[p]) : A(scale), l = lse[p];
      const A a = s * keep * (w ? A(w[tp]) : A(1));  // coefficient of (p_c - onehot)
      const A sW = s * spread * W;
      // gx_c = (a + sW) p_c - a [c == t] - s * spread * w_c
      if constexpr (kNative<T>) {
        if (cs == 1) {
          scaled_exp_row(xr, C, l, a + sW, gr);
          gr[tp] -= a;
          if (eps > 0)
            for (int64_t c = 0; c < C; ++c) gr[c] -= s * spread * (w ? w[c] : A(1));
          continue;
        }
      }
      for (int64_t c = 0; c < C; ++c) {
        const A pc = std::exp(A(xr[c * cs]) - l);
        A v = (a + sW) * pc - (c == tp ? a : A(0));
        if (eps > 0) v -= s * spread * (w ? A(w[c]) : A(1));
        gr[c * cs] = T(v);
      }
    }
  });
}

template <class T>
void cross_entropy_double_backward(const T* x, const int64_t* t, const T* q, const T* w, const acc_t<T>* lse,
                                   const T* gl, double scale, const T* u, const T* uq, acc_t<T>* d_s, T* d_x,
                                   T* d_q, const ClassGeom& g, int64_t ignore, double eps) {
  using A = acc_t<T>;
  const int64_t C = g.classes, cs = g.inner;
  const A keep = A(1 - eps), spread = C > 0 ? A(eps / double(C)) : A(0), W = weight_sum<A>(w, C);
  for_items(g.outer * g.inner, 2 * C, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = base_of(p, g);
      const T *xr = x + b, *ur = u ? u + b : nullptr, *uqr = uq ? uq + b : nullptr, *qr = q ? q + b : nullptr;
      const int64_t tp = t ? t[p] : -1;
      if (t && tp == ignore) {
        if (d_s) d_s[p] = A(0);
        if (d_x)
          for (int64_t c = 0; c < C; ++c) d_x[b + c * cs] = T(0);
        continue;
      }
      const A s = gl ? A(gl[p]) : A(scale), l = lse[p];
      auto wc = [=](int64_t c) { return w ? A(w[c]) : A(1); };
      // Sums over the classes; exp_acc keeps the loops vectorisable for float.
      A sa = 0, up = 0, ua = 0, uqw = 0, uqwl = 0;
      if (t) {  // a_c = spread w_c + [c == t] keep w_t
        const A wt = wc(tp);
        sa = spread * W + keep * wt;
        if (ur) {
          A suw = 0;
          if (eps > 0)
            for (int64_t c = 0; c < C; ++c) suw += A(ur[c * cs]) * wc(c);
          bool done = false;
          if constexpr (kNative<T>)
            if (cs == 1) up = exp_dot_row(xr, ur, C, l), done = true;
          if (!done)
            for (int64_t c = 0; c < C; ++c) up += A(ur[c * cs]) * exp_acc(A(xr[c * cs]) - l);
          ua = spread * suw + keep * wt * A(ur[tp * cs]);
        }
      } else {
        for (int64_t c = 0; c < C; ++c) {
          const A lp = A(xr[c * cs]) - l, a = wc(c) * (keep * A(qr[c * cs]) + spread);
          sa += a;
          if (ur) {
            const A uv = A(ur[c * cs]);
            up += uv * exp_acc(lp);
            ua += uv * a;
          }
          if (uqr) {
            const A v = A(uqr[c * cs]) * wc(c);
            uqw += v;
            uqwl += v * lp;
          }
        }
      }
      if (d_s) d_s[p] = sa * up - ua - keep * uqwl;
      if (d_x) {
        const A k1 = s * sa, k2 = s * keep;
        bool fused = false;
        if constexpr (kNative<T>) {
          if (cs == 1 && ur && !uqr) {  // no u_q: d_x = k1 p (u - sum(u p)) in one vector loop
            exp_mul_row(xr, ur, C, l, k1, up, d_x + b);
            fused = true;
          }
        }
        for (int64_t c = 0; c < C && !fused; ++c) {
          const A pc = exp_acc(A(xr[c * cs]) - l), uv = ur ? A(ur[c * cs]) : A(0);
          const A uqv = uqr ? A(uqr[c * cs]) * wc(c) : A(0);
          d_x[b + c * cs] = T(k1 * pc * (uv - up) - k2 * (uqv - pc * uqw));
        }
      }
      if (d_q)
        for (int64_t c = 0; c < C; ++c) d_q[b + c * cs] = T(s * keep * wc(c) * (up - (ur ? A(ur[c * cs]) : A(0))));
    }
  });
}

template <class T>
LossSum cross_entropy_prob_forward(const T* x, const T* q, const T* w, T* loss, acc_t<T>* lse,
                                   const ClassGeom& g, double eps) {
  using A = acc_t<T>;
  const int64_t C = g.classes, cs = g.inner;
  const A keep = A(1 - eps), spread = C > 0 ? A(eps / double(C)) : A(0);
  return sum_items<LossSum>(g.outer * g.inner, C, [&](int64_t p0, int64_t p1) {
    LossSum acc;
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = base_of(p, g);
      const A l = row_lse(x + b, C, cs);
      lse[p] = l;
      A v = 0;
      for (int64_t c = 0; c < C; ++c)
        v += (w ? A(w[c]) : A(1)) * (keep * A(q[b + c * cs]) + spread) * (l - A(x[b + c * cs]));
      if (loss) loss[p] = T(v);
      acc.loss += double(v);
      acc.weight += 1;
    }
    return acc;
  });
}

template <class T>
void cross_entropy_prob_backward(const T* x, const T* q, const T* w, const acc_t<T>* lse, const T* gl,
                                 double scale, T* gx, T* gq, const ClassGeom& g, double eps) {
  using A = acc_t<T>;
  const int64_t C = g.classes, cs = g.inner;
  const A keep = A(1 - eps), spread = C > 0 ? A(eps / double(C)) : A(0);
  for_items(g.outer * g.inner, C, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = base_of(p, g);
      const A s = gl ? A(gl[p]) : A(scale), l = lse[p];
      A wq = 0;  // sum_k w_k q'_k
      for (int64_t c = 0; c < C; ++c) wq += (w ? A(w[c]) : A(1)) * (keep * A(q[b + c * cs]) + spread);
      for (int64_t c = 0; c < C; ++c) {
        const int64_t k = b + c * cs;
        const A wc = w ? A(w[c]) : A(1), xc = A(x[k]);
        if (gx) gx[k] = T(s * (std::exp(xc - l) * wq - wc * (keep * A(q[k]) + spread)));
        if (gq) gq[k] = T(-s * keep * wc * (xc - l));
      }
    }
  });
}

template <class T>
LossSum nll_loss_forward(const T* x, const int64_t* t, const T* w, T* loss, const ClassGeom& g, int64_t ignore) {
  using A = acc_t<T>;
  LossSum acc;
  for (int64_t p = 0, np = g.outer * g.inner; p < np; ++p) {
    const int64_t tp = t[p];
    A v = 0;
    if (tp != ignore) {
      const A wt = w ? A(w[tp]) : A(1);
      v = -wt * A(x[base_of(p, g) + tp * g.inner]);
      acc.weight += double(wt);
    }
    if (loss) loss[p] = T(v);
    acc.loss += double(v);
  }
  return acc;
}

template <class T>
void nll_loss_backward(const int64_t* t, const T* w, const T* gl, double scale, T* gx, const ClassGeom& g,
                       int64_t ignore) {
  using A = acc_t<T>;
  const int64_t n = g.outer * g.classes * g.inner;
  for (int64_t i = 0; i < n; ++i) gx[i] = T(0);
  for (int64_t p = 0, np = g.outer * g.inner; p < np; ++p) {
    const int64_t tp = t[p];
    if (tp == ignore) continue;
    const A s = gl ? A(gl[p]) : A(scale);
    gx[base_of(p, g) + tp * g.inner] = T(-s * (w ? A(w[tp]) : A(1)));
  }
}

template <class T>
double pointwise_loss_forward(Pointwise kind, int64_t n, const T* x, const T* t, T* loss) {
  using A = acc_t<T>;
  auto run = [&](auto f) {
    return sum_items<double>(n, 1, [&](int64_t i0, int64_t i1) {
      double s = 0;
      for (int64_t i = i0; i < i1; ++i) {
        const A v = f(A(x[i]) - A(t[i]));
        if (loss) loss[i] = T(v);
        s += double(v);
      }
      return s;
    });
  };
  if (kind == Pointwise::Mse) return run([](A d) { return d * d; });
  return run([](A d) { return d < A(0) ? -d : d; });
}

template <class T>
void pointwise_loss_backward(Pointwise kind, int64_t n, const T* x, const T* t, const T* gl, double scale, T* gx,
                             T* gt) {
  using A = acc_t<T>;
  auto run = [&](auto df) {
    for_items(n, 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const A v = (gl ? A(gl[i]) : A(scale)) * df(A(x[i]) - A(t[i]));
        if (gx) gx[i] = T(v);
        if (gt) gt[i] = T(-v);
      }
    });
  };
  // NOTE: d|d|/dd at 0 is 0 (PyTorch's sign convention), not a subgradient choice of +-1.
  if (kind == Pointwise::Mse) run([](A d) { return A(2) * d; });
  else run([](A d) { return A(d > A(0)) - A(d < A(0)); });
}

template <class T>
double bce_logits_forward(int64_t n, const T* x, const T* t, const T* w, const T* pw, T* loss) {
  using A = acc_t<T>;
  return sum_items<double>(n, 4, [&](int64_t i0, int64_t i1) {
    double s = 0;
    for (int64_t i = i0; i < i1; ++i) {
      const A xv = A(x[i]), tv = A(t[i]);
      const A lw = pw ? A(1) + (A(pw[i]) - A(1)) * tv : A(1);
      A v = (A(1) - tv) * xv + lw * softplus_neg(xv);
      if (w) v *= A(w[i]);
      if (loss) loss[i] = T(v);
      s += double(v);
    }
    return s;
  });
}

template <class T>
void bce_logits_backward(int64_t n, const T* x, const T* t, const T* w, const T* pw, const T* gl, double scale,
                         T* gx, T* gt, T* gw, T* gpw) {
  using A = acc_t<T>;
  for_items(n, 4, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const A xv = A(x[i]), tv = A(t[i]), s = gl ? A(gl[i]) : A(scale);
      const A pwv = pw ? A(pw[i]) : A(1), wv = w ? A(w[i]) : A(1);
      const A lw = A(1) + (pwv - A(1)) * tv, sp = softplus_neg(xv);
      // d softplus(-x)/dx = sigmoid(x) - 1
      if (gx) gx[i] = T(s * wv * ((A(1) - tv) + lw * (sigmoid(xv) - A(1))));
      if (gt) gt[i] = T(s * wv * (-xv + (pwv - A(1)) * sp));
      if (gw) gw[i] = T(s * ((A(1) - tv) * xv + lw * sp));
      if (gpw) gpw[i] = T(s * wv * tv * sp);
    }
  });
}

#define LUCID_LOSS_INSTANTIATE(T)                                                                               \
  template LossSum cross_entropy_forward<T>(const T*, const int64_t*, const T*, T*, acc_t<T>*, const ClassGeom&, \
                                            int64_t, double);                                                   \
  template void cross_entropy_backward<T>(const T*, const int64_t*, const T*, const acc_t<T>*, const T*, double, \
                                          T*, const ClassGeom&, int64_t, double);                               \
  template void cross_entropy_double_backward<T>(const T*, const int64_t*, const T*, const T*, const acc_t<T>*,  \
                                                 const T*, double, const T*, const T*, acc_t<T>*, T*, T*,        \
                                                 const ClassGeom&, int64_t, double);                             \
  template LossSum cross_entropy_prob_forward<T>(const T*, const T*, const T*, T*, acc_t<T>*, const ClassGeom&,  \
                                                 double);                                                       \
  template void cross_entropy_prob_backward<T>(const T*, const T*, const T*, const acc_t<T>*, const T*, double,  \
                                               T*, T*, const ClassGeom&, double);                               \
  template LossSum nll_loss_forward<T>(const T*, const int64_t*, const T*, T*, const ClassGeom&, int64_t);      \
  template void nll_loss_backward<T>(const int64_t*, const T*, const T*, double, T*, const ClassGeom&, int64_t); \
  template double pointwise_loss_forward<T>(Pointwise, int64_t, const T*, const T*, T*);                        \
  template void pointwise_loss_backward<T>(Pointwise, int64_t, const T*, const T*, const T*, double, T*, T*);   \
  template double bce_logits_forward<T>(int64_t, const T*, const T*, const T*, const T*, T*);                   \
  template void bce_logits_backward<T>(int64_t, const T*, const T*, const T*, const T*, const T*, double, T*,   \
                                       T*, T*, T*);
LUCID_LOSS_INSTANTIATE(Half)
LUCID_LOSS_INSTANTIATE(BFloat16)
LUCID_LOSS_INSTANTIATE(float)
LUCID_LOSS_INSTANTIATE(double)
#undef LUCID_LOSS_INSTANTIATE

}  // namespace lucid::kernels
