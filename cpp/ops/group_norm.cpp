#include "ops/group_norm.h"

#include "core/autocast.h"
#include "kernels/cpu/norm_channel.h"
#include "ops/binary.h"
#include "ops/reduce.h"
#include "ops/op_utils.h"
#include "ops/rms_norm.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

const OpSchema& GroupNormBackward::schema_v1 = register_schema(
    {.name = "group_norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

TensorImplPtr group_norm(const TensorImplPtr& x, int64_t num_groups, const TensorImplPtr& weight,
                         const TensorImplPtr& bias, double eps) {
  const char* op = "group_norm";
  check_norm_inputs(op, x, {{"weight", &weight}, {"bias", &bias}});
  check_eps(op, eps);
  LUCID_CHECK_SHAPE(x->ndim() >= 2, op, ": expected input of shape (N, C, *) with at least 2 dims, got ",
                    shape_str(x->shape));
  const int64_t N = x->shape[0], C = x->shape[1], G = num_groups;
  LUCID_CHECK_SHAPE(G > 0, op, ": num_groups must be positive, got ", G);
  LUCID_CHECK_SHAPE(C % G == 0, op, ": expected the number of channels in input to be divisible by num_groups, "
                    "but got input of shape ", shape_str(x->shape), " and num_groups=", G);
  int64_t S = 1;
  for (int64_t d = 2; d < x->ndim(); ++d) S *= x->shape[d];
  for (auto [name, p] : {std::pair{"weight", &weight}, std::pair{"bias", &bias}})
    if (*p)
      LUCID_CHECK_SHAPE((*p)->shape == Shape{C}, op, ": ", name, " shape ", shape_str((*p)->shape),
                        " does not match the channel count [", C, "] of input ", shape_str(x->shape));

  DType in = x->dtype;
  if (weight) in = promote_types(in, weight->dtype);
  if (bias) in = promote_types(in, bias->dtype);
  const DType cd = compute_dtype(GroupNormBackward::schema_v1, in), ad = acc_dtype(cd);
  auto xc = contiguous_raw(cast_raw(x, cd));
  auto wc = weight ? contiguous_raw(cast_raw(weight, cd)) : nullptr;
  auto bc = bias ? contiguous_raw(cast_raw(bias, cd)) : nullptr;
  auto y = empty(x->shape, cd);
  auto mean = empty({N, G}, ad), rstd = empty({N, G}, ad);
  LUCID_DISPATCH_FLOAT(cd, op, [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::group_norm_forward<T>(xc->data<T>(), wc ? wc->data<T>() : nullptr, bc ? bc->data<T>() : nullptr,
                                   y->data<T>(), mean->data<A>(), rstd->data<A>(), N, C, S, G, A(eps));
  });
  if (any_requires_grad({&x, &weight, &bias})) {
    auto node = std::make_shared<GroupNormBackward>();
    node->set_inputs({x, weight, bias});
    node->save(0, x);
    node->save(1, weight);
    node->saved_mean_ = mean;
    node->saved_rstd_ = rstd;
    node->N_ = size_t(N), node->C_ = size_t(C), node->S_ = size_t(S), node->G_ = size_t(G);
    node->eps_ = eps;
    node->compute_dtype_ = cd;
    if (bias) node->bias_shape_ = bias->shape, node->bias_dtype_ = bias->dtype;
    attach_node(y, std::move(node));
  }
  return y;
}

std::vector<TensorImplPtr> GroupNormBackward::apply(const TensorImplPtr& grad_out) {
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  const bool need_dx = needs_input_grad(0), need_dw = w && needs_input_grad(1), need_db = needs_input_grad(2);
  const DType cd = compute_dtype_;
  const int64_t N = int64_t(N_), C = int64_t(C_), S = int64_t(S_), G = int64_t(G_);
  const NormBackwardArgs a = norm_backward_args("GroupNormBackward", grad_out, x, w, cd, need_dx, need_dw, need_db, {C}, {C});
  if (a.none()) return {nullptr, nullptr, nullptr};
  const TensorImplPtr &xc = a.xc, &wc = a.wc, &go = a.go, &dx = a.dx, &dw = a.dw, &db = a.db;
  LUCID_DISPATCH_FLOAT(cd, "group_norm_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::group_norm_backward<T>(xc->data<T>(), wc ? wc->data<T>() : nullptr, go->data<T>(),
                                    saved_mean_->data<A>(), saved_rstd_->data<A>(), dx ? dx->data<T>() : nullptr,
                                    dw ? dw->data<A>() : nullptr, db ? db->data<A>() : nullptr, N, C, S, G);
  });
  return {dx ? cast_raw(dx, x->dtype) : nullptr, dw ? cast_raw(dw, w->dtype) : nullptr,
          db ? cast_raw(reshape_raw(db, bias_shape_), bias_dtype_) : nullptr};
}

std::vector<TensorImplPtr> GroupNormBackward::apply_graph(const TensorImplPtr& grad_out) {
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  const DType cd = compute_dtype_;
  const int64_t N = int64_t(N_), C = int64_t(C_), S = int64_t(S_), G = int64_t(G_);
  const int64_t L = C / G * S;
  auto xg = reshape(to(x, cd, false), {N, G, L});
  auto g3 = reshape(to(grad_out, cd, false), {N, C, S});
  auto xc = sub(xg, mean(xg, {2}, true));
  auto rstd = rsqrt(add(mean(mul(xc, xc), {2}, true), scalar_tensor(eps_, cd)));  // (N, G, 1)
  auto xhat = mul(xc, rstd);                                                        // (N, G, L)
  auto gy = reshape(w ? mul(g3, reshape(to(w, cd, false), {1, C, 1})) : g3, {N, G, L});
  TensorImplPtr dx, dw, db;
  if (needs_input_grad(0)) {
    auto inner = sub(sub(gy, mean(gy, {2}, true)), mul(xhat, mean(mul(gy, xhat), {2}, true)));
    dx = to(reshape(mul(rstd, inner), x->shape), x->dtype, false);
  }
  if (w && needs_input_grad(1))
    dw = to(reshape(sum(mul(g3, reshape(xhat, {N, C, S})), {0, 2}, false), w->shape), w->dtype, false);
  if (needs_input_grad(2)) db = to(reshape(sum(g3, {0, 2}, false), bias_shape_), bias_dtype_, false);
  return {dx, dw, db};
}

}  // namespace lucid
