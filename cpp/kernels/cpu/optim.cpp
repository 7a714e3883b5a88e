#include "kernels/cpu/optim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <omp.h>

#include "kernels/cpu/loops.h"
#include "kernels/cpu/ranges.h"

namespace lucid::kernels {

namespace {

// Memory accesses are unconditional so the loops vectorize: options are factors or selects of
// computed values; the flags that decide whether a tensor is written (momentum, amsgrad), and
// the choice of lerp formula, are template parameters.
template <bool kMomentum, class T>
void sgd_loop(int64_t n, T* param_, const T* grad_, T* buf_, bool init_buf, const SgdStep& s) {
  using A = acc_t<T>;
  const A wd = A(s.weight_decay), mom = A(s.momentum), one_minus_damp = A(1.0 - s.dampening),
          neg_lr = A(-s.lr), sign = s.maximize ? A(-1) : A(1);
  const bool nesterov = s.nesterov;
  parallel_ranges(n, [=](int64_t lo, int64_t hi) {
    T* __restrict param = param_;
    const T* __restrict grad = grad_;
    T* __restrict buf = buf_;
    for (int64_t i = lo; i < hi; ++i) {
      A p = A(param[i]);
      A g = A(grad[i]) * sign + wd * p;  // NOTE: wd * p with wd == 0 only matters for a non-finite p
      if constexpr (kMomentum) {
        A b = A(buf[i]);  // a new buffer is zero-filled by the op, so this read is defined
        buf[i] = T(init_buf ? g : b * mom + one_minus_damp * g);
        b = A(buf[i]);
        g = nesterov ? g + mom * b : b;
      }
      param[i] = T(p + neg_lr * g);
    }
  });
}

template <bool kAmsgrad, bool kSmallWeight, class T>
void adam_loop(int64_t n, T* param_, const T* grad_, T* exp_avg_, T* exp_avg_sq_, T* max_sq_, const AdamStep& s) {
  using A = acc_t<T>;
  const bool decoupled = s.decoupled_weight_decay;
  // Options as factors (exact: x * 1 == x, x * -1 == -x).
  const A sign = s.maximize ? A(-1) : A(1);
  const A l2_wd = decoupled ? A(0) : A(s.weight_decay);
  const A decay = decoupled ? A(1.0 - s.lr * s.weight_decay) : A(1);
  const A w1 = A(1.0 - s.beta1), one_minus_w1 = A(1) - w1, b2 = A(s.beta2), w2 = A(1.0 - s.beta2);
  const A bc2 = A(s.bc2_sqrt), eps = A(s.eps), neg_step = A(-s.step_size);
  parallel_ranges(n, [=](int64_t lo, int64_t hi) {
    T* __restrict param = param_;
    const T* __restrict grad = grad_;
    T* __restrict exp_avg = exp_avg_;
    T* __restrict exp_avg_sq = exp_avg_sq_;
    T* __restrict max_sq = max_sq_;
    for (int64_t i = lo; i < hi; ++i) {
      A p = A(param[i]);
      A g = A(grad[i]) * sign + l2_wd * p;  // NOTE: 0 * p only matters for a non-finite p
      p = p * decay;
      A m0 = A(exp_avg[i]);
      A d = g - m0;
      // PyTorch's lerp: the formula depends on whether the weight is below 0.5
      exp_avg[i] = T(kSmallWeight ? m0 + w1 * d : g - d * one_minus_w1);
      exp_avg_sq[i] = T(A(exp_avg_sq[i]) * b2 + w2 * g * g);
      A m = A(exp_avg[i]), v = A(exp_avg_sq[i]);
      if constexpr (kAmsgrad) {
        // NOTE: std::max(a, b) would drop a NaN in b; PyTorch's maximum propagates either NaN.
        max_sq[i] = T(v != v ? v : std::max(A(max_sq[i]), v));
        v = A(max_sq[i]);
      }
      A denom = std::sqrt(v) / bc2 + eps;
      param[i] = T(p + neg_step * m / denom);
    }
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
    auto* p = static_cast<scalar_t*>(param);
    auto* g = static_cast<const scalar_t*>(grad);
    auto* b = static_cast<scalar_t*>(buf);
    if (s.momentum != 0) {
      sgd_loop<true>(n, p, g, b, init_buf, s);
    } else {
      sgd_loop<false>(n, p, g, b, init_buf, s);
    }
  });
}

void adam_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                 void* max_exp_avg_sq, const AdamStep& s) {
  LUCID_DISPATCH_FLOAT(dtype, "adam", [&] {
    auto* p = static_cast<scalar_t*>(param);
    auto* g = static_cast<const scalar_t*>(grad);
    auto *m = static_cast<scalar_t*>(exp_avg), *v = static_cast<scalar_t*>(exp_avg_sq),
         *vmax = static_cast<scalar_t*>(max_exp_avg_sq);
    const bool small = std::abs(1.0 - s.beta1) < 0.5;
    if (s.amsgrad) {
      small ? adam_loop<true, true>(n, p, g, m, v, vmax, s) : adam_loop<true, false>(n, p, g, m, v, vmax, s);
    } else {
      small ? adam_loop<false, true>(n, p, g, m, v, vmax, s) : adam_loop<false, false>(n, p, g, m, v, vmax, s);
    }
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
    parallel_ranges(n, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) v[i] = scalar_t(A(v[i]) * c);
    });
  });
}

}  // namespace lucid::kernels
