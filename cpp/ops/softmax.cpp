#include "ops/softmax.h"

#include "autograd/tensor_grad.h"
#include "core/autocast.h"
#include "kernels/cpu/softmax.h"
#include "ops/binary.h"
#include "ops/reduce.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

namespace {

// Collapses dims [b, e) of (shape, strides) into one (size, stride); false when they do not
// lie at one uniform stride (the caller then makes the input contiguous). `size` is the full
// product either way.
bool collapse(const Shape& shape, const Shape& strides, int64_t b, int64_t e, int64_t& size, int64_t& stride) {
  size = 1;
  stride = 0;
  bool ok = true;
  for (int64_t d = e - 1; d >= b; --d) {
    if (shape[d] == 1) continue;
    if (size == 1) stride = strides[d];
    else if (strides[d] != stride * size) ok = false;
    size *= shape[d];
  }
  return ok;
}

// The (outer, n, inner) view of x along `dim`, reading x through its strides when possible.
kernels::SoftmaxGeom geometry(const TensorImplPtr& x, int64_t dim, bool& ok) {
  kernels::SoftmaxGeom g;
  ok = true;
  if (x->ndim() == 0) return g;
  int64_t s;
  g.n = x->shape[dim];
  g.xs_n = x->strides[dim];
  const bool outer_ok = collapse(x->shape, x->strides, 0, dim, g.outer, s);
  ok = collapse(x->shape, x->strides, dim + 1, x->ndim(), g.inner, g.xs_inner) && outer_ok;
  g.xs_outer = s;
  return g;
}

template <bool Log>
TensorImplPtr softmax_impl(const TensorImplPtr& x, int64_t dim) {
  using Node = SoftmaxBackwardT<Log>;
  const char* op = Log ? "log_softmax" : "softmax";
  LUCID_CHECK_DTYPE(is_floating(x->dtype), op, ": expected a floating input, got ", dtype_name(x->dtype),
                    " (convert with .float() first)");
  dim = wrap_dim(dim, x->ndim(), op);
  auto xc = cast_raw(x, compute_dtype(Node::schema_v1, x->dtype));
  bool ok;
  auto g = geometry(xc, dim, ok);
  if (!ok) {
    xc = contiguous_raw(xc);
    g = geometry(xc, dim, ok);
  }
  auto out = empty(xc->shape, xc->dtype);
  LUCID_DISPATCH_FLOAT(xc->dtype, op, [&] {
    kernels::softmax_forward<scalar_t>(xc->template data<scalar_t>(), out->template data<scalar_t>(), g, Log);
  });
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<Node>();
    n->dim_ = dim;
    n->outer_ = g.outer, n->n_ = g.n, n->inner_ = g.inner;
    n->in_dtype_ = x->dtype;
    n->set_inputs({x});
    // A detached alias: saving `out` itself would make out -> grad_fn -> out a cycle.
    n->save_output(0, out);
    attach_node(out, std::move(n));
  }
  return out;
}

}  // namespace

template <bool Log>
TensorImplPtr SoftmaxBackwardT<Log>::backward_raw(const TensorImplPtr& grad_out) const {
  const auto& y = this->saved_[0];
  auto g = contiguous_raw(cast_raw(grad_out, y->dtype));
  auto gx = empty(y->shape, y->dtype);
  LUCID_DISPATCH_FLOAT(y->dtype, name(), [&] {
    kernels::softmax_backward<scalar_t>(y->template data<scalar_t>(), g->template data<scalar_t>(),
                                        gx->template data<scalar_t>(), outer_, n_, inner_, Log);
  });
  return gx;
}

template <bool Log>
std::vector<TensorImplPtr> SoftmaxBackwardT<Log>::apply(const TensorImplPtr& grad_out) {
  return {cast_raw(backward_raw(grad_out), in_dtype_)};
}

