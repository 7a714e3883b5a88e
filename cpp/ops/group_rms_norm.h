// GroupRMSNorm: RMSNorm taken per (row, channel group). channel_groups assigns each of the C
// channels a group id in 0..G-1 (any order, groups of any size >= 1); for input (B, C, *spatial)
// (S spatial positions; (B, C) and (B, C, 1) have S = 1), with n_g the channel count of group g:
//   rstd[b, g] = 1 / sqrt(sum_{c in g, s} x[b, c, s]^2 / (n_g S) + eps),
//   y[b, c, s] = x[b, c, s] * rstd[b, g(c)] * gamma[g(c)]
// gamma has shape (G,) or is absent. Saved: x, gamma (slots), saved_rstd_ (B, G) in acc dtype,
// the validated ids and counts. Backward per group (gy = grad_out * gamma[g(c)]):
//   dx = rstd gy - x rstd^3 / (n_g S) * sum_{c' in g, s} gy x,  d_gamma_g = sum_{b, c in g} grad_out x rstd.
// Ids must cover 0..G-1 with G = max id + 1: an unused id (an empty group) raises instead of
// silently leaving a gain that never trains, as a scatter-mean formulation would.
#pragma once
#include <utility>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

struct GroupRMSNormBackward : FuncOp<GroupRMSNormBackward, 2> {
  static const OpSchema& schema_v1;  // {group_rms_norm, 1, ForceFP32, produces_grad}

  TensorImplPtr saved_rstd_;  // (B_, G_)
  TensorImplPtr groups_;      // (C_,) int64 group id of each channel
  TensorImplPtr counts_;      // (G_,) int64 channels per group
  size_t B_ = 0, C_ = 0, S_ = 1, G_ = 0;
  double eps_ = 0;
  DType compute_dtype_ = kDefaultFloat;

  const char* name() const override { return "GroupRMSNormBackward"; }
  // {dx, d_gamma}, each in its input's dtype (nullptr where not needed).
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the same fused values, each recorded with a GroupRMSNormBackwardBackward node.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  void release_saved() override {
    saved_rstd_.reset();
    FuncOp::release_saved();
  }
};

// The node of one output of GroupRMSNormBackward under create_graph=True (dx when !wrt_gamma_,
// else d_gamma): {d grad_out, d x, d gamma} in closed form from the saved rstd, the RMSNorm
// double backward per (row, group) (kernels/cpu/norm_double.h). Saved: grad_out, x, gamma.
// As RMSNormBackwardBackward, the d_gamma node hands its upstream to the dx node when that one
// is still to run, so both are computed in one pass.
struct GroupRMSNormBackwardBackward : FuncOp<GroupRMSNormBackwardBackward, 3> {
  static const OpSchema& schema_v1;  // {group_rms_norm_backward, 1, ForceFP32, produces_grad}
  TensorImplPtr saved_rstd_, groups_, counts_;
  size_t B_ = 0, C_ = 0, S_ = 1, G_ = 0;
  DType compute_dtype_ = kDefaultFloat;
  bool wrt_gamma_ = false;
  std::weak_ptr<GroupRMSNormBackwardBackward> partner_;  // on the d_gamma node: the dx node
  TensorImplPtr deferred_v_;                              // on the dx node: the d_gamma node's upstream
  const char* name() const override { return "GroupRMSNormBackwardBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);  // grad_out null: deferred_v_ only
  bool has_deferred() const override { return deferred_v_ != nullptr; }
  void release_saved() override {
    saved_rstd_.reset();
    deferred_v_.reset();
    FuncOp::release_saved();
  }
};

// Validates channel_groups (a non-empty 1-D integer tensor of ids >= 0 that cover 0..G-1) and
// returns {a contiguous int64 copy of the ids, the channel count of each group, shape (G,)}.
// Every violation is a ShapeMismatch (a ValueError) naming the offending id.
std::pair<TensorImplPtr, TensorImplPtr> group_rms_norm_groups(const TensorImplPtr& channel_groups);

// x: (B, C, *spatial), at least 2 dims; gamma: (G,) or nullptr; eps >= 0. ForceFP32 under autocast.
TensorImplPtr group_rms_norm(const TensorImplPtr& x, const TensorImplPtr& channel_groups,
                             const TensorImplPtr& gamma, double eps);

}  // namespace lucid
