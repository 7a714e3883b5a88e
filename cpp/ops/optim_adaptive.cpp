#include "ops/optim_adaptive.h"

#include <cmath>

#include "ops/factory.h"
#include "ops/optim.h"

namespace lucid {

namespace {

// One state list of an optimizer and whether it is used under the current options.
struct StateList {
  const char* name;
  const TensorList* list;
  bool used;
};

// Validates the lists of one group (sizes, params, grads, the used states, steps) before any
// write, so a bad entry leaves the whole group untouched.
void validate(const char* op, const TensorList& params, const TensorList& grads, const TensorList& steps,
              std::initializer_list<StateList> states) {
  const size_t n = params.size();
  auto check_size = [&](const char* name, size_t size) {
    LUCID_CHECK_SHAPE(size == n, op, ": got ", n, " params but ", size, " ", name, " (expected one per param)");
  };
  check_size("grads", grads.size());
  check_size("steps", steps.size());
  for (const auto& s : states)
    if (s.used) check_size(s.name, s.list->size());
  for (size_t i = 0; i < n; ++i) {
    const auto& p = params[i];
    LUCID_CHECK(p, op, ": param ", i, " is None");
    LUCID_CHECK_DTYPE(is_floating(p->dtype), op, ": param ", i, " has dtype ", dtype_name(p->dtype),
                      ", expected a floating dtype");
    if (!grads[i]) continue;
    LUCID_CHECK_SHAPE(grads[i]->shape == p->shape, op, ": grad of param ", i, " has shape ",
                      shape_str(grads[i]->shape), ", expected the param's shape ", shape_str(p->shape));
    for (const auto& st : states) {
      if (!st.used) continue;
      const auto& s = (*st.list)[i];
      LUCID_CHECK(s, op, ": ", st.name, " of param ", i, " is missing (None)");
      LUCID_CHECK_SHAPE(s->shape == p->shape, op, ": ", st.name, " of param ", i, " has shape ", shape_str(s->shape),
                        ", expected the param's shape ", shape_str(p->shape));
      LUCID_CHECK_DTYPE(s->dtype == p->dtype, op, ": ", st.name, " of param ", i, " has dtype ",
                        dtype_name(s->dtype), ", expected the param's dtype ", dtype_name(p->dtype));
    }
    LUCID_CHECK(steps[i] && steps[i]->numel() == 1, op, ": step of param ", i, " must be a one-element tensor");
  }
}

// Increments the step tensor; returns its new value (as PyTorch reads it with .item()).
double next_step(const TensorImplPtr& step, const char* op) {
  double s = item_as_double(step, op) + 1.0;
  fill_(step, s);
  return item_as_double(step, op);
}

// Runs kernel(param, grad, state ptrs...) for every param that has a grad, with write-back.
template <class K>
void for_each_param(const TensorList& params, const TensorList& grads, std::initializer_list<const TensorList*> states,
                    K kernel) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (!grads[i]) continue;
    const auto& p = params[i];
    auto g = contiguous_raw(cast_raw(grads[i], p->dtype));
    std::vector<UpdateTarget> targets;
    targets.reserve(states.size() + 1);
    targets.emplace_back(p);
    for (const auto* s : states) targets.emplace_back(s ? (*s)[i] : nullptr);
    kernel(i, targets, g->raw());
    for (auto& t : targets) t.done();
  }
}

}  // namespace

void rmsprop_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
              const TensorList& grad_avgs, const TensorList& momentum_buffers, const TensorList& steps,
              const kernels::RmspropStep& o) {
  const char* op = "rmsprop";
  const bool mom = o.momentum > 0;
  validate(op, params, grads, steps,
           {{"square_avgs", &square_avgs, true}, {"grad_avgs", &grad_avgs, o.centered},
            {"momentum_buffers", &momentum_buffers, mom}});
  for_each_param(params, grads, {&square_avgs, o.centered ? &grad_avgs : nullptr, mom ? &momentum_buffers : nullptr},
                 [&](size_t i, std::vector<UpdateTarget>& t, const void* g) {
                   next_step(steps[i], op);
                   kernels::rmsprop_update(params[i]->dtype, params[i]->numel(), t[0].ptr(), g, t[1].ptr(),
                                           t[2].ptr(), t[3].ptr(), o);
                 });
}

void adagrad_(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
              const TensorList& steps, double lr, double lr_decay, double weight_decay, double eps, bool maximize) {
  const char* op = "adagrad";
  validate(op, params, grads, steps, {{"state_sums", &state_sums, true}});
  for_each_param(params, grads, {&state_sums}, [&](size_t i, std::vector<UpdateTarget>& t, const void* g) {
    double step = next_step(steps[i], op);
    kernels::AdagradStep s{lr / (1 + (step - 1) * lr_decay), eps, weight_decay, maximize};
    kernels::adagrad_update(params[i]->dtype, params[i]->numel(), t[0].ptr(), g, t[1].ptr(), s);
  });
}

