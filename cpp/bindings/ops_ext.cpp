// The ops PyTorch programs reach for beyond the basic math: remainder/fmod/floor_divide (and the
// % and // operators), cumulative sums and products, sorting and top-k, counting and searching.
// Module functions (re-exported by pylucid/_math_ext.py) and the matching Tensor methods.
#include "bindings/common.h"
#include "ops/modulo.h"
#include "ops/scan.h"

namespace lucid::bindings {

namespace {

using T = const TensorImplPtr&;
using BinFn = TensorImplPtr (*)(const TensorImplPtr&, const TensorImplPtr&);

// f(input, other) where either may be a Python number (not both), as PyTorch's Scalar overloads.
TensorImplPtr number_or_tensor(py::handle a, py::handle b, BinFn f, const char* name) {
  const bool at = py::isinstance<TensorImpl>(a), bt = py::isinstance<TensorImpl>(b);
  LUCID_CHECK_DTYPE(at || bt, name, ": expected at least one Tensor argument, got ", type_name(a), " and ",
                    type_name(b));
  TensorImplPtr ta = at ? a.cast<TensorImplPtr>() : nullptr, tb = bt ? b.cast<TensorImplPtr>() : nullptr;
  if (!ta) ta = to_operand(tb, a);
  if (!tb) tb = to_operand(ta, b);
  LUCID_CHECK_DTYPE(ta && tb, name, ": expected a Tensor or a number, got ", type_name(ta ? b : a));
  return maybe_nogil(std::max(ta->numel(), tb->numel()), [&] { return f(ta, tb); });
}

py::object operator_op(T a, py::handle b, BinFn f, bool reflected) {
  auto o = to_operand(a, b);
  if (!o) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(reflected ? f(o, a) : f(a, o));
}

}  // namespace

LUCID_BINDING(ops_ext, 12) {
  struct Modulo {
    const char* name;
    BinFn fn;
    const char* doc;
  };
  const Modulo mods[] = {
      {"remainder", &remainder,
       "input - other * floor(input / other), elementwise with broadcasting: the result has other's sign (Python's "
       "%). Either argument may be a number. Integer division by zero raises.\n\n"
       ">>> import pylucid\n>>> pylucid.remainder(pylucid.tensor([-3, 3]), 2).tolist()\n[1, 1]"},
      {"fmod", &fmod,
       "input - other * trunc(input / other), elementwise with broadcasting: the result has input's sign (C's "
       "fmod). Integer division by zero raises.\n\n"
       ">>> import pylucid\n>>> pylucid.fmod(pylucid.tensor([-3, 3]), 2).tolist()\n[-1, 1]"},
      {"floor_divide", &floor_divide,
       "floor(input / other), elementwise with broadcasting (Python's //): integers stay integers. Records no "
       "gradient. Integer division by zero raises.\n\n"
       ">>> import pylucid\n>>> pylucid.floor_divide(pylucid.tensor([-3, 3]), 2).tolist()\n[-2, 1]"}};
  for (const auto& md : mods) {
    auto fn = md.fn;
    const char* name = md.name;
    m.def(name, [fn, name](py::handle a, py::handle b) { return number_or_tensor(a, b, fn, name); },
          py::arg("input"), py::arg("other"), md.doc);
    def_method(name, [fn, name](T a, py::handle b) { return number_or_tensor(py::cast(a), b, fn, name); },
               py::arg("other"), md.doc);
  }
  struct Scan {
    const char* name;
    TensorImplPtr (*fn)(const TensorImplPtr&, int64_t, std::optional<DType>);
    const char* doc;
  };
  const Scan scans[] = {
      {"cumsum", &cumsum,
       "Cumulative sum along dim: out[i] = input[0] + ... + input[i]. dtype= converts the input first; "
       "integers and bool sum to int64. The gradient is the reversed cumulative sum of the incoming one.\n\n"
       ">>> import pylucid\n>>> pylucid.tensor([1, 2, 3]).cumsum(0).tolist()\n[1, 3, 6]"},
      {"cumprod", &cumprod,
       "Cumulative product along dim: out[i] = input[0] * ... * input[i]. dtype= converts the input first; "
       "integers and bool multiply in int64. The gradient is exact when the input holds zeros.\n\n"
       ">>> import pylucid\n>>> pylucid.tensor([1.0, 2.0, 3.0]).cumprod(0).tolist()\n[1.0, 2.0, 6.0]"}};
  for (const auto& sc : scans) {
    auto fn = sc.fn;
    auto f = [fn](T x, int64_t dim, std::optional<DType> dtype) {
      return maybe_nogil(x->numel(), [&] { return fn(x, dim, dtype); });
    };
    m.def(sc.name, f, py::arg("input"), py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none(), sc.doc);
    def_method(sc.name, f, py::arg("dim"), py::kw_only(), py::arg("dtype") = py::none(), sc.doc);
  }
  def_method("__mod__", [](T a, py::handle b) { return operator_op(a, b, &remainder, false); });
  def_method("__rmod__", [](T a, py::handle b) { return operator_op(a, b, &remainder, true); });
  def_method("__floordiv__", [](T a, py::handle b) { return operator_op(a, b, &floor_divide, false); });
  def_method("__rfloordiv__", [](T a, py::handle b) { return operator_op(a, b, &floor_divide, true); });
}

}  // namespace lucid::bindings
