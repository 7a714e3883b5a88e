// The fused optimizer steps and gradient clipping (private _C functions; pylucid.optim and
// pylucid.nn.utils hold the defaults and the param-group bookkeeping). Lists may hold None
// where a param has no grad or no state yet.
#include "bindings/common.h"
#include "ops/optim.h"

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

}  // namespace lucid::bindings
