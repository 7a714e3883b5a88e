// Losses, each one fused forward and one closed-form backward node (PyTorch's semantics):
//   cross_entropy   log-softmax + NLL per position in one pass, class indices (int64) or class
//                   probabilities (a floating target shaped like the input); label smoothing and
//                   class weights. Saves the input and the per-position logsumexp (saved_lse_), so
//                   the backward is (softmax - smoothed onehot) in one pass.
//   nll_loss        -w[t] * x[t]; saves only the target and the weight.
//   mse_loss, l1_loss   (x - t)^2, |x - t|; the shapes must match (no silent broadcasting).
//   binary_cross_entropy_with_logits   w * ((1 - t) x + (1 + (pw - 1) t) * softplus(-x)).
// Reduction 'mean' divides by the number of counted positions; with class weights by the sum of
// the targets' weights (ignore_index positions count for nothing). Zero positions give NaN.
// Class layout: input (N, C, d1, ...) with target (N, d1, ...), or unbatched (C,) with target ().
// Every target index is validated before anything is written (IndexOutOfRange).
// AmpPolicy ForceFP32 for all: half inputs compute and return float32; grads return in each
// input's dtype. Gradients w.r.t. class weights of cross_entropy / nll_loss are not supported.
#pragma once
#include <string>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"
#include "kernels/cpu/loss.h"

namespace lucid {

enum class Reduction { None, Mean, Sum };
// "mean" | "sum" | "none"; anything else is a LucidError naming `op`.
Reduction parse_reduction(const std::string& s, const char* op);

// weight may be null (no class weights).
TensorImplPtr cross_entropy(const TensorImplPtr& input, const TensorImplPtr& target, const TensorImplPtr& weight,
                            int64_t ignore_index, Reduction reduction, double label_smoothing);
TensorImplPtr nll_loss(const TensorImplPtr& input, const TensorImplPtr& target, const TensorImplPtr& weight,
                       int64_t ignore_index, Reduction reduction);
TensorImplPtr mse_loss(const TensorImplPtr& input, const TensorImplPtr& target, Reduction reduction);
TensorImplPtr l1_loss(const TensorImplPtr& input, const TensorImplPtr& target, Reduction reduction);
// weight and pos_weight may be null; both broadcast to the input's shape (pos_weight along the
// last, class, dim).
TensorImplPtr binary_cross_entropy_with_logits(const TensorImplPtr& input, const TensorImplPtr& target,
                                               const TensorImplPtr& weight, Reduction reduction,
                                               const TensorImplPtr& pos_weight);

// What every loss node keeps to scale the incoming gradient.
struct LossMeta {
  Reduction reduction_ = Reduction::Mean;
  double denom_ = 1;  // the mean's divisor
  Shape in_shape_;
  DType in_dtype_ = kDefaultFloat, target_dtype_ = kDefaultFloat;
};

// Saved: input (compute dtype, contiguous), target, weight; plus saved_lse_ (one per position,
// float32 or float64). Inputs: (input, target, weight); target gets a gradient when it holds
// probabilities.
struct CrossEntropyBackward : FuncOp<CrossEntropyBackward, 3>, LossMeta {
  static const OpSchema& schema_v1;
  TensorImplPtr saved_lse_;
  kernels::ClassGeom geom_;
  int64_t ignore_index_ = -100;
  double label_smoothing_ = 0;
  bool prob_target_ = false;
  const char* name() const override { return "CrossEntropyBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the same fused values, each recorded with a CrossEntropyBackwardBackward node.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  void release_saved() override {
    saved_lse_.reset();
    FuncOp<CrossEntropyBackward, 3>::release_saved();
  }
};

// The node of one output of CrossEntropyBackward under create_graph=True (gx, or gq when
// wrt_target_): maps its upstream to {d grad_out, d input, d target} in one fused pass from the
// saved logsumexp (kernels/cpu/loss.h: cross_entropy_double_backward); label smoothing, class
// weights and ignore_index as the first order. Saved: grad_out, input (compute dtype), target;
// edges: grad_out's, then the first-order node's own input and target edges.
struct CrossEntropyBackwardBackward : FuncOp<CrossEntropyBackwardBackward, 3>, LossMeta {
  static const OpSchema& schema_v1;  // {cross_entropy_backward, 1, ForceFP32, produces_grad}
  TensorImplPtr saved_lse_, weight_;  // weight_: the class weights (a constant), or null
  kernels::ClassGeom geom_;
  int64_t ignore_index_ = -100;
  double label_smoothing_ = 0;
  bool prob_target_ = false, wrt_target_ = false;
  const char* name() const override { return "CrossEntropyBackwardBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // Third order (class-index targets): with K = d loss / d log_softmax (a constant of the
  // targets, weights and smoothing) and s the reduction's scale of g, gx = s (K - p sum(K)),
  // p = softmax(x); its two gradients are written with recorded ops from that, so they
  // differentiate again. Probability targets stop at second order.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  void release_saved() override {
    saved_lse_.reset();
    weight_.reset();
    FuncOp<CrossEntropyBackwardBackward, 3>::release_saved();
  }
};

// Saved: target and weight only (the gradient does not read the input).
struct NllLossBackward : FuncOp<NllLossBackward, 3>, LossMeta {
  static const OpSchema& schema_v1;
  kernels::ClassGeom geom_;
  int64_t ignore_index_ = -100;
  DType compute_dtype_ = kDefaultFloat;
  const char* name() const override { return "NllLossBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: g times a constant (-w[t] at each target), recorded.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

// mse_loss (Mse) and l1_loss (L1). Saved: input and target in the compute dtype.
template <kernels::Pointwise K>
struct PointwiseLossBackward : FuncOp<PointwiseLossBackward<K>, 2>, LossMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return K == kernels::Pointwise::Mse ? "MseLossBackward" : "L1LossBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: 2 g (x - t), or g sign(x - t) (the sign a constant), recorded.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};
template <> const OpSchema& PointwiseLossBackward<kernels::Pointwise::Mse>::schema_v1;
template <> const OpSchema& PointwiseLossBackward<kernels::Pointwise::L1>::schema_v1;
using MseLossBackward = PointwiseLossBackward<kernels::Pointwise::Mse>;
using L1LossBackward = PointwiseLossBackward<kernels::Pointwise::L1>;

// Saved: input, target, and weight / pos_weight expanded to the input's shape (or null).
// Inputs: (input, target, weight, pos_weight); all four may receive gradients.
struct BinaryCrossEntropyWithLogitsBackward : FuncOp<BinaryCrossEntropyWithLogitsBackward, 4>, LossMeta {
  static const OpSchema& schema_v1;
  Shape weight_shape_, pos_weight_shape_;
  DType weight_dtype_ = kDefaultFloat, pos_weight_dtype_ = kDefaultFloat;
  const char* name() const override { return "BinaryCrossEntropyWithLogitsBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the four gradients written with recorded ops (sigmoid, logsigmoid).
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

}  // namespace lucid
