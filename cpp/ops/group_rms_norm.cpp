#include "ops/group_rms_norm.h"

#include "autograd/engine.h"
#include "core/autocast.h"
#include "kernels/cpu/norm.h"
#include "kernels/cpu/half_map.h"
#include "kernels/cpu/norm_double.h"
#include "ops/binary.h"
#include "ops/norm_node.h"
#include "ops/rms_norm.h"

namespace lucid {

const OpSchema& GroupRMSNormBackward::schema_v1 = register_schema(
    {.name = "group_rms_norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

const OpSchema& GroupRMSNormBackwardBackward::schema_v1 = register_schema({.name = "group_rms_norm_backward",
                                                                           .version = 1,
                                                                           .amp_policy = AmpPolicy::ForceFP32,
                                                                           .produces_grad = true});

std::pair<TensorImplPtr, TensorImplPtr> group_rms_norm_groups(const TensorImplPtr& cg) {
  const char* op = "group_rms_norm";
  LUCID_CHECK_SHAPE(cg != nullptr, op, ": channel_groups is None; expected a 1-D list of group ids");
  LUCID_CHECK_SHAPE(cg->ndim() == 1, op, ": channel_groups must be 1-D (one group id per channel), got shape ",
                    shape_str(cg->shape));
  LUCID_CHECK_SHAPE(cg->numel() > 0, op, ": channel_groups is empty; expected one group id per channel");
  LUCID_CHECK_SHAPE(cg->dtype == DType::Int64, op, ": channel_groups must hold integer group ids, got dtype ",
                    dtype_name(cg->dtype));
  const int64_t C = cg->numel();
  auto ids = empty({C}, DType::Int64);  // a copy: later edits of the caller's ids change nothing
  copy_into(ids, cg);
  const int64_t* id = ids->data<int64_t>();
  int64_t G = 0;
  for (int64_t c = 0; c < C; ++c) {
    LUCID_CHECK_SHAPE(id[c] >= 0, op, ": group ids must be >= 0, got ", id[c], " for channel ", c);
    // Every id in 0..max must own a channel, so max < C; checked here, before allocating counts.
    LUCID_CHECK_SHAPE(id[c] < C, op, ": group id ", id[c], " (channel ", c, ") leaves some of the groups 0..",
                      id[c], " empty: there are only ", C, " channels; ids must cover 0..G-1");
    G = std::max(G, id[c] + 1);
  }
  auto counts = empty({G}, DType::Int64);
  int64_t* n = counts->data<int64_t>();
  std::fill(n, n + G, int64_t(0));
  for (int64_t c = 0; c < C; ++c) ++n[id[c]];
  for (int64_t g = 0; g < G; ++g)
    LUCID_CHECK_SHAPE(n[g] > 0, op, ": group ", g, " has no channels; ids must cover 0..G-1 (G = max id + 1 = ",
                      G, ")");
  return {ids, counts};
}

TensorImplPtr group_rms_norm(const TensorImplPtr& x, const TensorImplPtr& channel_groups, const TensorImplPtr& gamma,
                             double eps) {
  const char* op = "group_rms_norm";
  check_norm_inputs(op, x, {{"weight", &gamma}});
  check_eps(op, eps);
  LUCID_CHECK_SHAPE(x->ndim() >= 2, op, ": expected input of shape (B, C) or (B, C, *spatial), got ",
                    shape_str(x->shape));
  auto [ids, counts] = group_rms_norm_groups(channel_groups);
  const int64_t B = x->shape[0], C = x->shape[1], G = counts->numel();
  int64_t S = 1;
  for (int64_t d = 2; d < x->ndim(); ++d) S *= x->shape[d];
  LUCID_CHECK_SHAPE(ids->numel() == C, op, ": channel_groups has ", ids->numel(), " entries but input ",
                    shape_str(x->shape), " has ", C, " channels");
  if (gamma)
    LUCID_CHECK_SHAPE(gamma->shape == Shape{G}, op, ": weight shape ", shape_str(gamma->shape),
                      " does not match the number of groups [", G, "]");

  const DType in = gamma ? promote_types(x->dtype, gamma->dtype) : x->dtype;
  const DType cd = compute_dtype(GroupRMSNormBackward::schema_v1, in);
  auto xc = contiguous_raw(cast_raw(x, cd));  // (B, C, S) in memory
  auto gc = gamma ? contiguous_raw(cast_raw(gamma, cd)) : nullptr;
  auto y = empty(x->shape, cd);
  auto rstd = empty({B, G}, acc_dtype(cd));
  LUCID_DISPATCH_FLOAT(cd, op, [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::group_rms_norm_forward<T>(xc->data<T>(), ids->data<int64_t>(), counts->data<int64_t>(),
                                       gc ? gc->data<T>() : nullptr, y->data<T>(), rstd->data<A>(), B, C, S, G,
                                       A(eps));
  });
  if (any_requires_grad({&x, &gamma})) {
    auto node = std::make_shared<GroupRMSNormBackward>();
    node->set_inputs({x, gamma});
    node->save(0, x);
    node->save(1, gamma);
    node->saved_rstd_ = rstd;
    node->groups_ = ids;
    node->counts_ = counts;
    node->B_ = size_t(B), node->C_ = size_t(C), node->S_ = size_t(S), node->G_ = size_t(G);
    node->eps_ = eps;
    node->compute_dtype_ = cd;
    attach_node(y, std::move(node));
  }
  return y;
}

std::vector<TensorImplPtr> GroupRMSNormBackward::apply(const TensorImplPtr& grad_out) {
  const TensorImplPtr& x = saved_[0];
  const TensorImplPtr& gamma = saved_[1];
  LUCID_CHECK_DTYPE(grad_out != nullptr, "GroupRMSNormBackward: grad_out is None");
  LUCID_CHECK_SHAPE(grad_out->shape == x->shape, "GroupRMSNormBackward: grad_out shape ",
                    shape_str(grad_out->shape), " does not match the output shape ", shape_str(x->shape));
  LUCID_CHECK_DTYPE(is_floating(grad_out->dtype), "GroupRMSNormBackward: expected a floating grad_out, got ",
                    dtype_name(grad_out->dtype));
  const bool need_dx = needs_input_grad(0);
  const bool need_dg = gamma && needs_input_grad(1);
  if (!need_dx && !need_dg) return {nullptr, nullptr};
  const DType cd = compute_dtype_, ad = acc_dtype(cd);
  const int64_t B = int64_t(B_), C = int64_t(C_), S = int64_t(S_), G = int64_t(G_);
  auto xc = contiguous_raw(cast_raw(x, cd));
  auto gc = gamma ? contiguous_raw(cast_raw(gamma, cd)) : nullptr;
  auto go = contiguous_raw(cast_raw(grad_out, cd));
  auto dx = need_dx ? empty(x->shape, cd) : nullptr;
  auto dg = need_dg ? empty({G}, ad) : nullptr;
  auto scratch = empty({kernels::norm_chunks(B, C * S) * 2 * G}, ad);
  LUCID_DISPATCH_FLOAT(cd, "group_rms_norm_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::group_rms_norm_backward<T>(xc->data<T>(), groups_->data<int64_t>(), counts_->data<int64_t>(),
                                        gc ? gc->data<T>() : nullptr, go->data<T>(), saved_rstd_->data<A>(),
                                        dx ? dx->data<T>() : nullptr, dg ? dg->data<A>() : nullptr,
                                        scratch->data<A>(), B, C, S, G);
  });
  return {dx ? cast_raw(dx, x->dtype) : nullptr, dg ? cast_raw(dg, gamma->dtype) : nullptr};
}

std::vector<TensorImplPtr> GroupRMSNormBackward::apply_graph(const TensorImplPtr& grad_out) {
  std::vector<TensorImplPtr> res;
  {
    NoGradGuard no_grad;
    res = apply(grad_out);
  }
  const TensorImplPtr &x = saved_[0], &gamma = saved_[1];
  if (!any_requires_grad({&grad_out, &x, &gamma})) return res;
  std::shared_ptr<GroupRMSNormBackwardBackward> dx_node;
  for (size_t out = 0; out < 2; ++out) {
    if (!res[out]) continue;
    auto n = std::make_shared<GroupRMSNormBackwardBackward>();
    n->set_inputs({grad_out, x, gamma});
    n->save(0, grad_out);
    n->save(1, x);
    n->save(2, gamma);
    n->saved_rstd_ = saved_rstd_;
    n->groups_ = groups_, n->counts_ = counts_;
    n->B_ = B_, n->C_ = C_, n->S_ = S_, n->G_ = G_;
    n->compute_dtype_ = compute_dtype_;
    n->wrt_gamma_ = out == 1;
    if (out == 0) dx_node = n;
    else n->partner_ = dx_node;
    attach_node(res[out], std::move(n));
  }
  return res;
}

std::vector<TensorImplPtr> GroupRMSNormBackwardBackward::apply(const TensorImplPtr& up) {
  const TensorImplPtr &g = saved_[0], &x = saved_[1], &gamma = saved_[2];
  if (wrt_gamma_ && up) {  // see NOTE [one pass for both outputs] in ops/rms_norm.h
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
  const bool need_dgamma = gamma && u && needs_input_grad(2);
  if ((!need_dg && !need_dx && !need_dgamma) || (!u && !v)) return {nullptr, nullptr, nullptr};
  const DoubleBackwardDtypes dt(compute_dtype_);
  const DType cd = dt.kd, ad = acc_dtype(cd);
  const int64_t B = int64_t(B_), C = int64_t(C_), S = int64_t(S_), G = int64_t(G_);
  auto xc = dt.in(x), gc = dt.in(gamma), go = dt.in(g), uc = dt.in(u), vc = dt.in(v);
  auto d_g = need_dg ? empty(x->shape, cd) : nullptr;
  auto d_x = need_dx ? empty(x->shape, cd) : nullptr;
  auto d_gamma = need_dgamma ? empty({G}, ad) : nullptr;
  auto scratch = empty({kernels::norm_chunks(B, C * S) * 4 * G}, ad);
  LUCID_DISPATCH_FLOAT_NO_HALF(cd, "group_rms_norm_double_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    kernels::group_rms_norm_double_backward<T>(
        xc->data<T>(), groups_->data<int64_t>(), counts_->data<int64_t>(), gc ? gc->data<T>() : nullptr,
        go->data<T>(), saved_rstd_->data<A>(), uc ? uc->data<T>() : nullptr, vc ? vc->data<T>() : nullptr,
        d_g ? d_g->data<T>() : nullptr, d_x ? d_x->data<T>() : nullptr, d_gamma ? d_gamma->data<A>() : nullptr,
        scratch->data<A>(), B, C, S, G);
  });
  return {dt.out(d_g, g->dtype), dt.out(d_x, x->dtype), d_gamma ? cast_raw(d_gamma, gamma->dtype) : nullptr};
}

}  // namespace lucid
