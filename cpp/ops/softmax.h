// softmax and log_softmax over one dim, numerically stable (each row's max is subtracted first):
//   softmax:     y = exp(x - m) / sum exp(x - m)
//   log_softmax: y = x - m - log sum exp(x - m)
// The backward reads only the saved output (a detached alias sharing its version counter):
//   softmax dx = y * (g - sum(g * y)),  log_softmax dx = g - exp(y) * sum(g).
// Its own backward (create_graph) is one fused node too: see SoftmaxBackwardBackwardT.
// AmpPolicy ForceFP32: under autocast half inputs compute and return float32; float64 stays.
// The gradient returns in the input's dtype. A 0-d input is a row of one element.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr softmax(const TensorImplPtr& x, int64_t dim);
TensorImplPtr log_softmax(const TensorImplPtr& x, int64_t dim);

template <bool Log>
struct SoftmaxBackwardT : FuncOp<SoftmaxBackwardT<Log>, 1> {
  static const OpSchema& schema_v1;
  int64_t dim_ = 0;  // wrapped
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
  DType in_dtype_ = kDefaultFloat;
  const char* name() const override { return Log ? "LogSoftmaxBackward" : "SoftmaxBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the same fused value, recorded with a (Log)SoftmaxBackwardBackward node.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  // gx in the saved output's dtype (g already in it).
  TensorImplPtr backward_raw(const TensorImplPtr& g) const;
};
template <> const OpSchema& SoftmaxBackwardT<false>::schema_v1;
template <> const OpSchema& SoftmaxBackwardT<true>::schema_v1;
using SoftmaxBackward = SoftmaxBackwardT<false>;
using LogSoftmaxBackward = SoftmaxBackwardT<true>;

// The node of gx = SoftmaxBackward(g, y) under create_graph=True: maps the upstream u to
// {d g, d y} in one fused pass (kernels/cpu/softmax.h: softmax_double_backward). Its y edge is
// the forward's own node, so d y flows on into x through the first-order fused backward.
// Saved: g, y (the detached saved output).
template <bool Log>
struct SoftmaxBackwardBackwardT : FuncOp<SoftmaxBackwardBackwardT<Log>, 2> {
  static const OpSchema& schema_v1;
  int64_t dim_ = 0;  // wrapped (a 0-d input: a row of one element)
  int64_t outer_ = 1, n_ = 1, inner_ = 1;
  const char* name() const override { return Log ? "LogSoftmaxBackwardBackward" : "SoftmaxBackwardBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // Third order: the same two gradients written with recorded ops on g and y (y entering the
  // graph through the forward's node), so they differentiate again:
  //   softmax      d_g = y (u - sum(u y)),   d_y = u (g - sum(g y)) - g sum(u y)
  //   log_softmax  d_g = u - sum(u e^y),     d_y = -u e^y sum(g)
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};
template <> const OpSchema& SoftmaxBackwardBackwardT<false>::schema_v1;
template <> const OpSchema& SoftmaxBackwardBackwardT<true>::schema_v1;
using SoftmaxBackwardBackward = SoftmaxBackwardBackwardT<false>;
using LogSoftmaxBackwardBackward = SoftmaxBackwardBackwardT<true>;

}  // namespace lucid
