// RMSNorm (Zhang & Sennrich 2019, arXiv:1910.07467) and its partial variant pRMSNorm.
// Per slice of the normalised trailing dims (N features, flattened; rstd from the first k):
//   rstd = 1 / sqrt(mean_{j<k} x_j^2 + eps),   y_i = x_i * rstd * gamma_i   (every i < N)
// k = N is plain RMSNorm. Saved for backward: x, gamma (the two FuncOp slots) and saved_rstd_
// (outer_,) in acc dtype (float32 for half/float32, float64 for float64); outer_ * N_ == numel(x).
// Backward (gy = grad_out * gamma): dx_i = rstd gy_i - [i < k] x_i rstd^3 / k * sum_j gy_j x_j,
// d_gamma_i = sum over slices of grad_out_i x_i rstd. gamma may be absent (no gain, no d_gamma).
// Partial RMSNorm is an option of this op, not a node of its own: it saves the same state and
// runs the same kernels, so it is this node with k_ < N_, under the same schema rms_norm v1.
#pragma once
#include <initializer_list>
#include <utility>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

struct RMSNormBackward : FuncOp<RMSNormBackward, 2> {
  static const OpSchema& schema_v1;  // {rms_norm, 1, ForceFP32, produces_grad}

  TensorImplPtr saved_rstd_;  // per-slice reciprocal RMS, shape (outer_,)
  size_t outer_ = 0;          // product of the leading (not normalised) dims of x
  size_t N_ = 0;              // product of the normalised trailing dims (numel of gamma)
  size_t k_ = 0;              // features feeding rstd: N_ for RMSNorm, fewer for pRMSNorm
  double eps_ = 0;
  DType compute_dtype_ = kDefaultFloat;  // the dtype forward ran in (and backward runs in)

  const char* name() const override { return "RMSNormBackward"; }

  // Normalises x over its last gamma.ndim dims, applies gamma, records this node as grad_fn
  // when grad mode is on and x or gamma requires grad. Raises ShapeMismatch when
  // gamma.ndim > x.ndim or the trailing dims of x differ from gamma's shape.
  static TensorImplPtr forward(const TensorImplPtr& x, const TensorImplPtr& gamma, double eps);
  // {dx, d_gamma} in saved-input order, each in its input's dtype (nullptr where not needed).
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the same fused values, each recorded with an RMSNormBackwardBackward node.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  void release_saved() override {
    saved_rstd_.reset();
    FuncOp::release_saved();
  }
};

// The node of one output of RMSNormBackward under create_graph=True (dx when !wrt_gamma_, else
// d_gamma): maps that output's upstream gradient to {d grad_out, d x, d gamma} in closed form from
// the saved rstd (kernels/cpu/norm_double.h). Saved: grad_out, x, gamma (slots 0-2).
struct RMSNormBackwardBackward : FuncOp<RMSNormBackwardBackward, 3> {
  static const OpSchema& schema_v1;  // {rms_norm_backward, 1, ForceFP32, produces_grad}
  TensorImplPtr saved_rstd_;
  size_t outer_ = 0, N_ = 0, k_ = 0;
  DType compute_dtype_ = kDefaultFloat;
  bool wrt_gamma_ = false;
  // NOTE [one pass for both outputs]: the d_gamma node hands its upstream v to the dx node
  // (partner_) when that node is still to run in the same backward pass; the dx node then
  // computes both contributions in one kernel pass (deferred_v_), and the engine needs no sums.
  std::weak_ptr<RMSNormBackwardBackward> partner_;  // on the d_gamma node: the dx node
  TensorImplPtr deferred_v_;                         // on the dx node: the d_gamma node's upstream
  const char* name() const override { return "RMSNormBackwardBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);  // grad_out null: deferred_v_ only
  bool has_deferred() const override { return deferred_v_ != nullptr; }
  void release_saved() override {
    saved_rstd_.reset();
    deferred_v_.reset();
    FuncOp::release_saved();
  }
};

// The functional form: normalised dims given by `normalized_shape` (positive sizes matching
// x's trailing dims), gamma optional (nullptr), partial_ratio in [0, 1] (0 = all features).
// Under autocast (ForceFP32) half inputs run in float32 and the output is float32; outside it
// the output has the promoted dtype of x and gamma. eps must be >= 0.
TensorImplPtr rms_norm(const TensorImplPtr& x, const Shape& normalized_shape, const TensorImplPtr& gamma,
                       double eps, double partial_ratio);

// k = max(1, ceil(N * partial_ratio)), or N when partial_ratio == 0. Raises ShapeMismatch for a
// ratio outside [0, 1] or NaN, or N < 1.
int64_t rms_norm_partial_k(int64_t N, double partial_ratio);

// Shared by the norm family: checks `normalized_shape` (non-empty, positive) against x's
// trailing dims, and each given parameter's shape against it; returns N = its numel.
int64_t check_normalized_shape(const char* op, const TensorImplPtr& x, const Shape& normalized_shape,
                               std::initializer_list<std::pair<const char*, const TensorImplPtr*>> params);
// DtypeMismatch unless x is a floating Tensor (not None) and each given parameter is floating.
void check_norm_inputs(const char* op, const TensorImplPtr& x,
                       std::initializer_list<std::pair<const char*, const TensorImplPtr*>> params);
// Raises ShapeMismatch (a ValueError) unless eps >= 0 (NaN fails too).
void check_eps(const char* op, double eps);

}  // namespace lucid
