#include "ops/batch_norm.h"

#include <cmath>

#include "core/autocast.h"
#include "kernels/cpu/norm_channel.h"
#include "ops/binary.h"
#include "ops/reduce.h"
#include "ops/op_utils.h"
#include "ops/rms_norm.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

const OpSchema& BatchNormBackward::schema_v1 = register_schema(
    {.name = "batch_norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

namespace {

void check_channel_param(const char* op, const char* name, const TensorImplPtr& p, int64_t C,
                         const TensorImplPtr& x) {
  if (p)
    LUCID_CHECK_SHAPE(p->shape == Shape{C}, op, ": ", name, " shape ", shape_str(p->shape),
                      " does not match the channel count [", C, "] of input ", shape_str(x->shape));
}
}  // namespace

TensorImplPtr batch_norm(const TensorImplPtr& x, const TensorImplPtr& weight, const TensorImplPtr& bias,
                         const TensorImplPtr& running_mean, const TensorImplPtr& running_var, bool training,
                         double momentum, double eps) {
  const char* op = "batch_norm";
  check_norm_inputs(op, x, {{"weight", &weight}, {"bias", &bias}, {"running_mean", &running_mean},
                            {"running_var", &running_var}});
  check_eps(op, eps);
  LUCID_CHECK_SHAPE(x->ndim() >= 2, op, ": expected input of shape (N, C, *) with at least 2 dims, got ",
                    shape_str(x->shape));
  LUCID_CHECK_SHAPE(std::isfinite(momentum), op, ": momentum must be a finite number, got ", momentum);
  const int64_t N = x->shape[0], C = x->shape[1];
  int64_t S = 1;
  for (int64_t d = 2; d < x->ndim(); ++d) S *= x->shape[d];
  check_channel_param(op, "weight", weight, C, x);
  check_channel_param(op, "bias", bias, C, x);
  check_channel_param(op, "running_mean", running_mean, C, x);
  check_channel_param(op, "running_var", running_var, C, x);
  LUCID_CHECK_SHAPE(bool(running_mean) == bool(running_var), op,
                    ": pass both running_mean and running_var, or neither");
  LUCID_CHECK(training || running_mean, op, ": running_mean and running_var are required when training=False");
  const int64_t M = N * S;
  if (training)
    LUCID_CHECK_SHAPE(M != 1, op, ": expected more than 1 value per channel when training, got input size ",
                      shape_str(x->shape));

  DType in = x->dtype;
  if (weight) in = promote_types(in, weight->dtype);
  if (bias) in = promote_types(in, bias->dtype);
  const DType cd = compute_dtype(BatchNormBackward::schema_v1, in), ad = acc_dtype(cd);
  auto xc = contiguous_raw(cast_raw(x, cd));
  auto wc = weight ? contiguous_raw(cast_raw(weight, cd)) : nullptr;
  auto bc = bias ? contiguous_raw(cast_raw(bias, cd)) : nullptr;
  auto mean = empty({C}, ad), rstd = empty({C}, ad);
  if (training) {
    auto var = empty({C}, ad);
    LUCID_DISPATCH_FLOAT(cd, op, [&] {
      using T = scalar_t;
      using A = acc_t<T>;
      kernels::batch_norm_stats<T>(xc->data<T>(), mean->data<A>(), var->data<A>(), N, C, S);
      A* r = rstd->data<A>();
      const A* v = var->data<A>();
      for (int64_t c = 0; c < C; ++c) r[c] = A(1) / std::sqrt(v[c] + A(eps));
      if (running_mean && M > 0) {  // an empty batch leaves the running statistics alone, as PyTorch
        auto rm = contiguous_raw(cast_raw(running_mean, ad)), rv = contiguous_raw(cast_raw(running_var, ad));
        auto nm = empty({C}, ad), nv = empty({C}, ad);
        const A mo = A(momentum), unbias = A(double(M) / double(M - 1));
        for (int64_t c = 0; c < C; ++c) {
          nm->data<A>()[c] = (A(1) - mo) * rm->data<A>()[c] + mo * mean->data<A>()[c];
          nv->data<A>()[c] = (A(1) - mo) * rv->data<A>()[c] + mo * v[c] * unbias;
        }
        copy_into(running_mean, nm);
        copy_into(running_var, nv);
        running_mean->bump_version();
        running_var->bump_version();
      }
    });
  } else {
    copy_into(mean, running_mean);  // copies: a later in-place edit of the buffers cannot reach backward
    copy_into(rstd, running_var);
    LUCID_DISPATCH_FLOAT(ad, op, [&] {
      using A = scalar_t;
      A* r = rstd->data<A>();
      for (int64_t c = 0; c < C; ++c) r[c] = A(1) / std::sqrt(r[c] + A(eps));
    });
  }
  auto y = empty(x->shape, cd);
  LUCID_DISPATCH_FLOAT(cd, op, [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::batch_norm_apply<T>(xc->data<T>(), wc ? wc->data<T>() : nullptr, bc ? bc->data<T>() : nullptr,
                                 mean->data<A>(), rstd->data<A>(), y->data<T>(), N, C, S);
  });
  if (any_requires_grad({&x, &weight, &bias})) {
    auto node = std::make_shared<BatchNormBackward>();
    node->set_inputs({x, weight, bias});
    node->save(0, x);
    node->save(1, weight);
    node->saved_mean_ = mean;
    node->saved_rstd_ = rstd;
    node->N_ = size_t(N), node->C_ = size_t(C), node->S_ = size_t(S);
    node->training_ = training;
    node->eps_ = eps;
    node->compute_dtype_ = cd;
    if (bias) node->bias_shape_ = bias->shape, node->bias_dtype_ = bias->dtype;
    attach_node(y, std::move(node));
  }
  return y;
}

std::vector<TensorImplPtr> BatchNormBackward::apply(const TensorImplPtr& grad_out) {
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  const bool need_dx = needs_input_grad(0), need_dw = w && needs_input_grad(1), need_db = needs_input_grad(2);
  const DType cd = compute_dtype_;
  const int64_t N = int64_t(N_), C = int64_t(C_), S = int64_t(S_);
  const NormBackwardArgs a = norm_backward_args("BatchNormBackward", grad_out, x, w, cd, need_dx, need_dw, need_db, {C}, {C});
  if (a.none()) return {nullptr, nullptr, nullptr};
  const TensorImplPtr &xc = a.xc, &wc = a.wc, &go = a.go, &dx = a.dx, &dw = a.dw, &db = a.db;
  LUCID_DISPATCH_FLOAT(cd, "batch_norm_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::batch_norm_backward<T>(xc->data<T>(), wc ? wc->data<T>() : nullptr, go->data<T>(),
                                    saved_mean_->data<A>(), saved_rstd_->data<A>(), dx ? dx->data<T>() : nullptr,
                                    dw ? dw->data<A>() : nullptr, db ? db->data<A>() : nullptr, N, C, S, training_);
  });
  return {dx ? cast_raw(dx, x->dtype) : nullptr, dw ? cast_raw(dw, w->dtype) : nullptr,
          db ? cast_raw(reshape_raw(db, bias_shape_), bias_dtype_) : nullptr};
}

