#include "ops/optim.h"

#include <cmath>

#include "ops/factory.h"

namespace lucid {

namespace {

void check_lists(const char* op, size_t n, std::initializer_list<std::pair<const char*, size_t>> lists) {
  for (auto& [name, size] : lists)
    LUCID_CHECK_SHAPE(size == n, op, ": got ", n, " params but ", size, " ", name,
                      " (expected one per param)");
}

void check_param(const char* op, size_t i, const TensorImplPtr& p) {
  LUCID_CHECK(p, op, ": param ", i, " is None");
  LUCID_CHECK_DTYPE(is_floating(p->dtype), op, ": param ", i, " has dtype ", dtype_name(p->dtype),
                    ", expected a floating dtype");
}

void check_grad(const char* op, size_t i, const TensorImplPtr& p, const TensorImplPtr& g) {
  LUCID_CHECK_SHAPE(g->shape == p->shape, op, ": grad of param ", i, " has shape ", shape_str(g->shape),
                    ", expected the param's shape ", shape_str(p->shape));
}

// The grad as a contiguous tensor of the param's dtype (itself in the common case).
TensorImplPtr grad_for(const TensorImplPtr& p, const TensorImplPtr& g) {
  return contiguous_raw(cast_raw(g, p->dtype));
}

void check_state(const char* op, const char* what, size_t i, const TensorImplPtr& p, const TensorImplPtr& s) {
  LUCID_CHECK(s, op, ": ", what, " of param ", i, " is missing (None)");
  LUCID_CHECK_SHAPE(s->shape == p->shape, op, ": ", what, " of param ", i, " has shape ", shape_str(s->shape),
                    ", expected the param's shape ", shape_str(p->shape));
  LUCID_CHECK_DTYPE(s->dtype == p->dtype, op, ": ", what, " of param ", i, " has dtype ", dtype_name(s->dtype),
                    ", expected the param's dtype ", dtype_name(p->dtype));
}

}  // namespace

TensorList sgd_(const TensorList& params, const TensorList& grads, TensorList bufs, const kernels::SgdStep& o) {
  const char* op = "sgd";
  check_lists(op, params.size(), {{"grads", grads.size()}, {"momentum_buffers", bufs.size()}});
  const bool use_mom = o.momentum != 0;
  // Validate everything before writing anything, so a bad entry leaves the group untouched.
  for (size_t i = 0; i < params.size(); ++i) {
    check_param(op, i, params[i]);
    if (!grads[i]) continue;
    check_grad(op, i, params[i], grads[i]);
    if (use_mom && bufs[i]) check_state(op, "momentum_buffer", i, params[i], bufs[i]);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!grads[i]) continue;
    const auto& p = params[i];
    auto g = grad_for(p, grads[i]);
    bool init = use_mom && !bufs[i];
    if (init) bufs[i] = full(p->shape, 0.0, p->dtype);  // the kernel reads before it selects
    UpdateTarget tp(p), tb(use_mom ? bufs[i] : nullptr);
    kernels::sgd_update(p->dtype, p->numel(), tp.ptr(), g->raw(), tb.ptr(), init, o);
    tp.done();
    tb.done();
  }
  return bufs;
}

