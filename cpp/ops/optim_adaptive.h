// Fused multi-tensor steps of the adaptive optimizers (PyTorch's RMSprop, Adagrad, Adadelta,
// Adamax, NAdam, RAdam): one call updates every parameter of a param group. As in ops/optim.h:
// entries whose grad is null are skipped; state tensors must have their parameter's shape and
// dtype (a non-contiguous one is updated through a copy and written back); every tensor written
// has its version bumped; everything is validated before anything is written. `steps[i]` is a
// one-element tensor incremented before the update (per-step scalars use its new value).
// No autograd: optimizer updates are outside the graph.
#pragma once
#include <vector>

#include "core/tensor_impl.h"
#include "kernels/cpu/optim_adaptive.h"

namespace lucid {

using TensorList = std::vector<TensorImplPtr>;

// grad_avgs are used when centered, momentum_buffers when momentum > 0.
void rmsprop_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
              const TensorList& grad_avgs, const TensorList& momentum_buffers, const TensorList& steps,
              const kernels::RmspropStep& opts);

// clr = lr / (1 + (step - 1) * lr_decay) per parameter.
void adagrad_(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
              const TensorList& steps, double lr, double lr_decay, double weight_decay, double eps, bool maximize);

void adadelta_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
               const TensorList& acc_deltas, const TensorList& steps, const kernels::AdadeltaStep& opts);

void adamax_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
             const TensorList& exp_infs, const TensorList& steps, double lr, double beta1, double beta2, double eps,
             double weight_decay, bool maximize);

// mu_products[i]: NAdam's running product of the momentum coefficients (a one-element tensor,
// updated in its own dtype, as PyTorch keeps it in float32).
void nadam_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
            const TensorList& exp_avg_sqs, const TensorList& mu_products, const TensorList& steps, double lr,
            double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
            bool decoupled_weight_decay, bool maximize);

void radam_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
            const TensorList& exp_avg_sqs, const TensorList& steps, double lr, double beta1, double beta2, double eps,
            double weight_decay, bool decoupled_weight_decay, bool maximize);

}  // namespace lucid
