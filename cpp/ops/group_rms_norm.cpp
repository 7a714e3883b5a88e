#include "ops/group_rms_norm.h"

#include "core/autocast.h"
#include "kernels/cpu/norm.h"
#include "ops/binary.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/rms_norm.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

const OpSchema& GroupRMSNormBackward::schema_v1 = register_schema(
    {.name = "group_rms_norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

namespace {
DType acc_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }
}  // namespace

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
  const TensorImplPtr &x = saved_[0], &gamma = saved_[1];
  const DType cd = compute_dtype_;
  const int64_t B = int64_t(B_), C = int64_t(C_), G = int64_t(G_);
  auto onehot = empty({C, G}, cd);  // onehot[c, g] = [group of c == g], a constant
  auto cnt = cast_raw(counts_, cd);
  LUCID_DISPATCH_FLOAT(cd, "group_rms_norm_backward", [&] {
    using T = scalar_t;
    T* o = onehot->data<T>();
    const int64_t* ids = groups_->data<int64_t>();
    for (int64_t c = 0; c < C; ++c)
      for (int64_t g = 0; g < G; ++g) o[c * G + g] = T(ids[c] == g ? 1.0f : 0.0f);
  });
  auto onehot_t = transpose(onehot, 0, 1);
  const int64_t S = int64_t(S_);
  auto x3 = reshape(to(x, cd, false), {B, C, S});
  auto g3 = reshape(to(grad_out, cd, false), {B, C, S});
  auto m = mul(cnt, scalar_tensor(double(S), cd));  // values per group
  auto rstd = rsqrt(add(div(matmul(sum(mul(x3, x3), {2}, false), onehot), m), scalar_tensor(eps_, cd)));  // (B, G)
  auto rc = unsqueeze(matmul(rstd, onehot_t), 2);                                                         // (B, C, 1)
  auto gy = gamma ? mul(g3, reshape(matmul(onehot, reshape(to(gamma, cd, false), {G, 1})), {C, 1})) : g3;
  TensorImplPtr dx, dg;
  if (needs_input_grad(0)) {
    auto coef = div(mul(mul(rstd, mul(rstd, rstd)), matmul(sum(mul(gy, x3), {2}, false), onehot)), m);  // (B, G)
    dx = to(reshape(sub(mul(rc, gy), mul(x3, unsqueeze(matmul(coef, onehot_t), 2))), x->shape), x->dtype, false);
  }
  if (gamma && needs_input_grad(1))
    dg = to(reshape(matmul(sum(mul(mul(g3, x3), rc), {0, 2}, false), onehot), gamma->shape), gamma->dtype, false);
  return {dx, dg};
}

}  // namespace lucid
