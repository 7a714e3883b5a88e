#include "ops/grad_graph.h"

#include "autograd/grad_mode.h"
#include "autograd/tensor_grad.h"
#include "ops/reduce.h"
#include "ops/view.h"

namespace lucid {

std::vector<TensorImplPtr> LinearMapBackward::run(const TensorImplPtr& u) {
  return {linear_map(name_ + "Backward", u, adjoint_, map_)};
}

TensorImplPtr linear_map(const std::string& name, const TensorImplPtr& g, GradMap map, GradMap adjoint) {
  TensorImplPtr r;
  {
    NoGradGuard no_grad;
    r = map(g);
  }
  if (GradMode::is_enabled() && g->requires_grad) {
    if (r == g) r = detach(g);  // never rewire the input itself
    auto n = std::make_shared<LinearMapBackward>();
    n->name_ = name;
    n->map_ = std::move(map);
    n->adjoint_ = std::move(adjoint);
    n->next_edges = {gradient_edge(g)};
    r->requires_grad = true;
    r->grad_fn = std::move(n);
  }
  return r;
}

TensorImplPtr saved_input_graph(const TensorImplPtr& s, const Edge& edge, const Shape& shape, DType dtype) {
  if (!GradMode::is_enabled() || !edge.fn) return s;
  auto r = detach(s);
  auto n = std::make_shared<LinearMapBackward>();
  n->name_ = "SavedInput";
  const Shape sshape = s->shape;
  const DType sdtype = s->dtype;
  n->adjoint_ = [shape, dtype](const TensorImplPtr& u) { return cast_raw(u->shape == shape ? u : sum_to(u, shape), dtype); };
  n->map_ = [sshape, sdtype](const TensorImplPtr& v) { return contiguous_raw(expand(cast_raw(v, sdtype), sshape)); };
  n->next_edges = {edge};
  r->requires_grad = true;
  r->grad_fn = std::move(n);
  return r;
}

TensorImplPtr sum_to_graph(const TensorImplPtr& g, const Shape& shape) {
  if (g->shape == shape) return g;
  const Shape gshape = g->shape;
  return linear_map(
      "SumToBackward", g, [shape](const TensorImplPtr& t) { return sum_to(t, shape); },
      [gshape](const TensorImplPtr& u) { return contiguous_raw(expand(u, gshape)); });
}

TensorImplPtr grad_for_graph(const TensorImplPtr& g, const Shape& shape, DType dtype) {
  return to(sum_to_graph(g, shape), dtype, false);
}

}  // namespace lucid
