#include "ops/layer_norm.h"

#include "autograd/engine.h"
#include "core/autocast.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/half_map.h"
#include "kernels/cpu/norm_double.h"
#include "ops/binary.h"
#include "ops/op_utils.h"
#include "ops/rms_norm.h"

namespace lucid {

const OpSchema& LayerNormBackward::schema_v1 = register_schema(
    {.name = "layer_norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

const OpSchema& LayerNormBackwardBackward::schema_v1 = register_schema(
    {.name = "layer_norm_backward", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

TensorImplPtr layer_norm(const TensorImplPtr& x, const Shape& normalized_shape, const TensorImplPtr& weight,
                         const TensorImplPtr& bias, double eps) {
  const char* op = "layer_norm";
  check_norm_inputs(op, x, {{"weight", &weight}, {"bias", &bias}});
  check_eps(op, eps);
  const int64_t N = check_normalized_shape(op, x, normalized_shape, {{"weight", &weight}, {"bias", &bias}});
  const int64_t outer = x->numel() / N;

  DType in = x->dtype;
  if (weight) in = promote_types(in, weight->dtype);
  if (bias) in = promote_types(in, bias->dtype);
  const DType cd = compute_dtype(LayerNormBackward::schema_v1, in);
  auto xc = contiguous_raw(cast_raw(x, cd));
  auto wc = weight ? contiguous_raw(cast_raw(weight, cd)) : nullptr;
  auto bc = bias ? contiguous_raw(cast_raw(bias, cd)) : nullptr;
  auto y = empty(x->shape, cd);
  auto mean = empty({outer}, acc_dtype(cd));
  auto rstd = empty({outer}, acc_dtype(cd));
  LUCID_DISPATCH_FLOAT(cd, op, [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::layer_norm_forward<T>(xc->data<T>(), wc ? wc->data<T>() : nullptr, bc ? bc->data<T>() : nullptr,
                                   y->data<T>(), mean->data<A>(), rstd->data<A>(), outer, N, A(eps));
  });
  if (any_requires_grad({&x, &weight, &bias})) {
    auto node = std::make_shared<LayerNormBackward>();
    node->set_inputs({x, weight, bias});
    node->save(0, x);
    node->save(1, weight);
    node->saved_mean_ = mean;
    node->saved_rstd_ = rstd;
    node->outer_ = size_t(outer), node->N_ = size_t(N);
    node->eps_ = eps;
    node->compute_dtype_ = cd;
    if (bias) node->bias_shape_ = bias->shape, node->bias_dtype_ = bias->dtype;
    attach_node(y, std::move(node));
  }
  return y;
}

std::vector<TensorImplPtr> LayerNormBackward::apply(const TensorImplPtr& grad_out) {
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  const bool need_dx = needs_input_grad(0), need_dw = w && needs_input_grad(1), need_db = needs_input_grad(2);
  const DType cd = compute_dtype_;
  const int64_t outer = int64_t(outer_), N = int64_t(N_);
  const NormBackwardArgs a = norm_backward_args("LayerNormBackward", grad_out, x, w, cd, need_dx, need_dw, need_db, w ? w->shape : Shape{}, bias_shape_);
  if (a.none()) return {nullptr, nullptr, nullptr};
  const TensorImplPtr &xc = a.xc, &wc = a.wc, &go = a.go, &dx = a.dx, &dw = a.dw, &db = a.db;
  const int64_t P = kernels::norm_chunks(outer, N);
  const DType ad = acc_dtype(cd);
  const int64_t parts = int64_t(need_dw) + int64_t(need_db);
  auto scratch = parts && P > 1 ? empty({parts * P * N}, ad) : nullptr;
  LUCID_DISPATCH_FLOAT(cd, "layer_norm_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::layer_norm_backward<T>(xc->data<T>(), wc ? wc->data<T>() : nullptr, go->data<T>(),
                                    saved_mean_->data<A>(), saved_rstd_->data<A>(), dx ? dx->data<T>() : nullptr,
                                    dw ? dw->data<A>() : nullptr, db ? db->data<A>() : nullptr,
                                    scratch ? scratch->data<A>() : nullptr, outer, N);
  });
  return {dx ? cast_raw(dx, x->dtype) : nullptr, dw ? cast_raw(dw, w->dtype) : nullptr,
          db ? cast_raw(db, bias_dtype_) : nullptr};
}

std::vector<TensorImplPtr> LayerNormBackward::apply_graph(const TensorImplPtr& grad_out) {
  std::vector<TensorImplPtr> res;
  {
    NoGradGuard no_grad;
    res = apply(grad_out);
  }
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  if (!any_requires_grad({&grad_out, &x, &w})) return res;
  std::shared_ptr<LayerNormBackwardBackward> dx_node;
  for (int out = 0; out < 3; ++out) {
    if (!res[size_t(out)]) continue;
    auto n = std::make_shared<LayerNormBackwardBackward>();
    n->set_inputs({grad_out, x, w});
    n->save(0, grad_out);
    n->save(1, x);
    n->save(2, w);
    n->saved_mean_ = saved_mean_, n->saved_rstd_ = saved_rstd_;
    n->outer_ = outer_, n->N_ = N_;
    n->compute_dtype_ = compute_dtype_;
    n->which_ = out;
    if (out == 0) dx_node = n;
    else n->partner_ = dx_node;
    attach_node(res[size_t(out)], std::move(n));
  }
  return res;
}

std::vector<TensorImplPtr> LayerNormBackwardBackward::apply(const TensorImplPtr& up) {
  const TensorImplPtr &g = saved_[0], &x = saved_[1], &w = saved_[2];
  if (which_ != 0 && up) {  // see NOTE [one pass for both outputs] in ops/rms_norm.h
    auto p = partner_.lock();
    if (p && !GradMode::is_enabled() && Engine::pending(p.get())) {
      auto& slot = which_ == 1 ? p->deferred_v_ : p->deferred_z_;
      slot = slot ? add(slot, up) : up;
      return {nullptr, nullptr, nullptr};
    }
  }
  TensorImplPtr u, v, z;
  if (which_ == 0) u = up, v = std::move(deferred_v_), z = std::move(deferred_z_);
  else if (which_ == 1) v = up;
  else z = up;
  deferred_v_.reset();
  deferred_z_.reset();
  // The d_bias gradient (sum of grad_out) is linear in grad_out alone: z reaches only d grad_out.
  const bool need_dg = needs_input_grad(0) && (u || v || z);
  const bool need_dx = needs_input_grad(1) && (u || v);
  const bool need_dw = w && u && needs_input_grad(2);
  if (!need_dg && !need_dx && !need_dw) return {nullptr, nullptr, nullptr};
  const DoubleBackwardDtypes dt(compute_dtype_);
  const DType cd = dt.kd, ad = acc_dtype(cd);
  const int64_t outer = int64_t(outer_), N = int64_t(N_);
  auto xc = dt.in(x), wc = dt.in(w), go = dt.in(g), uc = dt.in(u), vc = dt.in(v), zc = dt.in(z);
  auto d_g = need_dg ? empty(x->shape, cd) : nullptr;
  auto d_x = need_dx ? empty(x->shape, cd) : nullptr;
  auto d_w = need_dw ? empty(w->shape, ad) : nullptr;
  const int64_t P = kernels::norm_chunks(outer, N);
  auto scratch = need_dw && P > 1 ? empty({P * N}, ad) : nullptr;
  LUCID_DISPATCH_FLOAT_NO_HALF(cd, "layer_norm_double_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    auto p = [](const TensorImplPtr& t) { return t ? t->data<T>() : nullptr; };
    kernels::layer_norm_double_backward<T>(xc->data<T>(), p(wc), go->data<T>(), saved_mean_->data<A>(),
                                           saved_rstd_->data<A>(), p(uc), p(vc), p(zc), p(d_g), p(d_x),
                                           d_w ? d_w->data<A>() : nullptr, scratch ? scratch->data<A>() : nullptr,
                                           outer, N);
  });
  return {dt.out(d_g, g->dtype), dt.out(d_x, x->dtype), d_w ? cast_raw(d_w, w->dtype) : nullptr};
}

}  // namespace lucid
