// LayerNorm over the trailing normalized_shape dims (N features per slice), kept beside RMSNorm
// so the two can be compared as the RMSNorm paper does:
//   mean = sum x / N,  rstd = 1 / sqrt(sum (x - mean)^2 / N + eps),  y = (x - mean) * rstd * w + b
// w and b optional. Saved: x and w (slots 0, 1; slot 2 is bias's edge and saves nothing),
// saved_mean_ and saved_rstd_ (outer_,) in acc dtype. Backward (xhat = (x - mean) rstd, gy = grad_out w):
//   dx = rstd (gy - mean(gy) - xhat mean(gy xhat)),  dw = sum grad_out xhat,  db = sum grad_out.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

struct LayerNormBackward : FuncOp<LayerNormBackward, 3> {
  static const OpSchema& schema_v1;  // {layer_norm, 1, ForceFP32, produces_grad}

  TensorImplPtr saved_mean_, saved_rstd_;  // (outer_,)
  size_t outer_ = 0, N_ = 0;
  double eps_ = 0;
  DType compute_dtype_ = kDefaultFloat;
  Shape bias_shape_;
  DType bias_dtype_ = kDefaultFloat;

  const char* name() const override { return "LayerNormBackward"; }
  // {dx, d_weight, d_bias}, each in its input's dtype (nullptr where not needed).
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the same formula written with recorded ops (mean and rstd recomputed from x).
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  void release_saved() override {
    saved_mean_.reset();
    saved_rstd_.reset();
    AutogradNode::release_saved();
  }
};

TensorImplPtr layer_norm(const TensorImplPtr& x, const Shape& normalized_shape, const TensorImplPtr& weight,
                         const TensorImplPtr& bias, double eps);

}  // namespace lucid
