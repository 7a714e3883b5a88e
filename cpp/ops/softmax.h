// softmax and log_softmax over one dim, numerically stable (each row's max is subtracted first):
//   softmax:     y = exp(x - m) / sum exp(x - m)
//   log_softmax: y = x - m - log sum exp(x - m)
// The backward reads only the saved output (a detached alias sharing its version counter):
//   softmax dx = y * (g - sum(g * y)),  log_softmax dx = g - exp(y) * sum(g).
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
  // create_graph: softmax y (g - sum(g y)), log_softmax g - exp(y) sum(g), with recorded ops on
  // the saved output (whose grad_fn is this node again).
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};
template <> const OpSchema& SoftmaxBackwardT<false>::schema_v1;
template <> const OpSchema& SoftmaxBackwardT<true>::schema_v1;
using SoftmaxBackward = SoftmaxBackwardT<false>;
using LogSoftmaxBackward = SoftmaxBackwardT<true>;

}  // namespace lucid
