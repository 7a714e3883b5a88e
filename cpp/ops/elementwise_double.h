// The double-backward node of an elementwise op y = f(x) whose backward is dx = df(g, s), with s
// the saved input x or output y (ops/unary.cpp, ops/activation.cpp). dx is linear in g, so
//   d/dg = df(u, s),   d/ds = u * ddf(g, s)
// where Op::ddf is the derivative of df with respect to s. A saved output enters as a tensor
// whose grad_fn is the op's own node again (FuncOp::saved_output), so the derivative through
// y flows back to x. Op must be copyable and provide df and ddf templated on the accumulation type.
#pragma once
#include <string>

#include "autograd/func_op.h"
#include "autograd/tensor_grad.h"
#include "ops/op_utils.h"

namespace lucid {

template <class Op>
struct ElementwiseBackwardBackward : FuncOp<ElementwiseBackwardBackward<Op>, 2> {
  static const OpSchema& schema_v1;
  Op op;
  std::string name_;
  const char* name() const override { return name_.c_str(); }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& u0) {
    const TensorImplPtr &g = this->saved_[0], &s = this->saved_[1];
    const DType dt = s->dtype;
    auto u = cast_raw(u0, dt), gc = cast_raw(g, dt);
    TensorImplPtr dg, ds;
    const Op o = op;
    if (this->needs_input_grad(0))
      dg = cast_raw(binary_apply<false, Dtypes::Float>("elementwise_double_backward", s->shape, u, s, [o]<class A>() {
                      return [o](A uv, A sv) { return o.template df<A>(uv, sv); };
                    }), g->dtype);
    if (this->needs_input_grad(1))
      ds = ternary_apply("elementwise_double_backward", s->shape, u, gc, s, [o]<class A>() {
        return [o](A uv, A gv, A sv) { return uv * o.template ddf<A>(gv, sv); };
      });
    return {dg, ds};
  }
};

// Records the double-backward node on `r` (the first-order gradient computed from g): inputs g
// and `s_graph` (the saved tensor as it enters the graph), saving g and the raw saved tensor.
template <class Op>
void record_elementwise_double(TensorImplPtr& r, const TensorImplPtr& g, const TensorImplPtr& s_graph,
                               const TensorImplPtr& s_saved, const Op& op, const char* node_name) {
  if (!any_requires_grad({&g, &s_graph})) return;
  auto n = std::make_shared<ElementwiseBackwardBackward<Op>>();
  n->op = op;
  n->name_ = std::string(node_name) + "Backward";
  n->set_inputs({g, s_graph});
  n->save(0, g);
  n->save(1, s_saved);
  if (r == g) r = detach(g);
  attach_node(r, std::move(n));
}

}  // namespace lucid
