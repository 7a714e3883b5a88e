// Fused multi-tensor optimizer steps: one call updates every parameter of a param group, so a
// step costs one trip into C++ instead of a handful of tensor ops per parameter.
// Entries whose grad is null are skipped (their state is neither read nor written). State
// tensors (momentum buffers, exp_avg, ...) must have their parameter's shape and dtype; any
// tensor that is not contiguous is updated through a contiguous copy and written back. Every
// tensor written has its version bumped, so a graph that saved a parameter notices the update.
// No autograd: these are optimizer updates, outside the graph by definition.
#pragma once
#include <vector>

#include "core/tensor_impl.h"
#include "kernels/cpu/optim.h"

namespace lucid {

using TensorList = std::vector<TensorImplPtr>;

// A tensor an update writes (the optimizers of optim.cpp and optim_adaptive.cpp): the kernel sees
// `work` (contiguous); `done()` copies it back when it is a copy and bumps the version of the
// caller's tensor.
struct UpdateTarget {
  TensorImplPtr orig, work;
  explicit UpdateTarget(const TensorImplPtr& t) : orig(t), work(t ? contiguous_raw(t) : nullptr) {}
  void* ptr() const { return work ? work->raw() : nullptr; }
  void done() {
    if (!orig) return;
    if (work != orig) copy_into(orig, work);
    orig->bump_version();
  }
};

// SGD with momentum / dampening / nesterov / weight decay (PyTorch's torch.optim.SGD).
// `momentum_buffers[i]` may be null: with momentum it is then created holding the effective
// gradient (PyTorch's first step). Returns the buffers (new ones filled in).
TensorList sgd_(const TensorList& params, const TensorList& grads, TensorList momentum_buffers,
                const kernels::SgdStep& opts);

struct AdamOptions {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize, decoupled_weight_decay;  // decoupled: AdamW
};
// Adam / AdamW (PyTorch's torch.optim.Adam and AdamW). `steps[i]` is a one-element tensor,
// incremented before the update; bias corrections use its new value. `max_exp_avg_sqs` is
// used only when amsgrad.
void adam_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
           const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& steps,
           const AdamOptions& opts);

// The norm of order `norm_type` (> 0, or +inf) of all tensors together, as a 0-d tensor of
// the first tensor's dtype (float32 when the list is empty). Accumulates in double.
TensorImplPtr total_norm(const TensorList& tensors, double norm_type);
// Scales every grad in place by min(1, max_norm / (total + 1e-6)); returns the total norm.
// A non-finite total raises when error_if_nonfinite.
TensorImplPtr clip_grad_norm_(const TensorList& grads, double max_norm, double norm_type,
                              bool error_if_nonfinite);

}  // namespace lucid
