// Elementwise math, reductions and matrix products: module functions (re-exported by
// pylucid/_math.py) and the matching Tensor methods. Defaults live here, in the signatures.
#include "bindings/common.h"
#include "ops/binary.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid::bindings {

namespace {

using T = const TensorImplPtr&;

std::string type_name(py::handle h) { return py::str(py::type::of(h).attr("__name__")); }

bool is_int_like(py::handle h) { return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()); }

// A clamp bound: None, a Python number, or a Tensor (-> `tensor`).
struct Bound {
  std::optional<double> value;
  TensorImplPtr tensor;
  bool is_float = false;
};
Bound bound_arg(py::handle h, const char* op, const char* which) {
  Bound b;
  if (h.is_none()) return b;
  if (py::isinstance<TensorImpl>(h)) {
    b.tensor = h.cast<TensorImplPtr>();
    return b;
  }
  if (PyFloat_Check(h.ptr()) || is_int_like(h)) {
    b.value = h.cast<double>();
    b.is_float = PyFloat_Check(h.ptr());
    return b;
  }
  throw DtypeMismatch(str(op, ": '", which, "' must be a number, a Tensor or None, got ", type_name(h)));
}

TensorImplPtr clamp_py(T x, py::handle lo_h, py::handle hi_h, const char* op) {
  Bound lo = bound_arg(lo_h, op, "min"), hi = bound_arg(hi_h, op, "max");
  if (lo.tensor || hi.tensor) {  // tensor bounds: max then min with broadcasting
    LUCID_CHECK(lo.tensor || lo_h.is_none(), op, ": min and max must both be Tensors or both numbers");
    LUCID_CHECK(hi.tensor || hi_h.is_none(), op, ": min and max must both be Tensors or both numbers");
    TensorImplPtr r = x;
    if (lo.tensor) r = maximum(r, lo.tensor);
    if (hi.tensor) r = minimum(r, hi.tensor);
    return r;
  }
  // An integer tensor with a float bound computes in float32 (PyTorch's result type).
  bool to_float = !is_floating(x->dtype) && (lo.is_float || hi.is_float);
  return clamp(to_float ? cast_raw(x, kDefaultFloat) : x, lo.value, hi.value);
}

TensorImplPtr clamp_inplace_py(T x, py::handle lo_h, py::handle hi_h) {
  Bound lo = bound_arg(lo_h, "clamp_", "min"), hi = bound_arg(hi_h, "clamp_", "max");
  LUCID_CHECK_DTYPE(!lo.tensor && !hi.tensor, "clamp_: tensor bounds are not supported in place; use clamp");
  LUCID_CHECK_DTYPE(is_floating(x->dtype) || !(lo.is_float || hi.is_float), "clamp_: a float bound cannot be "
                    "applied in place to a tensor of dtype ", dtype_name(x->dtype));
  return clamp_(x, lo.value, hi.value);
}

std::optional<int64_t> opt_dim(py::handle h, const char* op) {
  if (h.is_none()) return std::nullopt;
  LUCID_CHECK_DTYPE(is_int_like(h) || py::hasattr(h, "__index__"), op, ": dim must be an int or None, got ",
                    type_name(h));
  return h.cast<int64_t>();
}

// var/std: correction (default 1) or the legacy unbiased flag; var(x, True) passes it as dim.
double correction_arg(py::handle& dim, py::handle unbiased, py::handle correction, const char* op) {
  if (PyBool_Check(dim.ptr())) {
    LUCID_CHECK(unbiased.is_none(), op, ": unbiased given twice");
    unbiased = dim;
    dim = py::none();
  }
  LUCID_CHECK(unbiased.is_none() || correction.is_none(), op, ": pass either unbiased or correction, not both");
  if (!unbiased.is_none()) return unbiased.cast<bool>() ? 1.0 : 0.0;
  return correction.is_none() ? 1.0 : correction.cast<double>();
}

TensorImplPtr var_py(T x, py::handle dim, py::handle unbiased, bool keepdim, py::handle correction, bool take_sqrt) {
  const char* op = take_sqrt ? "std" : "var";
  double c = correction_arg(dim, unbiased, correction, op);
  auto dims = dims_arg(dim, op);
  return take_sqrt ? std_dev(x, dims, c, keepdim) : var(x, dims, c, keepdim);
}

