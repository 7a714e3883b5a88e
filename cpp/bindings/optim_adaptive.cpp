// The fused steps of the adaptive optimizers (private _C functions; pylucid.optim holds the
// defaults, the state and the param-group bookkeeping). Lists may hold None where a param has
// no grad or a state is unused.
#include "bindings/common.h"
#include "ops/optim_adaptive.h"

namespace lucid::bindings {

namespace {
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
