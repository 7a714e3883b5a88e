// Helpers for backward nodes' apply_graph (create_graph=True): gradients written with recorded
// ops, so that they can be differentiated again.
// linear_map covers every backward that is a linear map of the incoming gradient alone (views,
// reductions, copies, scatters and gathers by fixed indices, fixed masks): the map runs with its
// raw kernels, and the result records a LinearMapBackward node whose backward is the adjoint map
// (and whose own backward is the map again), so such gradients are differentiable to any order.
#pragma once
#include <functional>
#include <string>

#include "autograd/node.h"
#include "core/tensor_impl.h"

namespace lucid {

using GradMap = std::function<TensorImplPtr(const TensorImplPtr&)>;

struct LinearMapBackward final : Node {
  std::string name_;
  GradMap map_, adjoint_;  // map_ produced this node's output; run applies adjoint_
  const char* name() const override { return name_.c_str(); }
  std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) override;
};

// map(g), recorded (when grad mode is on and g requires grad) with a node named `name` whose
// backward is `adjoint`. Both maps are raw (no autograd) and each is the other's transpose.
TensorImplPtr linear_map(const std::string& name, const TensorImplPtr& g, GradMap map, GradMap adjoint);

// sum_to(g, shape) recorded (its adjoint broadcasts back to g's shape).
TensorImplPtr sum_to_graph(const TensorImplPtr& g, const Shape& shape);
// The gradient for an input: summed to its shape and cast to its dtype, recorded.
TensorImplPtr grad_for_graph(const TensorImplPtr& g, const Shape& shape, DType dtype);
// A saved input as it enters a recorded backward: `s` is what the forward saved for the input
// behind `edge` (the input itself, or a contiguous / cast / broadcast copy of it). The result
// aliases s; its gradient flows along `edge`, summed to `shape` and cast to `dtype` (the
// input's). Plain s when grad mode is off or the input needs no gradient.
TensorImplPtr saved_input_graph(const TensorImplPtr& s, const Edge& edge, const Shape& shape, DType dtype);
// A 0-d constant.
inline TensorImplPtr constant(double v, DType dtype) { return scalar_tensor(v, dtype); }

}  // namespace lucid
