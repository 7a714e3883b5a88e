#include "ops/layer_norm.h"

#include "core/autocast.h"
#include "kernels/cpu/norm.h"
#include "ops/binary.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/rms_norm.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

const OpSchema& LayerNormBackward::schema_v1 = register_schema(
    {.name = "layer_norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

namespace {
DType acc_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }
}  // namespace

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
  const TensorImplPtr& x = saved_[0];
  const TensorImplPtr& w = saved_[1];
  LUCID_CHECK_DTYPE(grad_out != nullptr, "LayerNormBackward: grad_out is None");
  LUCID_CHECK_SHAPE(grad_out->shape == x->shape, "LayerNormBackward: grad_out shape ", shape_str(grad_out->shape),
                    " does not match the output shape ", shape_str(x->shape));
  LUCID_CHECK_DTYPE(is_floating(grad_out->dtype), "LayerNormBackward: expected a floating grad_out, got ",
                    dtype_name(grad_out->dtype));
  const bool need_dx = needs_input_grad(0);
  const bool need_dw = w && needs_input_grad(1);
  const bool need_db = needs_input_grad(2);
  if (!need_dx && !need_dw && !need_db) return {nullptr, nullptr, nullptr};
  const DType cd = compute_dtype_, ad = acc_dtype(cd);
  const int64_t outer = int64_t(outer_), N = int64_t(N_);
  auto xc = contiguous_raw(cast_raw(x, cd));
  auto wc = w ? contiguous_raw(cast_raw(w, cd)) : nullptr;
  auto go = contiguous_raw(cast_raw(grad_out, cd));
  auto dx = need_dx ? empty(x->shape, cd) : nullptr;
  auto dw = need_dw ? empty(w->shape, ad) : nullptr;
  auto db = need_db ? empty(bias_shape_, ad) : nullptr;
  const int64_t P = kernels::norm_chunks(outer, N);
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
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  const DType cd = compute_dtype_;
  const int64_t outer = int64_t(outer_), N = int64_t(N_);
  auto x2 = reshape(to(x, cd, false), {outer, N});
  auto g2 = reshape(to(grad_out, cd, false), {outer, N});
  auto xc = sub(x2, mean(x2, {1}, true));
  auto rstd = rsqrt(add(mean(mul(xc, xc), {1}, true), scalar_tensor(eps_, cd)));
  auto xhat = mul(xc, rstd);
  auto gy = w ? mul(g2, reshape(to(w, cd, false), {N})) : g2;
  TensorImplPtr dx, dw, db;
  if (needs_input_grad(0)) {
    auto inner = sub(sub(gy, mean(gy, {1}, true)), mul(xhat, mean(mul(gy, xhat), {1}, true)));
    dx = to(reshape(mul(rstd, inner), x->shape), x->dtype, false);
  }
  if (w && needs_input_grad(1)) dw = to(reshape(sum(mul(g2, xhat), {0}, false), w->shape), w->dtype, false);
  if (needs_input_grad(2)) db = to(reshape(sum(g2, {0}, false), bias_shape_), bias_dtype_, false);
  return {dx, dw, db};
}

}  // namespace lucid