std::vector<TensorImplPtr> BatchNormBackward::apply_graph(const TensorImplPtr& grad_out) {
  const TensorImplPtr &x = saved_[0], &w = saved_[1];
  const DType cd = compute_dtype_;
  const int64_t N = int64_t(N_), C = int64_t(C_), S = int64_t(S_);
  const std::vector<int64_t> red{0, 2};
  auto x3 = reshape(to(x, cd, false), {N, C, S});
  auto g3 = reshape(to(grad_out, cd, false), {N, C, S});
  TensorImplPtr rstd, xhat;
  if (training_) {
    auto xc = sub(x3, mean(x3, red, true));
    rstd = rsqrt(add(mean(mul(xc, xc), red, true), scalar_tensor(eps_, cd)));
    xhat = mul(xc, rstd);
  } else {  // running statistics: constants
    rstd = reshape(cast_raw(saved_rstd_, cd), {1, C, 1});
    xhat = mul(sub(x3, reshape(cast_raw(saved_mean_, cd), {1, C, 1})), rstd);
  }
  auto gy = w ? mul(g3, reshape(to(w, cd, false), {1, C, 1})) : g3;
  TensorImplPtr dx, dw, db;
  if (needs_input_grad(0)) {
    auto inner = training_ ? sub(sub(gy, mean(gy, red, true)), mul(xhat, mean(mul(gy, xhat), red, true))) : gy;
    dx = to(reshape(mul(rstd, inner), x->shape), x->dtype, false);
  }
  if (w && needs_input_grad(1)) dw = to(reshape(sum(mul(g3, xhat), red, false), w->shape), w->dtype, false);
  if (needs_input_grad(2)) db = to(reshape(sum(g3, red, false), bias_shape_), bias_dtype_, false);
  return {dx, dw, db};
}

}  // namespace lucid