py::object& return_type(bool is_max) {
  static py::object* types[2] = {nullptr, nullptr};
  if (!types[is_max]) {
    py::object nt = py::module_::import("collections").attr("namedtuple");
    types[is_max] = new py::object(nt(is_max ? "max" : "min", py::make_tuple("values", "indices")));
    types[is_max]->attr("__module__") = "pylucid.return_types";
  }
  return *types[is_max];
}

// max(x) -> 0-d; max(x, dim, keepdim) -> (values, indices); max(x, other) -> maximum.
py::object extremum_py(T x, py::handle dim, bool keepdim, bool is_max) {
  if (dim.is_none()) return py::cast(is_max ? max(x) : min(x));
  if (py::isinstance<TensorImpl>(dim)) {
    auto o = dim.cast<TensorImplPtr>();
    return py::cast(is_max ? maximum(x, o) : minimum(x, o));
  }
  int64_t d = *opt_dim(dim, is_max ? "max" : "min");
  auto [v, i] = is_max ? max(x, d, keepdim) : min(x, d, keepdim);
  return return_type(is_max)(v, i);
}

double norm_p(py::handle p) {
  if (p.is_none()) return 2.0;
  if (py::isinstance<py::str>(p)) {
    std::string s = p.cast<std::string>();
    LUCID_CHECK(s == "fro", "norm: p must be a number or 'fro', got '", s, "'");
    return 2.0;
  }
  LUCID_CHECK_DTYPE(PyFloat_Check(p.ptr()) || is_int_like(p), "norm: p must be a number or 'fro', got ", type_name(p));
  return p.cast<double>();
}

TensorImplPtr sum_py(T x, py::handle dim, bool keepdim, py::handle dtype) {
  auto dims = dims_arg(dim, "sum");
  return dtype.is_none() ? sum(x, dims, keepdim) : sum(x, dims, keepdim, dtype.cast<DType>());
}

TensorImplPtr mean_py(T x, py::handle dim, bool keepdim, py::handle dtype) {
  return mean(dtype.is_none() ? x : to(x, dtype.cast<DType>(), false), dims_arg(dim, "mean"), keepdim);
}

