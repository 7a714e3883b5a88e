// GroupNorm (PyTorch's group_norm) over x of shape (N, C, *): the C channels are split into G
// consecutive groups of C/G; statistics per (sample, group) over the group's channels and all
// spatial positions (L = C/G * prod(spatial) values):
//   mean, rstd = 1 / sqrt(biased var + eps),  y = (x - mean) rstd w[c] + b[c]   (w, b: (C,) or absent)
// InstanceNorm without running statistics is GroupNorm with G = C.
// Saved: x, w (slots 0, 1; slot 2 is bias's edge), saved_mean_ and saved_rstd_ (N, G) in acc dtype.
// Backward per (sample, group): dx = rstd (gy - mean(gy) - xhat mean(gy xhat)), gy = grad_out w[c];
//   dw[c] = sum grad_out xhat, db[c] = sum grad_out. Double backward: the same in recorded ops.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"
#include "ops/norm_node.h"

namespace lucid {

struct GroupNormBackward : MeanVarNormBackward<GroupNormBackward> {
  static const OpSchema& schema_v1;  // {group_norm, 1, ForceFP32, produces_grad}

  // saved_mean_, saved_rstd_: (N_, G_)
  size_t N_ = 0, C_ = 0, S_ = 0, G_ = 0;

  const char* name() const override { return "GroupNormBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

TensorImplPtr group_norm(const TensorImplPtr& x, int64_t num_groups, const TensorImplPtr& weight,
                         const TensorImplPtr& bias, double eps);

}  // namespace lucid
