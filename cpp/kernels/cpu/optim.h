// Optimizer updates of one contiguous tensor, in PyTorch's single-tensor formulas and order:
//   SGD:  g' = g + wd*p; buf = first ? g' : momentum*buf + (1-dampening)*g';
//         p -= lr * (nesterov ? g' + momentum*buf : buf)   (p -= lr*g' without momentum)
//   Adam: g' = g + wd*p (AdamW: p *= 1 - lr*wd instead); m += (1-b1)*(g'-m);
//         v = b2*v + (1-b2)*g'^2; p -= step_size * m / (sqrt(v)/bc2_sqrt + eps)
// Math in acc_t<T>; only stored values (param, state) round to T. NOTE: PyTorch also rounds its
// half-precision temporaries, so its float16 Adam makes eps=1e-8 zero and divides by it; we don't.
// g + wd*p is computed even for wd == 0 (PyTorch skips it): the same result for any finite p.
#pragma once
#include <cstdint>

#include "core/dtype.h"

namespace lucid::kernels {

struct SgdStep {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, maximize;
};
// `buf` may be null when momentum == 0. `init_buf`: this is the buffer's first step (buf = g').
void sgd_update(DType dtype, int64_t n, void* param, const void* grad, void* buf, bool init_buf,
                const SgdStep& s);

struct AdamStep {
  double lr, beta1, beta2, eps, weight_decay;
  double step_size;  // lr / (1 - beta1^step)
  double bc2_sqrt;   // sqrt(1 - beta2^step)
  bool amsgrad, maximize, decoupled_weight_decay;
};
// `max_exp_avg_sq` is read only when amsgrad (may be null otherwise).
void adam_update(DType dtype, int64_t n, void* param, const void* grad, void* exp_avg, void* exp_avg_sq,
                 void* max_exp_avg_sq, const AdamStep& s);

// sum |x|^p over n elements in double (p == 2: sum of squares; p == 0: count of nonzeros);
// max |x| when p is +inf. NaN propagates.
double norm_partial(DType dtype, int64_t n, const void* x, double p);
// x *= coef, in place.
void scale_inplace(DType dtype, int64_t n, void* x, double coef);

}  // namespace lucid::kernels