py::object rmatmul(T a, py::handle b) {
  if (!py::isinstance<TensorImpl>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(matmul(b.cast<TensorImplPtr>(), a));
}
py::object fmatmul(T a, py::handle b) {
  if (!py::isinstance<TensorImpl>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(matmul(a, b.cast<TensorImplPtr>()));
}

}  // namespace

LUCID_BINDING(ops_math, 10) {
  // ---- unary: function and method under one name ----
  struct Unary {
    const char* name;
    TensorImplPtr (*fn)(const TensorImplPtr&);
  };
  const Unary unary[] = {{"neg", &neg},     {"negative", &neg}, {"abs", &abs},       {"exp", &exp},
                         {"log", &log},     {"sqrt", &sqrt},    {"rsqrt", &rsqrt},   {"sin", &sin},
                         {"cos", &cos},     {"tanh", &tanh},    {"sigmoid", &sigmoid}, {"relu", &relu},
                         {"sign", &sign},   {"isnan", &isnan},  {"isfinite", &isfinite}};
  for (const auto& u : unary) {
    auto fn = u.fn;
    m.def(u.name, [fn](T x) { return fn(x); }, py::arg("input"));
    def_method(u.name, [fn](T x) { return fn(x); });
  }
  def_method("__neg__", [](T x) { return neg(x); });
  def_method("__abs__", [](T x) { return abs(x); });
  def_method("relu_", [](T x) { return relu_(x); });
  m.def("relu_", [](T x) { return relu_(x); }, py::arg("input"));
  m.def("silu", [](T x) { return silu(x); }, py::arg("input"));
  m.def("gelu", [](T x, const std::string& a) { return gelu(x, a); }, py::arg("input"), py::kw_only(),
        py::arg("approximate") = "none");

  for (const char* name : {"clamp", "clip"}) {
    m.def(name, [](T x, py::handle lo, py::handle hi) { return clamp_py(x, lo, hi, "clamp"); }, py::arg("input"),
          py::arg("min") = py::none(), py::arg("max") = py::none());
    def_method(name, [](T x, py::handle lo, py::handle hi) { return clamp_py(x, lo, hi, "clamp"); },
               py::arg("min") = py::none(), py::arg("max") = py::none());
  }
  m.def("clamp_min", [](T x, py::handle lo) { return clamp_py(x, lo, py::none(), "clamp_min"); }, py::arg("input"), py::arg("min"));
  m.def("clamp_max", [](T x, py::handle hi) { return clamp_py(x, py::none(), hi, "clamp_max"); }, py::arg("input"), py::arg("max"));
  def_method("clamp_min", [](T x, py::handle lo) { return clamp_py(x, lo, py::none(), "clamp_min"); }, py::arg("min"));
  def_method("clamp_max", [](T x, py::handle hi) { return clamp_py(x, py::none(), hi, "clamp_max"); }, py::arg("max"));
  def_method("clamp_", [](T x, py::handle lo, py::handle hi) { return clamp_inplace_py(x, lo, hi); },
             py::arg("min") = py::none(), py::arg("max") = py::none());
  m.def("clamp_", [](T x, py::handle lo, py::handle hi) { return clamp_inplace_py(x, lo, hi); }, py::arg("input"),
        py::arg("min") = py::none(), py::arg("max") = py::none());

  // ---- reductions ----
  m.def("sum", &sum_py, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
        py::arg("dtype") = py::none());
  def_method("sum", &sum_py, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
             py::arg("dtype") = py::none());
  m.def("mean", &mean_py, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
        py::arg("dtype") = py::none());
  def_method("mean", &mean_py, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
             py::arg("dtype") = py::none());
  for (bool sq : {false, true}) {
    auto f = [sq](T x, py::handle dim, py::handle unbiased, bool keepdim, py::handle correction) {
      return var_py(x, dim, unbiased, keepdim, correction, sq);
    };
    m.def(sq ? "std" : "var", f, py::arg("input"), py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
          py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none());
    def_method(sq ? "std" : "var", f, py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
               py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none());
  }
  for (bool mx : {true, false}) {
    const char* name = mx ? "max" : "min";
    auto ext = [mx](T x, py::handle dim, bool keepdim) { return extremum_py(x, dim, keepdim, mx); };
    m.def(name, ext, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
    def_method(name, ext, py::arg("dim") = py::none(), py::arg("keepdim") = false);
    auto aext = [mx](T x, py::handle dim, bool keepdim) {
      auto dims = dims_arg(dim, mx ? "amax" : "amin");
      return mx ? amax(x, dims, keepdim) : amin(x, dims, keepdim);
    };
    m.def(mx ? "amax" : "amin", aext, py::arg("input"), py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
    def_method(mx ? "amax" : "amin", aext, py::arg("dim") = py::tuple(), py::arg("keepdim") = false);
    auto arg = [mx](T x, py::handle dim, bool keepdim) {
      auto d = opt_dim(dim, mx ? "argmax" : "argmin");
      return mx ? argmax(x, d, keepdim) : argmin(x, d, keepdim);
    };
    m.def(mx ? "argmax" : "argmin", arg, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
    def_method(mx ? "argmax" : "argmin", arg, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  }
  auto lse = [](T x, py::handle dim, bool keepdim) { return logsumexp(x, dims_arg(dim, "logsumexp"), keepdim); };
  m.def("logsumexp", lse, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_method("logsumexp", lse, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  auto prd = [](T x, py::handle dim, bool keepdim) { return prod(x, opt_dim(dim, "prod"), keepdim); };
  m.def("prod", prd, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_method("prod", prd, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  auto nrm = [](T x, py::handle p, py::handle dim, bool keepdim) { return norm(x, norm_p(p), dims_arg(dim, "norm"), keepdim); };
  m.def("norm", nrm, py::arg("input"), py::arg("p") = 2.0, py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_method("norm", nrm, py::arg("p") = 2.0, py::arg("dim") = py::none(), py::arg("keepdim") = false);

  // ---- matrix products ----
  struct Binary {
    const char* name;
    TensorImplPtr (*fn)(const TensorImplPtr&, const TensorImplPtr&);
  };
  const Binary products[] = {{"matmul", &matmul}, {"mm", &mm}, {"bmm", &bmm}, {"dot", &dot}};
  for (const auto& b : products) {
    auto fn = b.fn;
    m.def(b.name, [fn](T x, T y) { return fn(x, y); }, py::arg("input"), py::arg("other"));
    def_method(b.name, [fn](T x, T y) { return fn(x, y); }, py::arg("other"));
  }
  def_method("__matmul__", &fmatmul);
  def_method("__rmatmul__", &rmatmul);
  m.def("linear", [](T x, T w, const TensorImplPtr& b) { return linear(x, w, b); }, py::arg("input"),
        py::arg("weight"), py::arg("bias") = py::none());
}

}  // namespace lucid::bindings