void adam_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
           const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& steps,
           const AdamOptions& o) {
  const char* op = o.decoupled_weight_decay ? "adamw" : "adam";
  size_t n = params.size();
  check_lists(op, n, {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()},
                      {"exp_avg_sqs", exp_avg_sqs.size()}, {"steps", steps.size()}});
  if (o.amsgrad) check_lists(op, n, {{"max_exp_avg_sqs", max_exp_avg_sqs.size()}});
  for (size_t i = 0; i < n; ++i) {
    check_param(op, i, params[i]);
    if (!grads[i]) continue;
    check_grad(op, i, params[i], grads[i]);
    check_state(op, "exp_avg", i, params[i], exp_avgs[i]);
    check_state(op, "exp_avg_sq", i, params[i], exp_avg_sqs[i]);
    if (o.amsgrad) check_state(op, "max_exp_avg_sq", i, params[i], max_exp_avg_sqs[i]);
    LUCID_CHECK(steps[i] && steps[i]->numel() == 1, op, ": step of param ", i,
                " must be a one-element tensor");
  }
  for (size_t i = 0; i < n; ++i) {
    if (!grads[i]) continue;
    const auto& p = params[i];
    auto g = grad_for(p, grads[i]);
    double step = item_as_double(steps[i], op) + 1.0;
    fill_(steps[i], step);
    // Python floats, as PyTorch computes them: beta ** step, then ** 0.5.
    double bc1 = 1.0 - std::pow(o.beta1, step), bc2 = 1.0 - std::pow(o.beta2, step);
    kernels::AdamStep s{o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, o.lr / bc1, std::pow(bc2, 0.5),
                        o.amsgrad, o.maximize, o.decoupled_weight_decay};
    UpdateTarget tp(p), tm(exp_avgs[i]), tv(exp_avg_sqs[i]), tmax(o.amsgrad ? max_exp_avg_sqs[i] : nullptr);
    kernels::adam_update(p->dtype, p->numel(), tp.ptr(), g->raw(), tm.ptr(), tv.ptr(), tmax.ptr(), s);
    tp.done();
    tm.done();
    tv.done();
    tmax.done();
  }
}

namespace {
double norm_sum(const TensorList& ts, double p, const char* op) {
  LUCID_CHECK(p > 0, op, ": norm_type must be positive or inf, got ", p);
  double acc = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& t = ts[i];
    LUCID_CHECK(t, op, ": tensor ", i, " is None");
    LUCID_CHECK_DTYPE(is_floating(t->dtype), op, ": tensor ", i, " has dtype ", dtype_name(t->dtype),
                      ", expected a floating dtype");
    auto c = contiguous_raw(t);
    double part = kernels::norm_partial(c->dtype, c->numel(), c->raw(), p);
    if (std::isinf(p)) {
      acc = (part != part || acc != acc) ? part + acc : std::max(acc, part);
    } else {
      acc += part;
    }
  }
  return std::isinf(p) ? acc : (p == 2 ? std::sqrt(acc) : std::pow(acc, 1.0 / p));
}
}  // namespace

TensorImplPtr total_norm(const TensorList& tensors, double norm_type) {
  double v = norm_sum(tensors, norm_type, "get_total_norm");
  return scalar_tensor(v, tensors.empty() ? kDefaultFloat : tensors[0]->dtype);
}

TensorImplPtr clip_grad_norm_(const TensorList& grads, double max_norm, double norm_type,
                              bool error_if_nonfinite) {
  const char* op = "clip_grad_norm_";
  double total = norm_sum(grads, norm_type, op);
  auto out = scalar_tensor(total, grads.empty() ? kDefaultFloat : grads[0]->dtype);
  total = item_as_double(out, op);  // the value the caller sees, rounded to the grads' dtype
  LUCID_CHECK(!error_if_nonfinite || std::isfinite(total), op, ": the total norm of order ", norm_type,
              " for gradients from `parameters` is non-finite, so it cannot be clipped. To disable "
              "this error and scale the gradients by the non-finite norm anyway, set "
              "`error_if_nonfinite=False`");
  double coef = max_norm / (total + 1e-6);
  // coef >= 1 would multiply by exactly 1 (PyTorch clamps to 1.0): skip the pass. A NaN total
  // fails this test and scales by NaN, as in PyTorch.
  if (coef >= 1.0) return out;
  for (const auto& g : grads) {
    UpdateTarget tg(g);
    kernels::scale_inplace(g->dtype, g->numel(), tg.ptr(), coef);
    tg.done();
  }
  return out;
}

}  // namespace lucid
