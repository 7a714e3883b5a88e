#include "kernels/cpu/optim_adaptive.h"

#include <algorithm>
#include <cmath>

#include <omp.h>

#include "kernels/cpu/loops.h"
#include "kernels/cpu/ranges.h"

namespace lucid::kernels {

namespace {

// PyTorch's lerp(a, b, w): the formula depends on whether the weight is below 0.5.
template <class A>
inline A lerp(A a, A b, A w) {
  return std::abs(w) < A(0.5) ? a + w * (b - a) : b - (b - a) * (A(1) - w);
}

// NaN-propagating max (std::max would drop a NaN in its second argument), as torch.maximum.
template <class A>
inline A nan_max(A a, A b) {
  return (a != a || b != b) ? a + b : std::max(a, b);
}

// Dispatches a float dtype and calls loop(T*) with the pointers cast.
#define LUCID_OPTIM_DISPATCH(dtype, name, ...) LUCID_DISPATCH_FLOAT(dtype, name, [&] { __VA_ARGS__; })

}  // namespace

void rmsprop_update(DType dtype, int64_t n, void* param, const void* grad, void* square_avg, void* grad_avg,
                    void* momentum_buf, const RmspropStep& s) {
  LUCID_OPTIM_DISPATCH(dtype, "rmsprop", {
    using T = scalar_t;
    using A = acc_t<T>;
    T *p = static_cast<T*>(param), *v = static_cast<T*>(square_avg), *c = static_cast<T*>(grad_avg),
      *b = static_cast<T*>(momentum_buf);
    const T* g0 = static_cast<const T*>(grad);
    const A sign = s.maximize ? A(-1) : A(1), wd = A(s.weight_decay), alpha = A(s.alpha), w = A(1.0 - s.alpha),
            eps = A(s.eps), mom = A(s.momentum), lr = A(s.lr);
    const bool centered = s.centered, use_mom = s.momentum > 0;
    parallel_ranges(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        A pi = A(p[i]);
        A g = A(g0[i]) * sign;
        if (wd != A(0)) g = g + wd * pi;
        v[i] = T(A(v[i]) * alpha + w * g * g);
        A avg;
        if (centered) {
          c[i] = T(lerp(A(c[i]), g, w));
          A ci = A(c[i]);
          avg = std::sqrt(A(T(A(v[i]) - ci * ci)));
        } else {
          avg = std::sqrt(A(v[i]));
        }
        avg = A(T(avg)) + eps;
        if (use_mom) {
          b[i] = T(A(b[i]) * mom + g / avg);
          p[i] = T(pi - lr * A(b[i]));
        } else {
          p[i] = T(pi - lr * (g / avg));
        }
      }
    });
  });
}

void adagrad_update(DType dtype, int64_t n, void* param, const void* grad, void* sum, const AdagradStep& s) {
  LUCID_OPTIM_DISPATCH(dtype, "adagrad", {
    using T = scalar_t;
    using A = acc_t<T>;
    T *p = static_cast<T*>(param), *sm = static_cast<T*>(sum);
    const T* g0 = static_cast<const T*>(grad);
    const A sign = s.maximize ? A(-1) : A(1), wd = A(s.weight_decay), eps = A(s.eps), clr = A(s.clr);
    parallel_ranges(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        A pi = A(p[i]);
        A g = A(g0[i]) * sign;
        if (wd != A(0)) g = g + wd * pi;
        sm[i] = T(A(sm[i]) + g * g);
        A std_ = A(T(std::sqrt(A(sm[i])))) + eps;
        p[i] = T(pi - clr * (g / std_));
      }
    });
  });
}

void adadelta_update(DType dtype, int64_t n, void* param, const void* grad, void* square_avg, void* acc_delta,
                     const AdadeltaStep& s) {
  LUCID_OPTIM_DISPATCH(dtype, "adadelta", {
    using T = scalar_t;
    using A = acc_t<T>;
    T *p = static_cast<T*>(param), *v = static_cast<T*>(square_avg), *u = static_cast<T*>(acc_delta);
    const T* g0 = static_cast<const T*>(grad);
    const A sign = s.maximize ? A(-1) : A(1), wd = A(s.weight_decay), rho = A(s.rho), w = A(1.0 - s.rho),
            eps = A(s.eps), lr = A(s.lr);
    parallel_ranges(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        A pi = A(p[i]);
        A g = A(g0[i]) * sign;
        if (wd != A(0)) g = g + wd * pi;
        v[i] = T(A(v[i]) * rho + w * g * g);
        A std_ = std::sqrt(A(T(A(v[i]) + eps)));
        A delta = std::sqrt(A(T(A(u[i]) + eps)));
        delta = A(T(A(T(delta / std_)) * g));
        u[i] = T(A(u[i]) * rho + w * delta * delta);
        p[i] = T(pi - lr * delta);
      }
    });
  });
}

