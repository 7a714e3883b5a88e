#include "ops/loss.h"

#include "core/autocast.h"
#include "ops/activation.h"
#include "ops/binary.h"
#include "ops/grad_graph.h"
#include "ops/op_utils.h"
#include "ops/softmax.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

Reduction parse_reduction(const std::string& s, const char* op) {
  if (s == "mean") return Reduction::Mean;
  if (s == "sum") return Reduction::Sum;
  if (s == "none") return Reduction::None;
  throw LucidError(str(op, ": reduction must be 'mean', 'sum' or 'none', got '", s, "'"));
}

namespace {

void check_floating(const TensorImplPtr& t, const char* op, const char* what) {
  LUCID_CHECK_DTYPE(is_floating(t->dtype), op, ": ", what, " must be a floating tensor, got ", dtype_name(t->dtype));
}

// (N, C, d1, ...) -> outer N, classes C, inner d1*...; (C,) -> 1, C, 1. `pos_shape` is the shape
// of one loss per position: the input's shape without the class dim.
kernels::ClassGeom class_geom(const TensorImplPtr& x, const char* op, Shape& pos_shape) {
  LUCID_CHECK_SHAPE(x->ndim() >= 1, op,
                    ": input must have a class dim ((C,), (N, C) or (N, C, d1, ...)), got a 0-d tensor");
  kernels::ClassGeom g;
  if (x->ndim() == 1) {
    g.classes = x->shape[0];
    pos_shape = {};
    return g;
  }
  g.outer = x->shape[0];
  g.classes = x->shape[1];
  pos_shape = {x->shape[0]};
  for (int64_t d = 2; d < x->ndim(); ++d) {
    g.inner *= x->shape[d];
    pos_shape.push_back(x->shape[d]);
  }
  return g;
}

void check_index_target(const TensorImplPtr& t, const TensorImplPtr& x, const Shape& pos_shape, const char* op) {
  LUCID_CHECK_DTYPE(t->dtype == DType::Int64, op, ": target must hold int64 class indices, got ", dtype_name(t->dtype));
  LUCID_CHECK_SHAPE(t->shape == pos_shape, op, ": target shape ", shape_str(t->shape), " does not match input shape ",
                    shape_str(x->shape), " (expected target shape ", shape_str(pos_shape), ")");
}

// Runs before any kernel writes, so a bad index leaves nothing half-computed.
void validate_targets(const TensorImplPtr& tc, int64_t classes, int64_t ignore, const char* op) {
  const int64_t* p = tc->data<int64_t>();
  for (int64_t i = 0, n = tc->numel(); i < n; ++i) {
    const int64_t v = p[i];
    LUCID_CHECK_INDEX(v == ignore || (v >= 0 && v < classes), op, ": target ", v, " is out of bounds for ", classes,
                      " classes (expected 0 <= target < ", classes, ", or ignore_index ", ignore, ")");
  }
}

void check_class_weight(const TensorImplPtr& w, int64_t classes, const char* op) {
  if (!w) return;
  check_floating(w, op, "weight");
  LUCID_CHECK_SHAPE(w->ndim() == 1 && w->shape[0] == classes, op, ": weight must have shape [", classes,
                    "] (one per class), got ", shape_str(w->shape));
  LUCID_CHECK(!(w->requires_grad && GradMode::is_enabled()), op,
              ": the gradient with respect to weight is not supported; pass weight.detach()");
}

TensorImplPtr reduced(Reduction r, const TensorImplPtr& per, const kernels::LossSum& s, DType dt) {
  if (r == Reduction::None) return per;
  // NOTE: a mean over zero positions (or zero total weight) is 0 / 0 = NaN, as PyTorch.
  return scalar_tensor(r == Reduction::Mean ? s.loss / s.weight : s.loss, dt);
}

// The incoming gradient: per position (reduction 'none') or one scalar, pre-divided for 'mean'.
struct GradScale {
  TensorImplPtr gl;
  double scale = 0;
  template <class T> const T* data() const { return gl ? gl->data<T>() : nullptr; }
};
GradScale grad_scale(const LossMeta& m, const TensorImplPtr& g, DType dt) {
  if (m.reduction_ == Reduction::None) return {contiguous_raw(cast_raw(g, dt)), 0.0};
  const double v = item_as_double(g, "loss backward");
  return {nullptr, m.reduction_ == Reduction::Mean ? v / m.denom_ : v};
}

template <class T> T* ptr(const TensorImplPtr& t) { return t ? t->data<T>() : nullptr; }
TensorImplPtr maybe_empty(bool need, const Shape& shape, DType dt) { return need ? empty(shape, dt) : nullptr; }
TensorImplPtr cast_or_null(const TensorImplPtr& t, DType dt) { return t ? cast_raw(t, dt) : nullptr; }

void set_meta(LossMeta& m, Reduction r, double denom, const TensorImplPtr& x, const TensorImplPtr& t) {
  m.reduction_ = r;
  m.denom_ = denom;
  m.in_shape_ = x->shape;
  m.in_dtype_ = x->dtype;
  m.target_dtype_ = t->dtype;
}


// create_graph: the incoming gradient as a recorded tensor in dt that broadcasts against the
// per-element gradient: per position (reduction 'none', reshaped by `pos_view`) or a scalar
// (divided by the mean's divisor).
TensorImplPtr grad_scale_graph(const LossMeta& m, const TensorImplPtr& g, DType dt, const Shape& pos_view) {
  auto gd = to(g, dt, false);
  if (m.reduction_ == Reduction::None) return pos_view.empty() ? gd : reshape(gd, pos_view);
  if (m.reduction_ == Reduction::Mean) return div(gd, scalar_tensor(m.denom_, dt));
  return gd;
}

// d loss / d log_softmax(x) per element of a class-index cross entropy (nll_loss when eps = 0
// and `smooth` is false), laid out as xc (outer, C, inner): -(1 - eps) w[t] at the target class,
// -eps / C * w[c] at every class; zero at ignored positions. A constant of the backward.
TensorImplPtr class_coef(const TensorImplPtr& tc, const TensorImplPtr& wc, const kernels::ClassGeom& g,
                         int64_t ignore, double eps, DType dt) {
  auto coef = empty({g.outer, g.classes, g.inner}, dt);
  LUCID_DISPATCH_FLOAT(dt, "loss_backward", [&] {
    using T = scalar_t;
    T* c = coef->data<T>();
    const int64_t* t = tc->data<int64_t>();
    const T* w = wc ? wc->data<T>() : nullptr;
    const int64_t C = g.classes, I = g.inner;
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < I; ++i) {
        const int64_t tt = t[o * I + i];
        T* row = c + o * C * I + i;
        if (tt == ignore) {
          for (int64_t k = 0; k < C; ++k) row[k * I] = T(0);
          continue;
        }
        for (int64_t k = 0; k < C; ++k) row[k * I] = T(-eps / double(C) * (w ? double(w[k]) : 1.0));
        row[tt * I] = T(double(row[tt * I]) - (1.0 - eps) * (w ? double(w[tt]) : 1.0));
      }
  });
  return coef;
}

}  // namespace

