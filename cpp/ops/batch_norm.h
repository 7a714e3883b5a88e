// BatchNorm (PyTorch's batch_norm) over x of shape (N, C, *): statistics per channel over the
// batch and spatial positions (M = N * prod(spatial) values each),
//   training: mean, var = batch statistics (biased var for normalising); running stats, when
//             given, become (1 - momentum) running + momentum * stat (unbiased var, M/(M-1));
//   eval:     mean, var = running_mean, running_var (constants for autograd);
//   y = (x - mean) / sqrt(var + eps) * w + b.
// Saved: x, w (slots 0, 1; slot 2 is bias's edge), saved_mean_ and saved_rstd_ (C,) in acc dtype.
// Backward (xhat = (x - mean) rstd, gy = grad_out w, means over the channel's M values):
//   training dx = rstd (gy - mean(gy) - xhat mean(gy xhat)); eval dx = rstd gy;
//   dw = sum grad_out xhat, db = sum grad_out. Double backward: the same formula in recorded ops.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"
#include "ops/norm_node.h"

namespace lucid {

struct BatchNormBackward : MeanVarNormBackward<BatchNormBackward> {
  static const OpSchema& schema_v1;  // {batch_norm, 1, ForceFP32, produces_grad}

  // saved_mean_, saved_rstd_: (C_,)
  size_t N_ = 0, C_ = 0, S_ = 0;
  bool training_ = true;

  const char* name() const override { return "BatchNormBackward"; }
  // {dx, d_weight, d_bias}, each in its input's dtype (nullptr where not needed).
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

// running_mean/running_var: (C,) or nullptr (then training must be true); updated in place
// (version bumped) when training. momentum in [0, 1] is the weight of the new statistic.
TensorImplPtr batch_norm(const TensorImplPtr& x, const TensorImplPtr& weight, const TensorImplPtr& bias,
                         const TensorImplPtr& running_mean, const TensorImplPtr& running_var, bool training,
                         double momentum, double eps);

}  // namespace lucid