void adamax_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_inf,
                   const AdamaxStep& s) {
  LUCID_OPTIM_DISPATCH(dtype, "adamax", {
    using T = scalar_t;
    using A = acc_t<T>;
    T *p = static_cast<T*>(param), *m = static_cast<T*>(exp_avg), *u = static_cast<T*>(exp_inf);
    const T* g0 = static_cast<const T*>(grad);
    const A sign = s.maximize ? A(-1) : A(1), wd = A(s.weight_decay), w = A(1.0 - s.beta1), b2 = A(s.beta2),
            eps = A(s.eps), clr = A(s.clr);
    parallel_ranges(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        A pi = A(p[i]);
        A g = A(g0[i]) * sign;
        if (wd != A(0)) g = g + wd * pi;
        m[i] = T(lerp(A(m[i]), g, w));
        u[i] = T(nan_max(A(T(A(u[i]) * b2)), A(T(std::abs(g) + eps))));
        p[i] = T(pi - clr * (A(m[i]) / A(u[i])));
      }
    });
  });
}

void nadam_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                  const NadamStep& s) {
  LUCID_OPTIM_DISPATCH(dtype, "nadam", {
    using T = scalar_t;
    using A = acc_t<T>;
    T *p = static_cast<T*>(param), *m = static_cast<T*>(exp_avg), *v = static_cast<T*>(exp_avg_sq);
    const T* g0 = static_cast<const T*>(grad);
    const bool decoupled = s.decoupled_weight_decay;
    const A sign = s.maximize ? A(-1) : A(1), wd = decoupled ? A(0) : A(s.weight_decay),
            decay = decoupled ? A(1.0 - s.lr * s.weight_decay) : A(1), w = A(1.0 - s.beta1), b2 = A(s.beta2),
            w2 = A(1.0 - s.beta2), bc2 = A(s.bias_correction2), eps = A(s.eps), cg = A(s.coef_grad),
            cm = A(s.coef_avg);
    parallel_ranges(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        A pi = A(p[i]);
        A g = A(g0[i]) * sign;
        if (wd != A(0)) g = g + wd * pi;
        if (decay != A(1)) pi = A(T(pi * decay));
        m[i] = T(lerp(A(m[i]), g, w));
        v[i] = T(A(v[i]) * b2 + w2 * g * g);
        A denom = A(T(std::sqrt(A(T(A(v[i]) / bc2))))) + eps;
        pi = A(T(pi + cg * (g / denom)));
        p[i] = T(pi + cm * (A(m[i]) / denom));
      }
    });
  });
}

void radam_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                  const RadamStep& s) {
  LUCID_OPTIM_DISPATCH(dtype, "radam", {
    using T = scalar_t;
    using A = acc_t<T>;
    T *p = static_cast<T*>(param), *m = static_cast<T*>(exp_avg), *v = static_cast<T*>(exp_avg_sq);
    const T* g0 = static_cast<const T*>(grad);
    const bool decoupled = s.decoupled_weight_decay, rectified = s.rect > 0;
    const A sign = s.maximize ? A(-1) : A(1), wd = decoupled ? A(0) : A(s.weight_decay),
            decay = decoupled ? A(1.0 - s.lr * s.weight_decay) : A(1), w = A(1.0 - s.beta1), b2 = A(s.beta2),
            w2 = A(1.0 - s.beta2), bc1 = A(s.bias_correction1), sqrt_bc2 = A(std::sqrt(s.bias_correction2)),
            eps = A(s.eps), lr = A(s.lr), rect = A(s.rect);
    parallel_ranges(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        A pi = A(p[i]);
        A g = A(g0[i]) * sign;
        if (wd != A(0)) g = g + wd * pi;
        if (decay != A(1)) pi = A(T(pi * decay));
        m[i] = T(lerp(A(m[i]), g, w));
        v[i] = T(A(v[i]) * b2 + w2 * g * g);
        A upd = A(T(A(T(A(m[i]) / bc1)) * lr));
        if (rectified) {
          A adaptive = A(T(sqrt_bc2 / A(T(std::sqrt(A(v[i])) + eps))));
          upd = A(T(A(T(upd * adaptive)) * rect));
        }
        p[i] = T(pi - upd);
      }
    });
  });
}

}  // namespace lucid::kernels
