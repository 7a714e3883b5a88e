// LayerNorm over the trailing normalized_shape dims (N features per slice), kept beside RMSNorm
// so the two can be compared as the RMSNorm paper does:
//   mean = sum x / N,  rstd = 1 / sqrt(sum (x - mean)^2 / N + eps),  y = (x - mean) * rstd * w + b
// w and b optional. Saved: x and w (slots 0, 1; slot 2 is bias's edge and saves nothing),
// saved_mean_ and saved_rstd_ (outer_,) in acc dtype. Backward (xhat = (x - mean) rstd, gy = grad_out w):
//   dx = rstd (gy - mean(gy) - xhat mean(gy xhat)),  dw = sum grad_out xhat,  db = sum grad_out.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"
#include "ops/norm_node.h"

namespace lucid {

struct LayerNormBackward : MeanVarNormBackward<LayerNormBackward> {
  static const OpSchema& schema_v1;  // {layer_norm, 1, ForceFP32, produces_grad}

  // saved_mean_, saved_rstd_: (outer_,)
  size_t outer_ = 0, N_ = 0;

  const char* name() const override { return "LayerNormBackward"; }
  // {dx, d_weight, d_bias}, each in its input's dtype (nullptr where not needed).
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the same fused values, each recorded with a LayerNormBackwardBackward node.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

// The node of one output of LayerNormBackward under create_graph=True (which_: 0 dx, 1 d_weight,
// 2 d_bias): {d grad_out, d x, d weight} in closed form from the saved mean and rstd
// (kernels/cpu/norm_double.h). Saved: grad_out, x, weight. The d_weight and d_bias nodes hand
// their upstream to the dx node when that one is still to run (one pass for all three, as in
// NOTE [one pass for both outputs] of ops/rms_norm.h).
struct LayerNormBackwardBackward : FuncOp<LayerNormBackwardBackward, 3> {
  static const OpSchema& schema_v1;  // {layer_norm_backward, 1, ForceFP32, produces_grad}
  TensorImplPtr saved_mean_, saved_rstd_;
  size_t outer_ = 0, N_ = 0;
  DType compute_dtype_ = kDefaultFloat;
  int which_ = 0;
  std::weak_ptr<LayerNormBackwardBackward> partner_;  // on the d_weight / d_bias nodes: the dx node
  TensorImplPtr deferred_v_, deferred_z_;             // on the dx node: their upstreams
  const char* name() const override { return "LayerNormBackwardBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);  // grad_out null: deferred only
  bool has_deferred() const override { return deferred_v_ || deferred_z_; }
  void release_saved() override {
    saved_mean_.reset();
    saved_rstd_.reset();
    deferred_v_.reset();
    deferred_z_.reset();
    FuncOp::release_saved();
  }
};

TensorImplPtr layer_norm(const TensorImplPtr& x, const Shape& normalized_shape, const TensorImplPtr& weight,
                         const TensorImplPtr& bias, double eps);

}  // namespace lucid
