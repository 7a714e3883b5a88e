// Optimizer update kernels over one contiguous tensor of n elements (the ops in ops/optim.cpp
// call them once per parameter of a group). Formulas follow PyTorch's single-tensor paths:
//   SGD:  g' = g + wd*p; buf = init ? g' : momentum*buf + (1-dampening)*g';
//         d = nesterov ? g' + momentum*buf : buf (or g' without momentum); p -= lr*d
//   Adam: g' = g + wd*p (AdamW instead: p *= 1 - lr*wd); m += (1-b1)*(g'-m);
//         v = b2*v + (1-b2)*g'^2; p -= step_size * m / (sqrt(v)/bc2_sqrt + eps)
// Arithmetic runs in acc_t<T>, in PyTorch's operation order; only the stored values (param and
// state) are rounded to T. NOTE: PyTorch also rounds its temporaries to T for half types, so its
// float16 Adam turns eps=1e-8 into 0 and divides by zero where v underflows; we don't.
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
