// The parametrised activations of ops/activation.h as `_C._<name>` functions (wrapped with
// PyTorch's signatures and defaults in pylucid/nn/_functional_act_ext.py), plus the in-place
// forms through one `_C._activation_`. Large calls run with the GIL released.
#include "bindings/common.h"
#include "ops/activation.h"

namespace lucid::bindings {

namespace {
using T = const TensorImplPtr&;
template <class F>
auto run(T x, F f) {
  return maybe_nogil(x->numel(), [&] {
    KeepLayout keep;  // NOTE [elementwise output layout]
    return f();
  });
}
}  // namespace

LUCID_BINDING(nn_activation, 22) {
  m.def("_leaky_relu", [](T x, double s) { return run(x, [&] { return leaky_relu(x, s); }); }, py::arg("input"),
        py::arg("negative_slope"));
  m.def("_elu", [](T x, double a) { return run(x, [&] { return elu(x, a); }); }, py::arg("input"), py::arg("alpha"));
  m.def("_selu", [](T x) { return run(x, [&] { return selu(x); }); }, py::arg("input"));
  m.def("_celu", [](T x, double a) { return run(x, [&] { return celu(x, a); }); }, py::arg("input"), py::arg("alpha"));
  m.def("_softplus", [](T x, double b, double t) { return run(x, [&] { return softplus(x, b, t); }); },
        py::arg("input"), py::arg("beta"), py::arg("threshold"));
  m.def("_logsigmoid", [](T x) { return run(x, [&] { return logsigmoid(x); }); }, py::arg("input"));
  m.def("_hardtanh", [](T x, double lo, double hi) { return run(x, [&] { return hardtanh(x, lo, hi); }); },
        py::arg("input"), py::arg("min_val"), py::arg("max_val"));
  m.def("_mish", [](T x) { return run(x, [&] { return mish(x); }); }, py::arg("input"));
  m.def("_hardsigmoid", [](T x) { return run(x, [&] { return hardsigmoid(x); }); }, py::arg("input"));
  m.def("_hardswish", [](T x) { return run(x, [&] { return hardswish(x); }); }, py::arg("input"));
  m.def("_softsign", [](T x) { return run(x, [&] { return softsign(x); }); }, py::arg("input"));
  m.def("_tanhshrink", [](T x) { return run(x, [&] { return tanhshrink(x); }); }, py::arg("input"));
  m.def("_threshold", [](T x, double t, double v) { return run(x, [&] { return threshold(x, t, v); }); },
        py::arg("input"), py::arg("threshold"), py::arg("value"));
  m.def("_hardshrink", [](T x, double l) { return run(x, [&] { return hardshrink(x, l); }); }, py::arg("input"),
        py::arg("lambd"));
  m.def("_softshrink", [](T x, double l) { return run(x, [&] { return softshrink(x, l); }); }, py::arg("input"),
        py::arg("lambd"));
  m.def("_activation_",
        [](T x, const std::string& op, double a, double b) { return run(x, [&] { return activation_(x, op, a, b); }); },
        py::arg("input"), py::arg("op"), py::arg("a"), py::arg("b"));
}

}  // namespace lucid::bindings
