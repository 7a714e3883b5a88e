// Updates of one contiguous tensor for the adaptive optimizers, in PyTorch's single-tensor
// formulas and order (g' = -g when maximize, then g' += wd * p unless the decay is decoupled):
//   RMSprop:  v = alpha v + (1-alpha) g'^2; [c = lerp(c, g', 1-alpha); d = sqrt(v - c^2)] else
//             d = sqrt(v); d += eps; momentum: b = mom b + g'/d, p -= lr b; else p -= lr g'/d
//   Adagrad:  s += g'^2; p -= clr g' / (sqrt(s) + eps)
//   Adadelta: v = rho v + (1-rho) g'^2; dl = sqrt(u + eps) / sqrt(v + eps) * g';
//             u = rho u + (1-rho) dl^2; p -= lr dl
//   Adamax:   m = lerp(m, g', 1-b1); u = max(b2 u, |g'| + eps); p -= clr m / u
//   NAdam:    m = lerp(m, g', 1-b1); v = b2 v + (1-b2) g'^2; d = sqrt(v / bc2) + eps;
//             p += c_grad g' / d; p += c_avg m / d
//   RAdam:    m, v as NAdam; p -= lr m / bc1 * (rect ? sqrt(bc2) / (sqrt(v) + eps) * rect : 1)
// The per-step scalars (clr, bias corrections, NAdam's coefficients, RAdam's rectification)
// come from the op. Math in acc_t<T>; only stored values round to T.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

struct RmspropStep {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered, maximize;
};
// grad_avg is read only when centered, momentum_buf only when momentum > 0.
void rmsprop_update(DType dtype, int64_t n, void* param, const void* grad, void* square_avg, void* grad_avg,
                    void* momentum_buf, const RmspropStep& s);

struct AdagradStep {
  double clr, eps, weight_decay;  // clr = lr / (1 + (step - 1) lr_decay)
  bool maximize;
};
void adagrad_update(DType dtype, int64_t n, void* param, const void* grad, void* sum, const AdagradStep& s);

struct AdadeltaStep {
  double lr, rho, eps, weight_decay;
  bool maximize;
};
void adadelta_update(DType dtype, int64_t n, void* param, const void* grad, void* square_avg, void* acc_delta,
                     const AdadeltaStep& s);

struct AdamaxStep {
  double beta1, beta2, eps, weight_decay, clr;  // clr = lr / (1 - beta1^step)
  bool maximize;
};
void adamax_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_inf,
                   const AdamaxStep& s);

struct NadamStep {
  double lr, beta1, beta2, eps, weight_decay;
  double bias_correction2;      // 1 - beta2^step
  double coef_grad, coef_avg;   // -lr (1 - mu) / (1 - mu_product), -lr mu_next / (1 - mu_product_next)
  bool decoupled_weight_decay, maximize;
};
void nadam_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                  const NadamStep& s);

struct RadamStep {
  double lr, beta1, beta2, eps, weight_decay;
  double bias_correction1, bias_correction2;
  double rect;  // the variance rectification term, or 0 when rho_t <= 5 (plain momentum step)
  bool decoupled_weight_decay, maximize;
};
void radam_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                  const RadamStep& s);

}  // namespace lucid::kernels
