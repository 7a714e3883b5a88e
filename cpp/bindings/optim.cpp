// The fused optimizer steps (SGD and Adam here, the adaptive family in the second block) and
// gradient clipping: private _C functions; pylucid.optim and pylucid.nn.utils hold the defaults,
// the state and the param-group bookkeeping. Lists may hold None where a param has no grad or a
// state is unused or not created yet.
#include "bindings/common.h"
#include "ops/optim.h"
#include "ops/optim_adaptive.h"

namespace lucid::bindings {

namespace {
// Lists arrive as std::optional entries (None -> nullopt); the ops take null for "absent".
using OptList = std::vector<OptTensor>;
TensorList unwrap(const OptList& l) {
  TensorList out;
  out.reserve(l.size());
  for (const auto& t : l) out.push_back(opt(t));
  return out;
}

int64_t work_of(const TensorList& ts) {
  int64_t n = 0;
  for (const auto& t : ts) n += t ? t->numel() : 0;
  return n;
}
}  // namespace

LUCID_BINDING(optim, 30) {
  m.def(
      "_sgd_",
      [](const TensorList& params, const OptList& grads, const OptList& bufs, double lr, double momentum,
         double dampening, double weight_decay, bool nesterov, bool maximize) {
        kernels::SgdStep s{lr, momentum, dampening, weight_decay, nesterov, maximize};
        auto g = unwrap(grads), b = unwrap(bufs);
        return maybe_nogil(work_of(params), [&] { return sgd_(params, g, b, s); });
      },
      py::arg("params"), py::arg("grads"), py::arg("momentum_buffers"), py::arg("lr"), py::arg("momentum"),
      py::arg("dampening"), py::arg("weight_decay"), py::arg("nesterov"), py::arg("maximize"));
  m.def(
      "_adam_",
      [](const TensorList& params, const OptList& grads, const OptList& exp_avgs, const OptList& exp_avg_sqs,
         const OptList& max_exp_avg_sqs, const OptList& steps, double lr, double beta1, double beta2, double eps,
         double weight_decay, bool amsgrad, bool maximize, bool decoupled_weight_decay) {
        AdamOptions o{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay};
        auto g = unwrap(grads), m = unwrap(exp_avgs), v = unwrap(exp_avg_sqs), vmax = unwrap(max_exp_avg_sqs),
             st = unwrap(steps);
        maybe_nogil(work_of(params), [&] { adam_(params, g, m, v, vmax, st, o); });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("max_exp_avg_sqs"),
      py::arg("steps"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("amsgrad"), py::arg("maximize"), py::arg("decoupled_weight_decay"));
  m.def(
      "_clip_grad_norm_",
      [](const TensorList& grads, double max_norm, double norm_type, bool error_if_nonfinite) {
        return maybe_nogil(work_of(grads), [&] { return clip_grad_norm_(grads, max_norm, norm_type, error_if_nonfinite); });
      },
      py::arg("grads"), py::arg("max_norm"), py::arg("norm_type"), py::arg("error_if_nonfinite"));
  m.def(
      "_total_norm",
      [](const TensorList& tensors, double norm_type) {
        return maybe_nogil(work_of(tensors), [&] { return total_norm(tensors, norm_type); });
      },
      py::arg("tensors"), py::arg("norm_type"));
}

LUCID_BINDING(optim_adaptive, 31) {
  m.def(
      "_rmsprop_",
      [](const TensorList& params, const OptList& grads, const OptList& square_avgs, const OptList& grad_avgs,
         const OptList& bufs, const OptList& steps, double lr, double alpha, double eps, double weight_decay,
         double momentum, bool centered, bool maximize) {
        kernels::RmspropStep s{lr, alpha, eps, weight_decay, momentum, centered, maximize};
        auto g = unwrap(grads), v = unwrap(square_avgs), c = unwrap(grad_avgs), b = unwrap(bufs), st = unwrap(steps);
        maybe_nogil(work_of(params), [&] { rmsprop_(params, g, v, c, b, st, s); });
      },
      py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("grad_avgs"), py::arg("momentum_buffers"),
      py::arg("steps"), py::arg("lr"), py::arg("alpha"), py::arg("eps"), py::arg("weight_decay"), py::arg("momentum"),
      py::arg("centered"), py::arg("maximize"));
  m.def(
      "_adagrad_",
      [](const TensorList& params, const OptList& grads, const OptList& sums, const OptList& steps, double lr,
         double lr_decay, double weight_decay, double eps, bool maximize) {
        auto g = unwrap(grads), s = unwrap(sums), st = unwrap(steps);
        maybe_nogil(work_of(params), [&] { adagrad_(params, g, s, st, lr, lr_decay, weight_decay, eps, maximize); });
      },
      py::arg("params"), py::arg("grads"), py::arg("state_sums"), py::arg("steps"), py::arg("lr"), py::arg("lr_decay"),
      py::arg("weight_decay"), py::arg("eps"), py::arg("maximize"));
  m.def(
      "_adadelta_",
      [](const TensorList& params, const OptList& grads, const OptList& square_avgs, const OptList& acc_deltas,
         const OptList& steps, double lr, double rho, double eps, double weight_decay, bool maximize) {
        kernels::AdadeltaStep s{lr, rho, eps, weight_decay, maximize};
        auto g = unwrap(grads), v = unwrap(square_avgs), u = unwrap(acc_deltas), st = unwrap(steps);
        maybe_nogil(work_of(params), [&] { adadelta_(params, g, v, u, st, s); });
      },
      py::arg("params"), py::arg("grads"), py::arg("square_avgs"), py::arg("acc_deltas"), py::arg("steps"),
      py::arg("lr"), py::arg("rho"), py::arg("eps"), py::arg("weight_decay"), py::arg("maximize"));
  m.def(
      "_adamax_",
      [](const TensorList& params, const OptList& grads, const OptList& exp_avgs, const OptList& exp_infs,
         const OptList& steps, double lr, double beta1, double beta2, double eps, double weight_decay, bool maximize) {
        auto g = unwrap(grads), m1 = unwrap(exp_avgs), u = unwrap(exp_infs), st = unwrap(steps);
        maybe_nogil(work_of(params),
                    [&] { adamax_(params, g, m1, u, st, lr, beta1, beta2, eps, weight_decay, maximize); });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_infs"), py::arg("steps"), py::arg("lr"),
      py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"), py::arg("maximize"));
  m.def(
      "_nadam_",
      [](const TensorList& params, const OptList& grads, const OptList& exp_avgs, const OptList& exp_avg_sqs,
         const OptList& mu_products, const OptList& steps, double lr, double beta1, double beta2, double eps,
         double weight_decay, double momentum_decay, bool decoupled_weight_decay, bool maximize) {
        auto g = unwrap(grads), m1 = unwrap(exp_avgs), v = unwrap(exp_avg_sqs), mp = unwrap(mu_products),
             st = unwrap(steps);
        maybe_nogil(work_of(params), [&] {
          nadam_(params, g, m1, v, mp, st, lr, beta1, beta2, eps, weight_decay, momentum_decay, decoupled_weight_decay,
                 maximize);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("mu_products"),
      py::arg("steps"), py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("momentum_decay"), py::arg("decoupled_weight_decay"), py::arg("maximize"));
  m.def(
      "_radam_",
      [](const TensorList& params, const OptList& grads, const OptList& exp_avgs, const OptList& exp_avg_sqs,
         const OptList& steps, double lr, double beta1, double beta2, double eps, double weight_decay,
         bool decoupled_weight_decay, bool maximize) {
        auto g = unwrap(grads), m1 = unwrap(exp_avgs), v = unwrap(exp_avg_sqs), st = unwrap(steps);
        maybe_nogil(work_of(params), [&] {
          radam_(params, g, m1, v, st, lr, beta1, beta2, eps, weight_decay, decoupled_weight_decay, maximize);
        });
      },
      py::arg("params"), py::arg("grads"), py::arg("exp_avgs"), py::arg("exp_avg_sqs"), py::arg("steps"),
      py::arg("lr"), py::arg("beta1"), py::arg("beta2"), py::arg("eps"), py::arg("weight_decay"),
      py::arg("decoupled_weight_decay"), py::arg("maximize"));
}

}  // namespace lucid::bindings