void adadelta_(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
               const TensorList& acc_deltas, const TensorList& steps, const kernels::AdadeltaStep& o) {
  const char* op = "adadelta";
  validate(op, params, grads, steps, {{"square_avgs", &square_avgs, true}, {"acc_deltas", &acc_deltas, true}});
  for_each_param(params, grads, {&square_avgs, &acc_deltas}, [&](size_t i, std::vector<UpdateTarget>& t, const void* g) {
    next_step(steps[i], op);
    kernels::adadelta_update(params[i]->dtype, params[i]->numel(), t[0].ptr(), g, t[1].ptr(), t[2].ptr(), o);
  });
}

void adamax_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
             const TensorList& exp_infs, const TensorList& steps, double lr, double beta1, double beta2, double eps,
             double weight_decay, bool maximize) {
  const char* op = "adamax";
  validate(op, params, grads, steps, {{"exp_avgs", &exp_avgs, true}, {"exp_infs", &exp_infs, true}});
  for_each_param(params, grads, {&exp_avgs, &exp_infs}, [&](size_t i, std::vector<UpdateTarget>& t, const void* g) {
    double step = next_step(steps[i], op);
    kernels::AdamaxStep s{beta1, beta2, eps, weight_decay, lr / (1 - std::pow(beta1, step)), maximize};
    kernels::adamax_update(params[i]->dtype, params[i]->numel(), t[0].ptr(), g, t[1].ptr(), t[2].ptr(), s);
  });
}

void nadam_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
            const TensorList& exp_avg_sqs, const TensorList& mu_products, const TensorList& steps, double lr,
            double beta1, double beta2, double eps, double weight_decay, double momentum_decay,
            bool decoupled_weight_decay, bool maximize) {
  const char* op = "nadam";
  validate(op, params, grads, steps, {{"exp_avgs", &exp_avgs, true}, {"exp_avg_sqs", &exp_avg_sqs, true}});
  LUCID_CHECK_SHAPE(mu_products.size() == params.size(), op, ": got ", params.size(), " params but ",
                    mu_products.size(), " mu_products (expected one per param)");
  for (size_t i = 0; i < params.size(); ++i)
    LUCID_CHECK(!grads[i] || (mu_products[i] && mu_products[i]->numel() == 1 && is_floating(mu_products[i]->dtype)),
                op, ": mu_product of param ", i, " must be a one-element floating tensor");
  for_each_param(params, grads, {&exp_avgs, &exp_avg_sqs}, [&](size_t i, std::vector<UpdateTarget>& t, const void* g) {
    double step = next_step(steps[i], op);
    double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, step * momentum_decay));
    double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * momentum_decay));
    // NOTE: PyTorch multiplies the product in its tensor's dtype (float32 by default): the
    // product and the coefficients below follow that rounding.
    const auto& mp = mu_products[i];
    double prod = 0;
    LUCID_DISPATCH_FLOAT(mp->dtype, op, [&] {
      using A = acc_t<scalar_t>;
      prod = double(scalar_t(A(scalar_t(item_as_double(mp, op))) * A(mu)));
    });
    fill_(mp, prod);
    mp->bump_version();
    double prod_next = prod * mu_next;
    kernels::NadamStep s{lr, beta1, beta2, eps, weight_decay, 1 - std::pow(beta2, step),
                         -lr * (1.0 - mu) / (1.0 - prod), (-lr * mu_next) / (1.0 - prod_next),
                         decoupled_weight_decay, maximize};
    kernels::nadam_update(params[i]->dtype, params[i]->numel(), t[0].ptr(), g, t[1].ptr(), t[2].ptr(), s);
  });
}

void radam_(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
            const TensorList& exp_avg_sqs, const TensorList& steps, double lr, double beta1, double beta2, double eps,
            double weight_decay, bool decoupled_weight_decay, bool maximize) {
  const char* op = "radam";
  validate(op, params, grads, steps, {{"exp_avgs", &exp_avgs, true}, {"exp_avg_sqs", &exp_avg_sqs, true}});
  for_each_param(params, grads, {&exp_avgs, &exp_avg_sqs}, [&](size_t i, std::vector<UpdateTarget>& t, const void* g) {
    double step = next_step(steps[i], op);
    double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
    double rho_inf = 2 / (1 - beta2) - 1;
    double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bc2;
    double rect = rho_t > 5.0
                      ? std::pow((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.5)
                      : 0.0;
    kernels::RadamStep s{lr, beta1, beta2, eps, weight_decay, bc1, bc2, rect, decoupled_weight_decay, maximize};
    kernels::radam_update(params[i]->dtype, params[i]->numel(), t[0].ptr(), g, t[1].ptr(), t[2].ptr(), s);
  });
}

}  // namespace lucid