template <bool Log>
std::vector<TensorImplPtr> SoftmaxBackwardT<Log>::apply_graph(const TensorImplPtr& grad_out) {
  const auto& y = this->saved_[0];
  auto g = to(grad_out, y->dtype, false);  // recorded when the dtype changes
  TensorImplPtr gx;
  {
    NoGradGuard no_grad;
    gx = backward_raw(g);
  }
  // x requires grad (this node exists), so the value always depends on y through this node.
  auto n = std::make_shared<SoftmaxBackwardBackwardT<Log>>();
  n->next_edges = {g->requires_grad ? gradient_edge(g) : Edge{}, Edge{this->shared_from_this(), 0}};
  n->save(0, g);
  n->save(1, y);
  n->dim_ = dim_;
  n->outer_ = outer_, n->n_ = n_, n->inner_ = inner_;
  attach_node(gx, std::move(n));
  return {to(gx, in_dtype_, false)};
}

template <bool Log>
std::vector<TensorImplPtr> SoftmaxBackwardBackwardT<Log>::apply(const TensorImplPtr& up) {
  const auto &g = this->saved_[0], &y = this->saved_[1];
  const bool need_dg = this->needs_input_grad(0), need_dy = this->needs_input_grad(1);
  if (!up || (!need_dg && !need_dy)) return {nullptr, nullptr};
  const DType dt = y->dtype;
  auto gc = contiguous_raw(g);
  auto uc = contiguous_raw(cast_raw(up, dt));
  auto d_g = need_dg ? empty(y->shape, dt) : nullptr;
  auto d_y = need_dy ? empty(y->shape, dt) : nullptr;
  LUCID_DISPATCH_FLOAT(dt, name(), [&] {
    using T = scalar_t;
    kernels::softmax_double_backward<T>(y->template data<T>(), gc->template data<T>(), uc->template data<T>(),
                                        d_g ? d_g->template data<T>() : nullptr,
                                        d_y ? d_y->template data<T>() : nullptr, outer_, n_, inner_, Log);
  });
  return {d_g, d_y};
}

template <bool Log>
std::vector<TensorImplPtr> SoftmaxBackwardBackwardT<Log>::apply_graph(const TensorImplPtr& up) {
  const TensorImplPtr &g = this->saved_[0], &y = this->saved_[1];
  const bool need_dg = this->needs_input_grad(0), need_dy = this->needs_input_grad(1);
  if (!up || (!need_dg && !need_dy)) return {nullptr, nullptr};
  // y as it enters the graph: its gradient flows into the forward's node (edge 1).
  auto yg = detach(y);
  if (need_dy) {
    yg->requires_grad = true;
    yg->grad_fn = this->next_edges[1].fn;
    yg->output_nr = this->next_edges[1].input_nr;
  }
  auto u = to(up, y->dtype, false);
  const std::vector<int64_t> d = y->ndim() == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{dim_};
  auto rsum = [&](const TensorImplPtr& t) { return sum(t, d, /*keepdim=*/true); };
  TensorImplPtr d_g, d_y;
  if constexpr (Log) {
    auto ue = mul(u, exp(yg));
    if (need_dg) d_g = sub(u, rsum(ue));
    if (need_dy) d_y = neg(mul(ue, rsum(g)));
  } else {
    auto t = rsum(mul(u, yg));
    if (need_dg) d_g = mul(yg, sub(u, t));
    if (need_dy) d_y = sub(mul(u, sub(g, rsum(mul(g, yg)))), mul(g, t));
  }
  return {d_g, d_y};
}

template <>
const OpSchema& SoftmaxBackwardT<false>::schema_v1 = register_schema(
    {.name = "softmax", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& SoftmaxBackwardT<true>::schema_v1 = register_schema(
    {.name = "log_softmax", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

template <>
const OpSchema& SoftmaxBackwardBackwardT<false>::schema_v1 = register_schema(
    {.name = "softmax_backward", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& SoftmaxBackwardBackwardT<true>::schema_v1 = register_schema(
    {.name = "log_softmax_backward", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

template struct SoftmaxBackwardT<false>;
template struct SoftmaxBackwardT<true>;
template struct SoftmaxBackwardBackwardT<false>;
template struct SoftmaxBackwardBackwardT<true>;

TensorImplPtr softmax(const TensorImplPtr& x, int64_t dim) { return softmax_impl<false>(x, dim); }
TensorImplPtr log_softmax(const TensorImplPtr& x, int64_t dim) { return softmax_impl<true>(x, dim); }

}  // namespace lucid