// ---- cross_entropy ---------------------------------------------------------------------

const OpSchema& CrossEntropyBackward::schema_v1 = register_schema(
    {.name = "cross_entropy", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

TensorImplPtr cross_entropy(const TensorImplPtr& x, const TensorImplPtr& target, const TensorImplPtr& weight,
                            int64_t ignore_index, Reduction reduction, double eps) {
  const char* op = "cross_entropy";
  check_floating(x, op, "input");
  LUCID_CHECK(eps >= 0.0 && eps <= 1.0, op, ": label_smoothing must be in [0, 1], got ", eps);
  Shape pos_shape;
  const auto g = class_geom(x, op, pos_shape);
  const bool prob = is_floating(target->dtype);
  DType in = x->dtype;
  if (prob) {
    LUCID_CHECK_SHAPE(target->shape == x->shape, op, ": a probability target must have the input's shape ",
                      shape_str(x->shape), ", got ", shape_str(target->shape));
    LUCID_CHECK(ignore_index < 0, op, ": ignore_index (", ignore_index, ") is not supported with probability targets");
    in = promote_types(in, target->dtype);
  } else {
    check_index_target(target, x, pos_shape, op);
  }
  check_class_weight(weight, g.classes, op);
  if (weight) in = promote_types(in, weight->dtype);
  const DType dt = compute_dtype(CrossEntropyBackward::schema_v1, in);

  auto tc = contiguous_raw(prob ? cast_raw(target, dt) : target);
  if (!prob) validate_targets(tc, g.classes, ignore_index, op);
  auto xc = contiguous_raw(cast_raw(x, dt));
  auto wc = weight ? contiguous_raw(cast_raw(weight, dt)) : nullptr;
  auto lse = empty({g.outer * g.inner}, acc_dtype(dt));
  auto per = maybe_empty(reduction == Reduction::None, pos_shape, dt);
  kernels::LossSum s;
  LUCID_DISPATCH_FLOAT(dt, op, [&] {
    using T = scalar_t;
    auto* ls = lse->data<acc_t<T>>();
    if (prob)
      s = kernels::cross_entropy_prob_forward<T>(xc->data<T>(), tc->data<T>(), ptr<T>(wc), ptr<T>(per), ls, g, eps);
    else
      s = kernels::cross_entropy_forward<T>(xc->data<T>(), tc->data<int64_t>(), ptr<T>(wc), ptr<T>(per), ls, g,
                                            ignore_index, eps);
  });
  auto out = reduced(reduction, per, s, dt);
  if (any_requires_grad({&x, &target})) {
    auto n = std::make_shared<CrossEntropyBackward>();
    set_meta(*n, reduction, s.weight, x, target);
    n->saved_lse_ = lse;
    n->geom_ = g;
    n->ignore_index_ = ignore_index;
    n->label_smoothing_ = eps;
    n->prob_target_ = prob;
    n->set_inputs({x, target, weight});
    n->save(0, xc);
    n->save(1, tc);
    n->save(2, wc);
    attach_node(out, std::move(n));
  }
  return out;
}

std::vector<TensorImplPtr> CrossEntropyBackward::apply(const TensorImplPtr& grad_out) {
  const auto &xc = saved_[0], &tc = saved_[1], &wc = saved_[2];
  const DType dt = xc->dtype;
  const auto gs = grad_scale(*this, grad_out, dt);
  auto gx = maybe_empty(needs_input_grad(0), xc->shape, dt);
  auto gq = maybe_empty(prob_target_ && needs_input_grad(1), xc->shape, dt);
  LUCID_DISPATCH_FLOAT(dt, name(), [&] {
    using T = scalar_t;
    const auto* ls = saved_lse_->data<acc_t<T>>();
    if (prob_target_)
      kernels::cross_entropy_prob_backward<T>(xc->data<T>(), tc->data<T>(), ptr<T>(wc), ls, gs.data<T>(), gs.scale,
                                              ptr<T>(gx), ptr<T>(gq), geom_, label_smoothing_);
    else if (gx)
      kernels::cross_entropy_backward<T>(xc->data<T>(), tc->data<int64_t>(), ptr<T>(wc), ls, gs.data<T>(), gs.scale,
                                         gx->data<T>(), geom_, ignore_index_, label_smoothing_);
  });
  return {cast_or_null(gx, in_dtype_), cast_or_null(gq, target_dtype_), nullptr};
}

std::vector<TensorImplPtr> CrossEntropyBackward::apply_graph(const TensorImplPtr& grad_out) {
  std::vector<TensorImplPtr> res;
  {
    NoGradGuard no_grad;
    res = apply(grad_out);
  }
  for (size_t out = 0; out < 2; ++out) {
    if (!res[out]) continue;
    auto n = std::make_shared<CrossEntropyBackwardBackward>();
    static_cast<LossMeta&>(*n) = static_cast<const LossMeta&>(*this);
    n->next_edges = {gradient_edge(grad_out), next_edges[0], prob_target_ ? next_edges[1] : Edge{}};
    n->save(0, grad_out);
    n->save(1, saved_[0]);
    n->save(2, saved_[1]);
    n->weight_ = saved_[2];
    n->saved_lse_ = saved_lse_;
    n->geom_ = geom_;
    n->ignore_index_ = ignore_index_;
    n->label_smoothing_ = label_smoothing_;
    n->prob_target_ = prob_target_;
    n->wrt_target_ = out == 1;
    attach_node(res[out], std::move(n));
  }
  return res;
}

const OpSchema& CrossEntropyBackwardBackward::schema_v1 = register_schema(
    {.name = "cross_entropy_backward", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

std::vector<TensorImplPtr> CrossEntropyBackwardBackward::apply(const TensorImplPtr& up) {
  const auto &g = saved_[0], &xc = saved_[1], &tc = saved_[2];
  if (!up) return {nullptr, nullptr, nullptr};
  const DType dt = xc->dtype;
  const auto gs = grad_scale(*this, g, dt);
  const bool need_ds = needs_input_grad(0), need_dx = needs_input_grad(1);
  const bool need_dq = prob_target_ && !wrt_target_ && needs_input_grad(2);
  if (!need_ds && !need_dx && !need_dq) return {nullptr, nullptr, nullptr};
  auto uc = contiguous_raw(cast_raw(up, dt));
  auto d_s = maybe_empty(need_ds, {geom_.outer * geom_.inner}, acc_dtype(dt));
  auto d_x = maybe_empty(need_dx, xc->shape, dt);
  auto d_q = maybe_empty(need_dq, xc->shape, dt);
  double total = 0;
  LUCID_DISPATCH_FLOAT(dt, name(), [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* u = wrt_target_ ? nullptr : uc->data<T>();
    const T* uq = wrt_target_ ? uc->data<T>() : nullptr;
    kernels::cross_entropy_double_backward<T>(
        xc->data<T>(), prob_target_ ? nullptr : tc->data<int64_t>(), prob_target_ ? tc->data<T>() : nullptr,
        ptr<T>(weight_), saved_lse_->data<A>(), gs.data<T>(), gs.scale, u, uq, d_s ? d_s->data<A>() : nullptr,
        ptr<T>(d_x), ptr<T>(d_q), geom_, ignore_index_, label_smoothing_);
    if (d_s && reduction_ != Reduction::None) {
      const A* p = d_s->data<A>();
      for (int64_t i = 0, n = d_s->numel(); i < n; ++i) total += double(p[i]);
    }
  });
  TensorImplPtr d_g;
  if (d_s) {
    if (reduction_ == Reduction::None) d_g = cast_raw(make_view(d_s, g->shape, contiguous_strides(g->shape), 0), g->dtype);
    else d_g = scalar_tensor(reduction_ == Reduction::Mean ? total / denom_ : total, g->dtype);
  }
  return {d_g, cast_or_null(d_x, in_dtype_), cast_or_null(d_q, target_dtype_)};
}

std::vector<TensorImplPtr> CrossEntropyBackwardBackward::apply_graph(const TensorImplPtr& up) {
  const auto &g = saved_[0], &xc = saved_[1], &tc = saved_[2];
  const bool need_ds = needs_input_grad(0), need_dx = needs_input_grad(1);
  if (prob_target_ || !up || (!need_ds && !need_dx)) {
    const bool graph = (up && up->requires_grad) || g->requires_grad || tc->requires_grad;
    LUCID_CHECK(!prob_target_ || !graph, name(), ": a third derivative with probability targets is not implemented");
    NoGradGuard no_grad;
    return apply(up);
  }
  const DType dt = xc->dtype;
  const int64_t O = geom_.outer, C = geom_.classes, I = geom_.inner;
  auto k = class_coef(tc, weight_, geom_, ignore_index_, label_smoothing_, dt);  // (O, C, I), constant
  auto ksum = sum(k, {1}, /*keepdim=*/true);
  auto x3 = reshape(saved_input_graph(xc, next_edges[1], in_shape_, in_dtype_), {O, C, I});
  auto p = softmax(x3, 1);
  auto u3 = reshape(to(up, dt, false), {O, C, I});
  auto s = grad_scale_graph(*this, g, dt, {O, 1, I});
  TensorImplPtr d_g, d_x;
  if (need_dx) {
    auto v = neg(mul(mul(s, ksum), u3));
    d_x = to(reshape(mul(p, sub(v, sum(mul(v, p), {1}, true))), in_shape_), in_dtype_, false);
  }
  if (need_ds) {
    auto d_s = sum(mul(u3, sub(k, mul(p, ksum))), {1}, /*keepdim=*/true);  // (O, 1, I)
    if (reduction_ == Reduction::None) d_g = reshape(d_s, g->shape);
    else d_g = reshape(reduction_ == Reduction::Mean ? div(sum(d_s, {}, false), scalar_tensor(denom_, dt))
                                                     : sum(d_s, {}, false), g->shape);
    d_g = to(d_g, g->dtype, false);
  }
  return {d_g, d_x, nullptr};
}

// ---- nll_loss --------------------------------------------------------------------------

const OpSchema& NllLossBackward::schema_v1 = register_schema(
    {.name = "nll_loss", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

TensorImplPtr nll_loss(const TensorImplPtr& x, const TensorImplPtr& target, const TensorImplPtr& weight,
                       int64_t ignore_index, Reduction reduction) {
  const char* op = "nll_loss";
  check_floating(x, op, "input");
  Shape pos_shape;
  const auto g = class_geom(x, op, pos_shape);
  check_index_target(target, x, pos_shape, op);
  check_class_weight(weight, g.classes, op);
  const DType in = weight ? promote_types(x->dtype, weight->dtype) : x->dtype;
  const DType dt = compute_dtype(NllLossBackward::schema_v1, in);
  auto tc = contiguous_raw(target);
  validate_targets(tc, g.classes, ignore_index, op);
  auto xc = contiguous_raw(cast_raw(x, dt));
  auto wc = weight ? contiguous_raw(cast_raw(weight, dt)) : nullptr;
  auto per = maybe_empty(reduction == Reduction::None, pos_shape, dt);
  kernels::LossSum s;
  LUCID_DISPATCH_FLOAT(dt, op, [&] {
    using T = scalar_t;
    s = kernels::nll_loss_forward<T>(xc->data<T>(), tc->data<int64_t>(), ptr<T>(wc), ptr<T>(per), g, ignore_index);
  });
  auto out = reduced(reduction, per, s, dt);
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<NllLossBackward>();
    set_meta(*n, reduction, s.weight, x, target);
    n->geom_ = g;
    n->ignore_index_ = ignore_index;
    n->compute_dtype_ = dt;
    n->set_inputs({x, target, weight});
    n->save(1, tc);
    n->save(2, wc);
    attach_node(out, std::move(n));
  }
  return out;
}

std::vector<TensorImplPtr> NllLossBackward::apply(const TensorImplPtr& grad_out) {
  const auto &tc = saved_[1], &wc = saved_[2];
  const auto gs = grad_scale(*this, grad_out, compute_dtype_);
  auto gx = empty(in_shape_, compute_dtype_);
  LUCID_DISPATCH_FLOAT(compute_dtype_, name(), [&] {
    using T = scalar_t;
    kernels::nll_loss_backward<T>(tc->data<int64_t>(), ptr<T>(wc), gs.data<T>(), gs.scale, gx->data<T>(), geom_,
                                  ignore_index_);
  });
  return {cast_raw(gx, in_dtype_), nullptr, nullptr};
}

std::vector<TensorImplPtr> NllLossBackward::apply_graph(const TensorImplPtr& grad_out) {
  const auto &tc = saved_[1], &wc = saved_[2];
  const DType dt = compute_dtype_;
  TensorImplPtr coef;
  {
    NoGradGuard no_grad;
    coef = class_coef(tc, wc, geom_, ignore_index_, 0.0, dt);
  }
  auto gl = grad_scale_graph(*this, grad_out, dt, {geom_.outer, 1, geom_.inner});
  return {to(reshape(mul(gl, coef), in_shape_), in_dtype_, false), nullptr, nullptr};
}

// ---- mse_loss, l1_loss -----------------------------------------------------------------

template <>
const OpSchema& PointwiseLossBackward<kernels::Pointwise::Mse>::schema_v1 = register_schema(
    {.name = "mse_loss", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& PointwiseLossBackward<kernels::Pointwise::L1>::schema_v1 = register_schema(
    {.name = "l1_loss", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

namespace {
template <kernels::Pointwise K>
TensorImplPtr pointwise_loss(const TensorImplPtr& x, const TensorImplPtr& t, Reduction reduction) {
  using Node = PointwiseLossBackward<K>;
  const char* op = K == kernels::Pointwise::Mse ? "mse_loss" : "l1_loss";
  const DType in = promote_types(x->dtype, t->dtype);
  LUCID_CHECK_DTYPE(is_floating(in), op, ": expected floating input and target, got ", dtype_name(x->dtype), " and ",
                    dtype_name(t->dtype));
  LUCID_CHECK_SHAPE(x->shape == t->shape, op, ": input shape ", shape_str(x->shape), " and target shape ",
                    shape_str(t->shape), " differ (broadcasting in a loss is almost always a bug; expand the "
                    "target explicitly if it is intended)");
  const DType dt = compute_dtype(Node::schema_v1, in);
  auto xc = contiguous_raw(cast_raw(x, dt)), tc = contiguous_raw(cast_raw(t, dt));
  auto per = maybe_empty(reduction == Reduction::None, x->shape, dt);
  kernels::LossSum s;
  s.weight = double(x->numel());
  LUCID_DISPATCH_FLOAT(dt, op, [&] {
    using T = scalar_t;
    s.loss = kernels::pointwise_loss_forward<T>(K, x->numel(), xc->template data<T>(), tc->template data<T>(),
                                                ptr<T>(per));
  });
  auto out = reduced(reduction, per, s, dt);
  if (any_requires_grad({&x, &t})) {
    auto n = std::make_shared<Node>();
    set_meta(*n, reduction, s.weight, x, t);
    n->set_inputs({x, t});
    n->save(0, xc);
    n->save(1, tc);
    attach_node(out, std::move(n));
  }
  return out;
}
}  // namespace

template <kernels::Pointwise K>
std::vector<TensorImplPtr> PointwiseLossBackward<K>::apply(const TensorImplPtr& grad_out) {
  const auto &xc = this->saved_[0], &tc = this->saved_[1];
  const DType dt = xc->dtype;
  const auto gs = grad_scale(*this, grad_out, dt);
  auto gx = maybe_empty(this->needs_input_grad(0), xc->shape, dt);
  auto gt = maybe_empty(this->needs_input_grad(1), xc->shape, dt);
  LUCID_DISPATCH_FLOAT(dt, name(), [&] {
    using T = scalar_t;
    kernels::pointwise_loss_backward<T>(K, xc->numel(), xc->template data<T>(), tc->template data<T>(),
                                        gs.template data<T>(), gs.scale, ptr<T>(gx), ptr<T>(gt));
  });
  return {cast_or_null(gx, this->in_dtype_), cast_or_null(gt, this->target_dtype_)};
}
template <kernels::Pointwise K>
std::vector<TensorImplPtr> PointwiseLossBackward<K>::apply_graph(const TensorImplPtr& grad_out) {
  const auto &xc = this->saved_[0], &tc = this->saved_[1];
  const DType dt = xc->dtype;
  auto gl = grad_scale_graph(*this, grad_out, dt, {});
  TensorImplPtr d;  // d loss / d x per element
  if constexpr (K == kernels::Pointwise::Mse) {
    auto x = saved_input_graph(xc, this->next_edges[0], this->in_shape_, this->in_dtype_);
    auto t = saved_input_graph(tc, this->next_edges[1], this->in_shape_, this->target_dtype_);
    d = mul(gl, mul(sub(x, t), scalar_tensor(2.0, dt)));
  } else {
    TensorImplPtr s;
    {
      NoGradGuard no_grad;
      s = sign(sub(xc, tc));
    }
    d = mul(gl, s);
  }
  TensorImplPtr gx, gt;
  if (this->needs_input_grad(0)) gx = to(d, this->in_dtype_, false);
  if (this->needs_input_grad(1)) gt = to(neg(d), this->target_dtype_, false);
  return {gx, gt};
}
template struct PointwiseLossBackward<kernels::Pointwise::Mse>;
template struct PointwiseLossBackward<kernels::Pointwise::L1>;

TensorImplPtr mse_loss(const TensorImplPtr& x, const TensorImplPtr& t, Reduction r) {
  return pointwise_loss<kernels::Pointwise::Mse>(x, t, r);
}
TensorImplPtr l1_loss(const TensorImplPtr& x, const TensorImplPtr& t, Reduction r) {
  return pointwise_loss<kernels::Pointwise::L1>(x, t, r);
}

// ---- binary_cross_entropy_with_logits --------------------------------------------------

const OpSchema& BinaryCrossEntropyWithLogitsBackward::schema_v1 =
    register_schema({.name = "binary_cross_entropy_with_logits", .version = 1, .amp_policy = AmpPolicy::ForceFP32,
                     .produces_grad = true});

namespace {
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  return true;
}

// `p` broadcast to `shape` as a contiguous tensor of dtype dt (no copy when it already is one).
TensorImplPtr expand_to(const TensorImplPtr& p, const Shape& shape, DType dt) {
  if (!p) return nullptr;
  if (p->shape == shape) return contiguous_raw(cast_raw(p, dt));
  auto e = empty(shape, dt);
  copy_into(e, p);
  return e;
}
}  // namespace

TensorImplPtr binary_cross_entropy_with_logits(const TensorImplPtr& x, const TensorImplPtr& t,
                                               const TensorImplPtr& weight, Reduction reduction,
                                               const TensorImplPtr& pos_weight) {
  const char* op = "binary_cross_entropy_with_logits";
  check_floating(x, op, "input");
  LUCID_CHECK_SHAPE(t->shape == x->shape, op, ": target shape ", shape_str(t->shape), " must equal input shape ",
                    shape_str(x->shape));
  DType in = promote_types(x->dtype, t->dtype);
  for (auto [p, what] : {std::pair{&weight, "weight"}, std::pair{&pos_weight, "pos_weight"}}) {
    if (!*p) continue;
    LUCID_CHECK_DTYPE((*p)->dtype != DType::Bool, op, ": ", what, " must be numeric, got bool");
    LUCID_CHECK_SHAPE(broadcasts_to((*p)->shape, x->shape), op, ": ", what, " of shape ",
                      shape_str((*p)->shape), " cannot be broadcast to the input shape ", shape_str(x->shape));
    in = promote_types(in, (*p)->dtype);
  }
  const DType dt = compute_dtype(BinaryCrossEntropyWithLogitsBackward::schema_v1, in);
  auto xc = contiguous_raw(cast_raw(x, dt)), tc = contiguous_raw(cast_raw(t, dt));
  auto we = expand_to(weight, x->shape, dt), pe = expand_to(pos_weight, x->shape, dt);
  auto per = maybe_empty(reduction == Reduction::None, x->shape, dt);
  kernels::LossSum s;
  s.weight = double(x->numel());
  LUCID_DISPATCH_FLOAT(dt, op, [&] {
    using T = scalar_t;
    s.loss = kernels::bce_logits_forward<T>(x->numel(), xc->data<T>(), tc->data<T>(), ptr<T>(we), ptr<T>(pe),
                                            ptr<T>(per));
  });
  auto out = reduced(reduction, per, s, dt);
  if (any_requires_grad({&x, &t, &weight, &pos_weight})) {
    auto n = std::make_shared<BinaryCrossEntropyWithLogitsBackward>();
    set_meta(*n, reduction, s.weight, x, t);
    if (weight) n->weight_shape_ = weight->shape, n->weight_dtype_ = weight->dtype;
    if (pos_weight) n->pos_weight_shape_ = pos_weight->shape, n->pos_weight_dtype_ = pos_weight->dtype;
    n->set_inputs({x, t, weight, pos_weight});
    n->save(0, xc);
    n->save(1, tc);
    n->save(2, we);
    n->save(3, pe);
    attach_node(out, std::move(n));
  }
  return out;
}

std::vector<TensorImplPtr> BinaryCrossEntropyWithLogitsBackward::apply(const TensorImplPtr& grad_out) {
  const auto &xc = saved_[0], &tc = saved_[1], &we = saved_[2], &pe = saved_[3];
  const DType dt = xc->dtype;
  const auto gs = grad_scale(*this, grad_out, dt);
  auto gx = maybe_empty(needs_input_grad(0), in_shape_, dt), gt = maybe_empty(needs_input_grad(1), in_shape_, dt);
  auto gw = maybe_empty(needs_input_grad(2), in_shape_, dt), gp = maybe_empty(needs_input_grad(3), in_shape_, dt);
  LUCID_DISPATCH_FLOAT(dt, name(), [&] {
    using T = scalar_t;
    kernels::bce_logits_backward<T>(xc->numel(), xc->data<T>(), tc->data<T>(), ptr<T>(we), ptr<T>(pe), gs.data<T>(),
                                    gs.scale, ptr<T>(gx), ptr<T>(gt), ptr<T>(gw), ptr<T>(gp));
  });
  return {cast_or_null(gx, in_dtype_), cast_or_null(gt, target_dtype_),
          gw ? grad_for(gw, weight_shape_, weight_dtype_) : nullptr,
          gp ? grad_for(gp, pos_weight_shape_, pos_weight_dtype_) : nullptr};
}

std::vector<TensorImplPtr> BinaryCrossEntropyWithLogitsBackward::apply_graph(const TensorImplPtr& grad_out) {
  const auto &xc = saved_[0], &tc = saved_[1], &we = saved_[2], &pe = saved_[3];
  const DType dt = xc->dtype;
  auto gl = grad_scale_graph(*this, grad_out, dt, {});
  auto x = saved_input_graph(xc, next_edges[0], in_shape_, in_dtype_);
  auto t = saved_input_graph(tc, next_edges[1], in_shape_, target_dtype_);
  auto w = we ? saved_input_graph(we, next_edges[2], weight_shape_, weight_dtype_) : nullptr;
  auto pw = pe ? saved_input_graph(pe, next_edges[3], pos_weight_shape_, pos_weight_dtype_) : nullptr;
  auto one = scalar_tensor(1.0, dt);
  // loss = w ((1 - t) x + lw softplus(-x)),  lw = 1 + (pw - 1) t,  softplus(-x) = -logsigmoid(x)
  auto sp = neg(logsigmoid(x));
  auto one_t = sub(one, t);
  auto lw = pw ? add(one, mul(sub(pw, one), t)) : nullptr;
  auto gw = w ? mul(gl, w) : gl;  // g w
  std::vector<TensorImplPtr> r(4);
  if (needs_input_grad(0)) {
    auto s = sigmoid(neg(x));
    r[0] = to(mul(gw, sub(one_t, lw ? mul(lw, s) : s)), in_dtype_, false);
  }
  if (needs_input_grad(1)) {
    auto d = neg(x);
    if (pw) d = add(d, mul(sub(pw, one), sp));
    r[1] = to(mul(gw, d), target_dtype_, false);
  }
  if (needs_input_grad(2))
    r[2] = grad_for_graph(mul(gl, add(mul(one_t, x), lw ? mul(lw, sp) : sp)), weight_shape_, weight_dtype_);
  if (needs_input_grad(3)) r[3] = grad_for_graph(mul(gw, mul(t, sp)), pos_weight_shape_, pos_weight_dtype_);
  return r;
}

}  // namespace lucid
