#include "ops/rms_norm.h"

#include <algorithm>
#include <cmath>

#include "autograd/engine.h"
#include "core/autocast.h"
#include "ops/binary.h"
#include "ops/norm_node.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/half_map.h"
#include "kernels/cpu/norm_double.h"

namespace lucid {

const OpSchema& RMSNormBackward::schema_v1 = register_schema(
    {.name = "rms_norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

const OpSchema& RMSNormBackwardBackward::schema_v1 = register_schema(
    {.name = "rms_norm_backward", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

namespace {

// x and gamma validated; N = numel of the normalised dims, k <= N features feed rstd.
TensorImplPtr rms_norm_impl(const TensorImplPtr& x, const TensorImplPtr& gamma, int64_t N, int64_t k, double eps) {
  const DType in = gamma ? promote_types(x->dtype, gamma->dtype) : x->dtype;
  const DType cd = compute_dtype(RMSNormBackward::schema_v1, in);
  const int64_t outer = x->numel() / N;
  // Made contiguous (and cast, under autocast) once; the kernel then reads each row once.
  auto xc = contiguous_raw(cast_raw(x, cd));
  auto gc = gamma ? contiguous_raw(cast_raw(gamma, cd)) : nullptr;
  auto y = empty(x->shape, cd);
  auto rstd = empty({outer}, acc_dtype(cd));
  LUCID_DISPATCH_FLOAT(cd, "rms_norm", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::rms_norm_forward<T>(xc->data<T>(), gc ? gc->data<T>() : nullptr, y->data<T>(), rstd->data<A>(),
                                 outer, N, k, A(eps));
  });
  if (any_requires_grad({&x, &gamma})) {
    auto node = std::make_shared<RMSNormBackward>();
    node->set_inputs({x, gamma});
    node->save(0, x);
    node->save(1, gamma);
    node->saved_rstd_ = rstd;
    node->outer_ = size_t(outer);
    node->N_ = size_t(N);
    node->k_ = size_t(k);
    node->eps_ = eps;
    node->compute_dtype_ = cd;
    attach_node(y, std::move(node));
  }
  return y;
}

}  // namespace

void check_norm_inputs(const char* op, const TensorImplPtr& x, std::initializer_list<std::pair<const char*, const TensorImplPtr*>> params) {
  LUCID_CHECK_DTYPE(x != nullptr, op, ": expected a Tensor input, got None");
  LUCID_CHECK_DTYPE(is_floating(x->dtype), op, ": expected a floating input, got ", dtype_name(x->dtype));
  for (auto& [name, p] : params)
    if (*p)
      LUCID_CHECK_DTYPE(is_floating((*p)->dtype), op, ": expected a floating ", name, ", got ",
                        dtype_name((*p)->dtype));
}

void check_eps(const char* op, double eps) {
  LUCID_CHECK_SHAPE(eps >= 0.0, op, ": eps must be >= 0, got ", eps);  // NaN fails too
}

int64_t check_normalized_shape(const char* op, const TensorImplPtr& x, const Shape& ns,
                               std::initializer_list<std::pair<const char*, const TensorImplPtr*>> params) {
  LUCID_CHECK_SHAPE(!ns.empty(), op, ": normalized_shape must have at least one dim, got []");
  for (auto d : ns)
    LUCID_CHECK_SHAPE(d > 0, op, ": normalized_shape must hold positive sizes, got ", shape_str(ns));
  LUCID_CHECK_SHAPE(ns.size() <= x->shape.size(), op, ": normalized_shape ", shape_str(ns),
                    " has more dims than input ", shape_str(x->shape));
  const Shape trailing(x->shape.end() - int64_t(ns.size()), x->shape.end());
  LUCID_CHECK_SHAPE(trailing == ns, op, ": normalized_shape ", shape_str(ns), " does not match trailing dims ",
                    shape_str(trailing), " of input ", shape_str(x->shape));
  for (auto& [name, p] : params)
    if (*p)
      LUCID_CHECK_SHAPE((*p)->shape == ns, op, ": ", name, " shape ", shape_str((*p)->shape),
                        " does not match normalized_shape ", shape_str(ns));
  return numel_of(ns);
}

int64_t rms_norm_partial_k(int64_t N, double partial_ratio) {
  LUCID_CHECK_SHAPE(partial_ratio >= 0.0 && partial_ratio <= 1.0,
                    "rms_norm: partial_ratio must be in [0, 1], got ", partial_ratio);
  LUCID_CHECK_SHAPE(N >= 1, "rms_norm: the normalised size must be >= 1, got ", N);
  if (partial_ratio == 0.0) return N;
  // NOTE: the ceil of the double product, exactly as the reference formula
  // ceil(dim * partial_ratio) evaluates in Python: 10 * 0.3 == 3.0000000000000004 gives k = 4.
  return std::clamp<int64_t>(int64_t(std::ceil(double(N) * partial_ratio)), 1, N);
}

TensorImplPtr rms_norm(const TensorImplPtr& x, const Shape& normalized_shape, const TensorImplPtr& gamma,
                       double eps, double partial_ratio) {
  check_norm_inputs("rms_norm", x, {{"weight", &gamma}});
  check_eps("rms_norm", eps);
  const int64_t N = check_normalized_shape("rms_norm", x, normalized_shape, {{"weight", &gamma}});
  const int64_t k = rms_norm_partial_k(N, partial_ratio);
  return rms_norm_impl(x, gamma, N, k, eps);
}

TensorImplPtr RMSNormBackward::forward(const TensorImplPtr& x, const TensorImplPtr& gamma, double eps) {
  check_norm_inputs("rms_norm", x, {{"weight", &gamma}});
  LUCID_CHECK_DTYPE(gamma != nullptr, "rms_norm: forward needs gamma (its ndim picks the normalised dims); "
                    "for no gain use rms_norm(x, normalized_shape, None, eps)");
  LUCID_CHECK_SHAPE(gamma->ndim() >= 1, "rms_norm: weight must have at least one dim, got shape []");
  LUCID_CHECK_SHAPE(gamma->ndim() <= x->ndim(), "rms_norm: weight shape ", shape_str(gamma->shape),
                    " has more dims than input ", shape_str(x->shape));
  const Shape trailing(x->shape.end() - gamma->ndim(), x->shape.end());
  LUCID_CHECK_SHAPE(trailing == gamma->shape, "rms_norm: weight shape ", shape_str(gamma->shape),
                    " does not match trailing dims ", shape_str(trailing), " of input ", shape_str(x->shape));
  return rms_norm(x, gamma->shape, gamma, eps, 0.0);
}

std::vector<TensorImplPtr> RMSNormBackward::apply(const TensorImplPtr& grad_out) {
  const TensorImplPtr& x = saved_[0];
  const TensorImplPtr& gamma = saved_[1];
  LUCID_CHECK_DTYPE(grad_out != nullptr, "RMSNormBackward: grad_out is None");
  LUCID_CHECK_SHAPE(grad_out->shape == x->shape, "RMSNormBackward: grad_out shape ", shape_str(grad_out->shape),
                    " does not match the output shape ", shape_str(x->shape));
  LUCID_CHECK_DTYPE(is_floating(grad_out->dtype), "RMSNormBackward: expected a floating grad_out, got ",
                    dtype_name(grad_out->dtype));
  const bool need_dx = needs_input_grad(0);
  const bool need_dg = gamma && needs_input_grad(1);
  if (!need_dx && !need_dg) return {nullptr, nullptr};
  const DType cd = compute_dtype_, ad = acc_dtype(cd);
  const int64_t outer = int64_t(outer_), N = int64_t(N_);
  auto xc = contiguous_raw(cast_raw(x, cd));
  auto gc = gamma ? contiguous_raw(cast_raw(gamma, cd)) : nullptr;
  auto go = contiguous_raw(cast_raw(grad_out, cd));
  auto dx = need_dx ? empty(x->shape, cd) : nullptr;
  auto dg = need_dg ? empty(gamma->shape, ad) : nullptr;
  const int64_t P = kernels::norm_chunks(outer, N);
  auto scratch = need_dg && P > 1 ? empty({P * N}, ad) : nullptr;
  LUCID_DISPATCH_FLOAT(cd, "rms_norm_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::rms_norm_backward<T>(xc->data<T>(), gc ? gc->data<T>() : nullptr, go->data<T>(),
                                  saved_rstd_->data<A>(), dx ? dx->data<T>() : nullptr, dg ? dg->data<A>() : nullptr,
                                  scratch ? scratch->data<A>() : nullptr, outer, N, int64_t(k_));
  });
  return {dx ? cast_raw(dx, x->dtype) : nullptr, dg ? cast_raw(dg, gamma->dtype) : nullptr};
}

std::vector<TensorImplPtr> RMSNormBackward::apply_graph(const TensorImplPtr& grad_out) {
  std::vector<TensorImplPtr> res;
  {
    NoGradGuard no_grad;
    res = apply(grad_out);
  }
  const TensorImplPtr &x = saved_[0], &gamma = saved_[1];
  if (!any_requires_grad({&grad_out, &x, &gamma})) return res;
  std::shared_ptr<RMSNormBackwardBackward> dx_node;
  for (size_t out = 0; out < 2; ++out) {
    if (!res[out]) continue;
    auto n = std::make_shared<RMSNormBackwardBackward>();
    n->set_inputs({grad_out, x, gamma});
    n->save(0, grad_out);
    n->save(1, x);
    n->save(2, gamma);
    n->saved_rstd_ = saved_rstd_;
    n->outer_ = outer_, n->N_ = N_, n->k_ = k_;
    n->compute_dtype_ = compute_dtype_;
    n->wrt_gamma_ = out == 1;
    if (out == 0) dx_node = n;
    else n->partner_ = dx_node;
    attach_node(res[out], std::move(n));
  }
  return res;
}

std::vector<TensorImplPtr> RMSNormBackwardBackward::apply(const TensorImplPtr& up) {
  const TensorImplPtr &g = saved_[0], &x = saved_[1], &gamma = saved_[2];
  if (wrt_gamma_ && up) {  // see NOTE [one pass for both outputs]
    auto p = partner_.lock();
    if (p && !GradMode::is_enabled() && Engine::pending(p.get())) {
      p->deferred_v_ = p->deferred_v_ ? add(p->deferred_v_, up) : up;
      return {nullptr, nullptr, nullptr};
    }
  }
  TensorImplPtr v = wrt_gamma_ ? up : std::move(deferred_v_);
  const TensorImplPtr u = wrt_gamma_ ? nullptr : up;
  deferred_v_.reset();
  const bool need_dg = needs_input_grad(0), need_dx = needs_input_grad(1);
  const bool need_dgamma = gamma && u && needs_input_grad(2);  // only the dx-node's u has a gamma term
  if ((!need_dg && !need_dx && !need_dgamma) || (!u && !v)) return {nullptr, nullptr, nullptr};
  const DoubleBackwardDtypes dt(compute_dtype_);
  const DType cd = dt.kd, ad = acc_dtype(cd);
  const int64_t outer = int64_t(outer_), N = int64_t(N_);
  auto xc = dt.in(x), gc = dt.in(gamma), go = dt.in(g), uc = dt.in(u), vc = dt.in(v);
  auto d_g = need_dg ? empty(x->shape, cd) : nullptr;
  auto d_x = need_dx ? empty(x->shape, cd) : nullptr;
  auto d_gamma = need_dgamma ? empty(gamma->shape, ad) : nullptr;
  const int64_t P = kernels::norm_chunks(outer, N);
  auto scratch = need_dgamma && P > 1 ? empty({P * N}, ad) : nullptr;
  LUCID_DISPATCH_FLOAT_NO_HALF(cd, "rms_norm_double_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::rms_norm_double_backward<T>(
        xc->data<T>(), gc ? gc->data<T>() : nullptr, go->data<T>(), saved_rstd_->data<A>(),
        uc ? uc->data<T>() : nullptr, vc ? vc->data<T>() : nullptr, d_g ? d_g->data<T>() : nullptr,
        d_x ? d_x->data<T>() : nullptr, d_gamma ? d_gamma->data<A>() : nullptr,
        scratch ? scratch->data<A>() : nullptr, outer, N, int64_t(k_));
  });
  return {dt.out(d_g, g->dtype), dt.out(d_x, x->dtype), d_gamma ? cast_raw(d_gamma, gamma->dtype) : nullptr};
}

}  // namespace lucid
