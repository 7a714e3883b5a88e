#include "kernels/cpu/optim.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/ranges.h"

namespace lucid::kernels {

namespace {

#if LUCID_X86_DISPATCH
// The vector copies of the optimizer steps. Only the fmas the bodies write are fused
// (fp-contract=off): GCC would otherwise fuse, for one, AdamW's decayed p with the step, which
// PyTorch rounds apart.
template <class Body, class... Args>
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"), optimize("fp-contract=off"))) void
fp_exact_avx512(Args... a) {
  Body::run(a...);
}
template <class Body, class... Args>
__attribute__((target("avx2,fma"), optimize("fp-contract=off"))) void fp_exact_avx2_fma(Args... a) {
  Body::run(a...);
}
#endif

// Vec::run(a...) in the best vector copy this CPU runs when kVector (float and double steps),
// else, and on CPUs without FMA, Base::run(a...) as compiled.
template <bool kVector, class Vec, class Base, class... Args>
void run_fp_exact(Args... a) {
  if constexpr (kVector) {
#if LUCID_X86_DISPATCH
    if (cpu_has(Isa::Avx512)) return fp_exact_avx512<Vec>(a...);
    if (cpu_has(Isa::Avx2Fma)) return fp_exact_avx2_fma<Vec>(a...);
#endif
  }
  Base::run(a...);
}
template <class T>
inline constexpr bool kFmaSteps = std::is_same_v<T, float> || std::is_same_v<T, double>;

// Memory accesses are unconditional so the loops vectorize: options are factors or selects of
// computed values; the flags that decide whether a tensor is written (momentum, amsgrad), and
// the choice of lerp formula, are template parameters.

// One SGD update of elements [lo, hi). With kFma (the AVX2+FMA and AVX-512 copies), every
// `x.add(y, alpha=a)` of PyTorch's step is fma(y, a, x), as its CPU add kernel computes it; the
// baseline copy rounds the product first.
template <bool kMomentum, bool kFma, class T>
struct SgdRange {
  static LUCID_ALWAYS_INLINE acc_t<T> axpy(acc_t<T> y, acc_t<T> a, acc_t<T> x) {
    if constexpr (kFma) return std::fma(y, a, x);
    else return x + a * y;
  }
  static LUCID_ALWAYS_INLINE void run(int64_t lo, int64_t hi, T* __restrict param, const T* __restrict grad,
                                      T* __restrict buf, bool init_buf, const SgdStep* st) {
    using A = acc_t<T>;
    const SgdStep& s = *st;
    const A wd = A(s.weight_decay), mom = A(s.momentum), one_minus_damp = A(1.0 - s.dampening),
            neg_lr = A(-s.lr), sign = s.maximize ? A(-1) : A(1);
    const bool nesterov = s.nesterov;
    for (int64_t i = lo; i < hi; ++i) {
      A p = A(param[i]);
      A g = axpy(p, wd, A(grad[i]) * sign);  // NOTE: wd * p with wd == 0 only matters for a non-finite p
      if constexpr (kMomentum) {
        A b = A(buf[i]);  // a new buffer is zero-filled by the op, so this read is defined
        buf[i] = T(init_buf ? g : axpy(g, one_minus_damp, b * mom));
        b = A(buf[i]);
        g = nesterov ? axpy(b, mom, g) : b;
      }
      param[i] = T(axpy(g, neg_lr, p));
    }
  }
};

template <bool kMomentum, class T>
void sgd_loop(int64_t n, T* param, const T* grad, T* buf, bool init_buf, const SgdStep& s) {
  const SgdStep* st = &s;
  parallel_ranges(n, [=](int64_t lo, int64_t hi) {
    run_fp_exact<kFmaSteps<T>, SgdRange<kMomentum, true, T>, SgdRange<kMomentum, false, T>>(lo, hi, param, grad, buf,
                                                                                          init_buf, st);
  });
}

// One Adam update of elements [lo, hi). With kFma (the AVX2+FMA and AVX-512 copies) the three
// updates PyTorch's CPU kernels compute with a fused multiply-add use one too: the L2 term
// fma(wd, p, g), exp_avg's lerp (fma(w, g - m, m), or fma(w - 1, g - m, g) for w >= 0.5) and
// exp_avg_sq's fma((1 - beta2) * g, g, beta2 * v); the baseline copy rounds each product. What
// still differs from PyTorch in the last bit is its sqrt (MKL's, not correctly rounded).
template <bool kAmsgrad, bool kSmallWeight, bool kFma, class T>
struct AdamRange {
  static LUCID_ALWAYS_INLINE void run(int64_t lo, int64_t hi, T* __restrict param, const T* __restrict grad,
                                      T* __restrict exp_avg, T* __restrict exp_avg_sq, T* __restrict max_sq,
                                      const AdamStep* st) {
    using A = acc_t<T>;
    const AdamStep& s = *st;
    const bool decoupled = s.decoupled_weight_decay;
    // Options as factors (exact: x * 1 == x, x * -1 == -x).
    const A sign = s.maximize ? A(-1) : A(1);
    const A l2_wd = decoupled ? A(0) : A(s.weight_decay);
    const A decay = decoupled ? A(1.0 - s.lr * s.weight_decay) : A(1);
    const A w1 = A(1.0 - s.beta1), one_minus_w1 = A(1) - w1, b2 = A(s.beta2), w2 = A(1.0 - s.beta2);
    const A bc2 = A(s.bc2_sqrt), eps = A(s.eps), neg_step = A(-s.step_size);
    for (int64_t i = lo; i < hi; ++i) {
      A p = A(param[i]);
      // NOTE: 0 * p only matters for a non-finite p
      A g = kFma ? std::fma(l2_wd, p, A(grad[i]) * sign) : A(grad[i]) * sign + l2_wd * p;
      p = p * decay;
      A m0 = A(exp_avg[i]);
      A d = g - m0;
      // PyTorch's lerp: the formula depends on whether the weight is below 0.5
      if constexpr (kFma) {
        exp_avg[i] = T(kSmallWeight ? std::fma(w1, d, m0) : std::fma(-one_minus_w1, d, g));
        exp_avg_sq[i] = T(std::fma(w2 * g, g, A(exp_avg_sq[i]) * b2));
      } else {
        exp_avg[i] = T(kSmallWeight ? m0 + w1 * d : g - d * one_minus_w1);
        exp_avg_sq[i] = T(A(exp_avg_sq[i]) * b2 + w2 * g * g);
      }
      A m = A(exp_avg[i]), v = A(exp_avg_sq[i]);
      if constexpr (kAmsgrad) {
        // NOTE: std::max(a, b) would drop a NaN in b; PyTorch's maximum propagates either NaN.
        max_sq[i] = T(v != v ? v : std::max(A(max_sq[i]), v));
        v = A(max_sq[i]);
      }
      A denom = std::sqrt(v) / bc2 + eps;
      param[i] = T(p + neg_step * m / denom);
    }
  }
};

template <bool kAmsgrad, bool kSmallWeight, class T>
void adam_loop(int64_t n, T* param, const T* grad, T* exp_avg, T* exp_avg_sq, T* max_sq, const AdamStep& s) {
  const AdamStep* st = &s;
  parallel_ranges(n, [=](int64_t lo, int64_t hi) {
    run_fp_exact<kFmaSteps<T>, AdamRange<kAmsgrad, kSmallWeight, true, T>, AdamRange<kAmsgrad, kSmallWeight, false, T>>(
        lo, hi, param, grad, exp_avg, exp_avg_sq, max_sq, st);
  });
}

// The p-norm's sum (the largest |x| for p = inf) over fixed spans of kNormSpan elements, each in
// kNormLanes interleaved partials, then the spans in order: the same bits on any number of
// threads, and the lanes let the double adds vectorize. NaN propagates through the max.
constexpr int64_t kNormSpan = int64_t(1) << 14;
constexpr int kNormLanes = 8;

template <class T, class Term, class Combine>
double span_reduce(int64_t n, const T* x, Term term, Combine combine) {
  auto span = [&](int64_t s) {
    const int64_t i0 = s * kNormSpan, i1 = std::min(n, i0 + kNormSpan);
    double lane[kNormLanes] = {};
    int64_t i = i0;
    for (; i + kNormLanes <= i1; i += kNormLanes)
      for (int l = 0; l < kNormLanes; ++l) lane[l] = combine(lane[l], term(double(acc_t<T>(x[i + l]))));
    for (; i < i1; ++i) lane[0] = combine(lane[0], term(double(acc_t<T>(x[i]))));
    for (int w = kNormLanes / 2; w > 0; w /= 2)
      for (int l = 0; l < w; ++l) lane[l] = combine(lane[l], lane[l + w]);
    return lane[0];
  };
  const int64_t spans = (n + kNormSpan - 1) / kNormSpan;
  if (spans <= 1) return n > 0 ? span(0) : 0.0;
  std::vector<double> part(static_cast<size_t>(spans));
  parallel_chunks(threads_for_work(n), spans, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) part[size_t(s)] = span(s);
  });
  double acc = part[0];
  for (int64_t s = 1; s < spans; ++s) acc = combine(acc, part[size_t(s)]);
  return acc;
}

template <class T>
double norm_impl(int64_t n, const T* x, double p) {
  const auto plus = [](double a, double b) { return a + b; };
  if (std::isinf(p))
    return span_reduce(n, x, [](double v) { return std::abs(v); },
                       [](double a, double b) { return b != b || b > a ? b : a; });
  if (p == 2) return span_reduce(n, x, [](double v) { return v * v; }, plus);
  if (p == 1) return span_reduce(n, x, [](double v) { return std::abs(v); }, plus);
  if (p == 0) return span_reduce(n, x, [](double v) { return v != 0 ? 1.0 : 0.0; }, plus);
  return span_reduce(n, x, [p](double v) { return std::pow(std::abs(v), p); }, plus);
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
