#include "kernels/cpu/optim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/loops.h"

namespace lucid::kernels {

namespace {

// Runs body(i) for i in [0, n), split over threads when the tensor is large enough to repay it.
template <class F>
inline void for_each_index(int64_t n, F body) {
  if (n < 2 * kParallelGrain) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) body(i);
}

template <class T>
void sgd_impl(int64_t n, T* param, const T* grad, T* buf, bool init_buf, const SgdStep& s) {
  using A = acc_t<T>;
  const A wd = A(s.weight_decay), mom = A(s.momentum), one_minus_damp = A(1.0 - s.dampening),
          neg_lr = A(-s.lr);
  const bool use_wd = s.weight_decay != 0, use_mom = s.momentum != 0, maximize = s.maximize,
             nesterov = s.nesterov;
  for_each_index(n, [&](int64_t i) {
    A p = A(param[i]);
    A g = A(grad[i]);
    if (maximize) g = -g;
    if (use_wd) g = g + wd * p;
    if (use_mom) {
      buf[i] = T(init_buf ? g : A(buf[i]) * mom + one_minus_damp * g);
      A b = A(buf[i]);
      g = nesterov ? g + mom * b : b;
    }
    param[i] = T(p + neg_lr * g);
  });
}

template <class T>
void adam_impl(int64_t n, T* param, const T* grad, T* exp_avg, T* exp_avg_sq, T* max_sq, const AdamStep& s) {
  using A = acc_t<T>;
  const A wd = A(s.weight_decay), decay = A(1.0 - s.lr * s.weight_decay);
  const A w1 = A(1.0 - s.beta1), b2 = A(s.beta2), w2 = A(1.0 - s.beta2);
  const A bc2 = A(s.bc2_sqrt), eps = A(s.eps), neg_step = A(-s.step_size);
  const bool small_w = std::abs(w1) < A(0.5);  // PyTorch's lerp picks its formula by weight
  const bool use_wd = s.weight_decay != 0, decoupled = s.decoupled_weight_decay, maximize = s.maximize,
             amsgrad = s.amsgrad;
  for_each_index(n, [&](int64_t i) {
    A p = A(param[i]);
    A g = A(grad[i]);
    if (maximize) g = -g;
    if (use_wd) {
      if (decoupled) {
        p = p * decay;
      } else {
        g = g + wd * p;
      }
    }
    A m0 = A(exp_avg[i]);
    exp_avg[i] = T(small_w ? m0 + w1 * (g - m0) : g - (g - m0) * (A(1) - w1));
    exp_avg_sq[i] = T(A(exp_avg_sq[i]) * b2 + w2 * g * g);
    A m = A(exp_avg[i]), v = A(exp_avg_sq[i]);
    if (amsgrad) {
      // NOTE: std::max(a, b) would drop a NaN in b; PyTorch's maximum propagates either NaN.
      max_sq[i] = T(v != v ? v : std::max(A(max_sq[i]), v));
      v = A(max_sq[i]);
    }
    A denom = std::sqrt(v) / bc2 + eps;
    param[i] = T(p + neg_step * m / denom);
  });
}

template <class T>
double norm_impl(int64_t n, const T* x, double p) {
  double acc = 0;
  if (std::isinf(p)) {
    bool nan = false;
#pragma omp parallel for reduction(max : acc) reduction(|| : nan) if (n >= 2 * kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
      double a = std::abs(double(acc_t<T>(x[i])));
      if (a != a) nan = true;
      acc = std::max(acc, a);
    }
    return nan ? std::numeric_limits<double>::quiet_NaN() : acc;
  }
  if (p == 2) {
#pragma omp parallel for reduction(+ : acc) if (n >= 2 * kParallelGrain)
    for (int64_t i = 0; i < n; ++i) {
      double a = double(acc_t<T>(x[i]));
      acc += a * a;
    }
  } else if (p == 1) {
#pragma omp parallel for reduction(+ : acc) if (n >= 2 * kParallelGrain)
    for (int64_t i = 0; i < n; ++i) acc += std::abs(double(acc_t<T>(x[i])));
  } else if (p == 0) {
#pragma omp parallel for reduction(+ : acc) if (n >= 2 * kParallelGrain)
    for (int64_t i = 0; i < n; ++i) acc += double(acc_t<T>(x[i])) != 0 ? 1.0 : 0.0;
  } else {
#pragma omp parallel for reduction(+ : acc) if (n >= 2 * kParallelGrain)
    for (int64_t i = 0; i < n; ++i) acc += std::pow(std::abs(double(acc_t<T>(x[i]))), p);
  }
  return acc;
}

}  // namespace

void sgd_update(DType dtype, int64_t n, void* param, const void* grad, void* buf, bool init_buf,
                const SgdStep& s) {
  LUCID_DISPATCH_FLOAT(dtype, "sgd", [&] {
    sgd_impl<scalar_t>(n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad),
                       static_cast<scalar_t*>(buf), init_buf, s);
  });
}

void adam_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                 void* max_exp_avg_sq, const AdamStep& s) {
  LUCID_DISPATCH_FLOAT(dtype, "adam", [&] {
    adam_impl<scalar_t>(n, static_cast<scalar_t*>(param), static_cast<const scalar_t*>(grad),
                        static_cast<scalar_t*>(exp_avg), static_cast<scalar_t*>(exp_avg_sq),
                        static_cast<scalar_t*>(max_exp_avg_sq), s);
  });
}

double norm_partial(DType dtype, int64_t n, const void* x, double p) {
  double out = 0;
  LUCID_DISPATCH_FLOAT(dtype, "clip_grad_norm_", [&] { out = norm_impl<scalar_t>(n, static_cast<const scalar_t*>(x), p); });
  return out;
}

void scale_inplace(DType dtype, int64_t n, void* x, double coef) {
  LUCID_DISPATCH_FLOAT(dtype, "clip_grad_norm_", [&] {
    using A = acc_t<scalar_t>;
    auto* v = static_cast<scalar_t*>(x);
    const A c = A(coef);
    for_each_index(n, [&](int64_t i) { v[i] = scalar_t(A(v[i]) * c); });
  });
}

}  // namespace lucid::kernels
