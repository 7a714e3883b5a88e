// The double-backward node of an elementwise op y = f(x) whose backward is dx = df(g, s), with s
// the saved input x or output y (ops/unary.cpp, ops/activation.cpp). dx is linear in g, so
//   d/dg = df(u, s),   d/ds = u * ddf(g, s)
// where Op::ddf is the derivative of df with respect to s. A saved output enters as a tensor
// whose grad_fn is the op's own node again (FuncOp::saved_output), so the derivative through
// y flows back to x. Op must be copyable and provide df and ddf templated on the accumulation type.
// Third order and beyond (create_graph=True through this node): d/dg is the first-order backward
// again (this node, recorded on u), and d/ds = ddf(u * g, s) since ddf is linear in g; Op writes
// that with recorded ops as ddf_graph(v, s) (nullptr when the second derivative is zero), so the
// whole tower is differentiable to any order. An Op without ddf_graph stops at second order.
#pragma once
#include <string>

#include "autograd/func_op.h"
#include "autograd/tensor_grad.h"
#include "ops/binary.h"
#include "ops/grad_graph.h"
#include "ops/op_utils.h"
#include "ops/view.h"

namespace lucid {

// Helpers for Op::ddf_graph (recorded ops on tensors of one dtype).
namespace ddg {
inline TensorImplPtr c(double v, const TensorImplPtr& like) { return constant(v, like->dtype); }
inline TensorImplPtr scale(const TensorImplPtr& t, double k) { return mul(t, c(k, t)); }
inline TensorImplPtr sq(const TensorImplPtr& t) { return mul(t, t); }
inline TensorImplPtr one_minus(const TensorImplPtr& t) { return sub(c(1.0, t), t); }
// 1 where `x op v` holds, else 0, in x's dtype: a constant, no gradient flows through it.
inline TensorImplPtr mask(const TensorImplPtr& x, CompareOp op, double v) {
  return to(compare(x, c(v, x), op), x->dtype, false);
}
}  // namespace ddg

template <class Op>
struct ElementwiseBackwardBackward : FuncOp<ElementwiseBackwardBackward<Op>, 2> {
  static const OpSchema& schema_v1;
  Op op;
  std::string name_;
  const char* node_ = "";  // the first-order node's name (Op::kNode)
  TensorImplPtr s_graph_;  // the saved tensor as it enters the graph (for apply_graph)
  const char* name() const override { return name_.c_str(); }
  void release_saved() override {
    s_graph_.reset();
    FuncOp<ElementwiseBackwardBackward<Op>, 2>::release_saved();
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& u);
  // Second order is the unit-test path: every operand is made contiguous (they share s's shape)
  // and float16/bfloat16 are widened to float32 (rounded back after), so each op compiles two
  // flat loops per float dtype instead of strided and half-block variants.
  std::vector<TensorImplPtr> apply(const TensorImplPtr& u0) {
    const TensorImplPtr &g = this->saved_[0], &s = this->saved_[1];
    const DType dt = s->dtype, kd = is_half(dt) ? DType::Float32 : dt;
    auto in = [&](const TensorImplPtr& t) { return contiguous_raw(cast_raw(cast_raw(t, dt), kd)); };
    auto back = [&](const TensorImplPtr& t, DType to) { return cast_raw(cast_raw(t, dt), to); };
    auto u = in(u0), sc = in(s);
    TensorImplPtr dg, ds;
    const Op o = op;
    const int64_t n = sc->numel();
    // d/dg is the first-order backward's own map, df(u, s): its loops are reused (they already
    // exist for the op), except where that map runs the AVX copies (vector_math: FMA contraction
    // could round differently from the baseline loop below).
    if constexpr (!vector_math<Op>())
      if (this->needs_input_grad(0)) dg = back(elementwise_backward(name_.c_str(), u, sc, o), g->dtype);
    LUCID_DISPATCH_FLOAT_NO_HALF(kd, "elementwise_double_backward", [&] {
      using T = scalar_t;
      using A = acc_t<T>;
      const T *uv = u->template data<T>(), *sv = sc->template data<T>();
      if constexpr (vector_math<Op>()) {
        if (this->needs_input_grad(0)) {
          auto r = empty(s->shape, kd);
          kernels::map2_flat(n, r->template data<T>(), uv, sv,
                             [o](T a, T b) { return T(o.template df<A>(A(a), A(b))); });
          dg = back(r, g->dtype);
        }
      }
      if (this->needs_input_grad(1)) {
        auto gc = in(g);
        auto r = empty(s->shape, kd);
        kernels::map3_flat(n, r->template data<T>(), uv, gc->template data<T>(), sv,
                           [o](T a, T b, T c) { return T(A(a) * o.template ddf<A>(A(b), A(c))); });
        ds = back(r, dt);
      }
    });
    return {dg, ds};
  }
};

template <class Op>
std::vector<TensorImplPtr> ElementwiseBackwardBackward<Op>::apply_graph(const TensorImplPtr& u) {
  const TensorImplPtr &g = this->saved_[0], &s = this->saved_[1];
  constexpr bool kGraph = requires(const Op& o, const TensorImplPtr& t) { o.ddf_graph(t, t); };
  if constexpr (!kGraph) {
    bool needs_graph = (u && u->requires_grad) || (g && g->requires_grad) || (s_graph_ && s_graph_->requires_grad);
    LUCID_CHECK(!needs_graph, name_, ": a third derivative (create_graph=True through a double backward) "
                "is not implemented for this op");
    NoGradGuard no_grad;
    return this->apply(u);
  } else {
    std::vector<TensorImplPtr> r;
    {
      NoGradGuard no_grad;
      r = this->apply(u);
    }
    if (r[0]) record_elementwise_double(r[0], u, s_graph_, s, op, node_);
    if (this->needs_input_grad(1)) {
      // nullptr: the second derivative is zero, and r[1] keeps apply's (constant) zeros
      if (TensorImplPtr ds = op.ddf_graph(mul(u, g), s_graph_)) r[1] = to(ds, s->dtype, false);
    }
    return r;
  }
}

// Records the double-backward node on `r` (the first-order gradient computed from g): inputs g
// and `s_graph` (the saved tensor as it enters the graph), saving g and the raw saved tensor.
template <class Op>
void record_elementwise_double(TensorImplPtr& r, const TensorImplPtr& g, const TensorImplPtr& s_graph,
                               const TensorImplPtr& s_saved, const Op& op, const char* node_name) {
  if (!any_requires_grad({&g, &s_graph})) return;
  auto n = std::make_shared<ElementwiseBackwardBackward<Op>>();
  n->op = op;
  n->name_ = std::string(node_name) + "Backward";
  n->node_ = node_name;
  n->s_graph_ = s_graph;
  n->set_inputs({g, s_graph});
  n->save(0, g);
  n->save(1, s_saved);
  if (r == g) r = detach(g);
  attach_node(r, std::move(n));
}

}  // namespace lucid
