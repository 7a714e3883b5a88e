// Elementwise math, reductions and matrix products: module functions (re-exported by
// pylucid/_math.py) and the matching Tensor methods. Defaults live here, in the signatures.
#include "bindings/common.h"
#include "ops/binary.h"
#include "ops/join.h"
#include "ops/matmul.h"
#include "ops/op_table.h"
#include "ops/reduce.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid::bindings {

namespace {

using T = const TensorImplPtr&;

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
  KeepLayout keep;  // NOTE [elementwise output layout]
  Bound lo = bound_arg(lo_h, op, "min"), hi = bound_arg(hi_h, op, "max");
  if (lo.tensor || hi.tensor) {  // tensor bounds: max then min with broadcasting
    LUCID_CHECK(lo.tensor || lo_h.is_none(), op, ": min and max must both be Tensors or both numbers");
    LUCID_CHECK(hi.tensor || hi_h.is_none(), op, ": min and max must both be Tensors or both numbers");
    // min(max(x, lo), hi) by selection, so the gradient follows PyTorch's: x's where
    // lo <= x <= hi (the whole of it at a bound), lo's where x < lo, hi's where the result exceeds hi.
    TensorImplPtr r = x;
    if (lo.tensor) r = where(compare(r, lo.tensor, CompareOp::Lt), lo.tensor, r);
    if (hi.tensor) r = where(compare(r, hi.tensor, CompareOp::Gt), hi.tensor, r);
    return r;
  }
  // An integer tensor with a float bound computes in float32 (PyTorch's result type).
  bool to_float = !is_floating(x->dtype) && (lo.is_float || hi.is_float);
  return clamp(to_float ? cast_raw(x, kDefaultFloat) : x, lo.value, hi.value);
}

TensorImplPtr clamp_inplace_py(T x, py::handle lo_h, py::handle hi_h) {
  Bound lo = bound_arg(lo_h, "clamp_", "min"), hi = bound_arg(hi_h, "clamp_", "max");
  if (lo.tensor || hi.tensor) {  // tensor bounds: the out-of-place result written back (copy_ checks dtype and shape)
    auto r = clamp_py(x, lo_h, hi_h, "clamp_");
    LUCID_CHECK(is_floating(x->dtype) || !is_floating(r->dtype), "clamp_: result type ",
                      dtype_name(r->dtype), " can't be cast to the desired output type ", dtype_name(x->dtype));
    LUCID_CHECK_SHAPE(r->shape == x->shape, "clamp_: the bounds broadcast the result to ", shape_str(r->shape),
                      ", which does not fit the tensor's shape ", shape_str(x->shape));
    return copy_(x, r);
  }
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
    types[is_max]->attr("__repr__") = py::module_::import("pylucid._tensor_str").attr("return_type_repr");
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

// PyTorch also accepts numpy's spelling keepdims= for keepdim= on its reductions.
bool keep(bool keepdim, py::handle keepdims) { return keepdims.is_none() ? keepdim : keepdims.cast<bool>(); }

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

TensorImplPtr sum_py(T x, py::handle dim, bool keepdim, py::handle dtype, py::handle keepdims) {
  keepdim = keep(keepdim, keepdims);
  auto dims = dims_arg(dim, "sum");
  return dtype.is_none() ? sum(x, dims, keepdim) : sum(x, dims, keepdim, dtype.cast<DType>());
}

TensorImplPtr mean_py(T x, py::handle dim, bool keepdim, py::handle dtype, py::handle keepdims) {
  keepdim = keep(keepdim, keepdims);
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
  // ---- the op table (ops/op_table.h): function and method under one name ----
  for (const auto& u : unary_ops()) {
    auto fn = u.fn;
    auto keep_layout = [fn](T x) {
      KeepLayout keep;  // NOTE [elementwise output layout]
      return fn(x);
    };
    m.def(u.name, keep_layout, py::arg("input"), u.doc);
    def_method(u.name, keep_layout, u.doc);
  }
  for (const auto& b : binary_ops()) {
    auto fn = b.fn;
    const char* name = b.name;
    m.def(name, [fn, name](T x, py::handle y) { return function_op(x, y, fn, name); }, py::arg("input"),
          py::arg("other"), b.doc);
    def_method(name, [fn, name](T x, py::handle y) { return function_op(x, y, fn, name); }, py::arg("other"), b.doc);
  }
  const char* round_doc =
      "Round half to even, in input's dtype (floating inputs); decimals rounds to that many decimal places "
      "(negative: to tens, hundreds, ...). Zero gradient.\n\n"
      ">>> import pylucid\n>>> pylucid.round(pylucid.tensor([0.5, 1.5, 1.26], dtype=pylucid.float64), decimals=1).tolist()\n[0.5, 1.5, 1.3]\n>>> pylucid.round(pylucid.tensor([0.5, 1.5, 2.5])).tolist()\n[0.0, 2.0, 2.0]";
  auto round_fn = [](T x, int64_t decimals) { return round(x, decimals); };
  m.def("round", round_fn, py::arg("input"), py::kw_only(), py::arg("decimals") = 0, round_doc);
  def_method("round", round_fn, py::kw_only(), py::arg("decimals") = 0, round_doc);
  def_method("__neg__", [](T x) { KeepLayout keep; return neg(x); });
  def_method("__abs__", [](T x) { KeepLayout keep; return abs(x); });
  const char* relu_doc = "relu in place (no autograd: refused on a tensor that requires grad).";
  def_method("relu_", [](T x) { return relu_(x); }, relu_doc);
  m.def("relu_", [](T x) { return relu_(x); }, py::arg("input"), relu_doc);
  m.def("silu", [](T x) { KeepLayout keep; return silu(x); }, py::arg("input"), "input * sigmoid(input), elementwise (floating inputs).");
  m.def("gelu", [](T x, const std::string& a) { KeepLayout keep; return gelu(x, a); }, py::arg("input"), py::kw_only(),
        py::arg("approximate") = "none",
        "GELU: 0.5 x (1 + erf(x / sqrt 2)), or with approximate='tanh' "
        "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Floating inputs only.");

  const char* clamp_doc =
      "min(max(input, min), max): bounds are numbers or Tensors (broadcast), either may be None; "
      "min > max gives max. The gradient passes where min <= input <= max.\n\n"
      ">>> import pylucid\n>>> pylucid.tensor([-2.0, 0.5, 3.0]).clamp(-1, 1).tolist()\n[-1.0, 0.5, 1.0]";
  for (const char* name : {"clamp", "clip"}) {
    m.def(name, [](T x, py::handle lo, py::handle hi) { return clamp_py(x, lo, hi, "clamp"); }, py::arg("input"),
          py::arg("min") = py::none(), py::arg("max") = py::none(), clamp_doc);
    def_method(name, [](T x, py::handle lo, py::handle hi) { return clamp_py(x, lo, hi, "clamp"); },
               py::arg("min") = py::none(), py::arg("max") = py::none(), clamp_doc);
  }
  const char* cmin_doc = "max(input, min): clamp with a lower bound only.";
  const char* cmax_doc = "min(input, max): clamp with an upper bound only.";
  const char* clamp_inplace_doc = "clamp in place with number bounds (no autograd).";
  m.def("clamp_min", [](T x, py::handle lo) { return clamp_py(x, lo, py::none(), "clamp_min"); }, py::arg("input"),
        py::arg("min"), cmin_doc);
  m.def("clamp_max", [](T x, py::handle hi) { return clamp_py(x, py::none(), hi, "clamp_max"); }, py::arg("input"),
        py::arg("max"), cmax_doc);
  def_method("clamp_min", [](T x, py::handle lo) { return clamp_py(x, lo, py::none(), "clamp_min"); }, py::arg("min"),
             cmin_doc);
  def_method("clamp_max", [](T x, py::handle hi) { return clamp_py(x, py::none(), hi, "clamp_max"); }, py::arg("max"),
             cmax_doc);
  def_method("clamp_", [](T x, py::handle lo, py::handle hi) { return clamp_inplace_py(x, lo, hi); },
             py::arg("min") = py::none(), py::arg("max") = py::none(), clamp_inplace_doc);
  m.def("clamp_", [](T x, py::handle lo, py::handle hi) { return clamp_inplace_py(x, lo, hi); }, py::arg("input"),
        py::arg("min") = py::none(), py::arg("max") = py::none(), clamp_inplace_doc);

  // ---- reductions ----
  const char* sum_doc =
      "Sum over dim (an int, a tuple, or None for all) with keepdim. Integers and bool sum to int64; "
      "dtype= accumulates and returns in that dtype. float32 accumulates in double.\n\n"
      ">>> import pylucid\n>>> pylucid.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(dim=0).tolist()\n[4.0, 6.0]";
  m.def("sum", &sum_py, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
        py::arg("dtype") = py::none(), py::arg("keepdims") = py::none(), sum_doc);
  def_method("sum", &sum_py, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
             py::arg("dtype") = py::none(), py::arg("keepdims") = py::none(), sum_doc);
  const char* mean_doc = "Mean over dim (int, tuple or None) with keepdim; floating inputs (or dtype=). "
                         "An empty reduction gives NaN.";
  m.def("mean", &mean_py, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
        py::arg("dtype") = py::none(), py::arg("keepdims") = py::none(), mean_doc);
  def_method("mean", &mean_py, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(),
             py::arg("dtype") = py::none(), py::arg("keepdims") = py::none(), mean_doc);
  for (bool sq : {false, true}) {
    auto f = [sq](T x, py::handle dim, py::handle unbiased, bool keepdim, py::handle correction, py::handle kd) {
      return var_py(x, dim, unbiased, keep(keepdim, kd), correction, sq);
    };
    const char* doc = sq ? "Standard deviation over dim: sqrt(sum (x - mean)^2 / max(0, N - correction)), "
                           "correction=1 by default (or unbiased=True/False)."
                         : "Variance over dim: sum (x - mean)^2 / max(0, N - correction), correction=1 by "
                           "default (or unbiased=True/False).";
    m.def(sq ? "std" : "var", f, py::arg("input"), py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
          py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none(), py::arg("keepdims") = py::none(), doc);
    def_method(sq ? "std" : "var", f, py::arg("dim") = py::none(), py::arg("unbiased") = py::none(),
               py::arg("keepdim") = false, py::kw_only(), py::arg("correction") = py::none(), py::arg("keepdims") = py::none(), doc);
  }
  for (bool mx : {true, false}) {
    const char* name = mx ? "max" : "min";
    auto ext = [mx](T x, py::handle dim, bool keepdim, py::handle kd) { return extremum_py(x, dim, keep(keepdim, kd), mx); };
    const char* doc = mx ? "max(input): the largest element (0-d). max(input, dim, keepdim=False): a named tuple "
                           "(values, indices), the index of the first maximum. max(input, other): maximum. "
                           "NaN propagates; the gradient is split evenly among ties.\n\n"
                           ">>> import pylucid\n>>> pylucid.tensor([[1.0, 3.0], [4.0, 2.0]]).max(dim=1).indices.tolist()\n[1, 0]"
                         : "min(input): the smallest element (0-d). min(input, dim, keepdim=False): a named tuple "
                           "(values, indices). min(input, other): minimum. NaN propagates; the gradient is split "
                           "evenly among ties.";
    m.def(name, ext, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), doc);
    def_method(name, ext, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), doc);
    auto aext = [mx](T x, py::handle dim, bool keepdim, py::handle kd) {
      keepdim = keep(keepdim, kd);
      auto dims = dims_arg(dim, mx ? "amax" : "amin");
      return mx ? amax(x, dims, keepdim) : amin(x, dims, keepdim);
    };
    const char* adoc = mx ? "Largest values over dim (int or tuple; () = all) with keepdim; the gradient is split "
                            "evenly among ties."
                          : "Smallest values over dim (int or tuple; () = all) with keepdim; the gradient is split "
                            "evenly among ties.";
    m.def(mx ? "amax" : "amin", aext, py::arg("input"), py::arg("dim") = py::tuple(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), adoc);
    def_method(mx ? "amax" : "amin", aext, py::arg("dim") = py::tuple(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), adoc);
    auto arg = [mx](T x, py::handle dim, bool keepdim, py::handle kd) {
      keepdim = keep(keepdim, kd);
      auto d = opt_dim(dim, mx ? "argmax" : "argmin");
      return mx ? argmax(x, d, keepdim) : argmin(x, d, keepdim);
    };
    const char* idoc = mx ? "Index (int64) of the first maximum along dim, or into the flattened input when dim is None."
                          : "Index (int64) of the first minimum along dim, or into the flattened input when dim is None.";
    m.def(mx ? "argmax" : "argmin", arg, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), idoc);
    def_method(mx ? "argmax" : "argmin", arg, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), idoc);
  }
  auto lse = [](T x, py::handle dim, bool keepdim, py::handle kd) {
    return logsumexp(x, dims_arg(dim, "logsumexp"), keep(keepdim, kd));
  };
  const char* lse_doc = "log(sum(exp(input))) over dim (int, tuple or None), computed as m + log(sum(exp(x - m))) "
                        "with m the maximum, so large inputs do not overflow.\n\n"
                        ">>> import pylucid\n>>> print(f\"{pylucid.tensor([1000.0, 1000.0]).logsumexp(0).item():.3f}\")\n1000.693";
  m.def("logsumexp", lse, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), lse_doc);
  def_method("logsumexp", lse, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), lse_doc);
  auto prd = [](T x, py::handle dim, bool keepdim, py::handle kd) { return prod(x, opt_dim(dim, "prod"), keep(keepdim, kd)); };
  const char* prod_doc = "Product over one dim, or over all elements when dim is None; the gradient is exact "
                         "when the input holds zeros.";
  m.def("prod", prd, py::arg("input"), py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), prod_doc);
  def_method("prod", prd, py::arg("dim") = py::none(), py::arg("keepdim") = false, py::kw_only(), py::arg("keepdims") = py::none(), prod_doc);
  auto nrm = [](T x, py::handle p, py::handle dim, bool keepdim) { return norm(x, norm_p(p), dims_arg(dim, "norm"), keepdim); };
  const char* norm_doc = "Vector p-norm over dim (int, tuple or None): p = 2 ('fro'), 1, inf, -inf, 0 (count of "
                         "non-zeros) or any p > 0.";
  m.def("norm", nrm, py::arg("input"), py::arg("p") = 2.0, py::arg("dim") = py::none(), py::arg("keepdim") = false, norm_doc);
  def_method("norm", nrm, py::arg("p") = 2.0, py::arg("dim") = py::none(), py::arg("keepdim") = false, norm_doc);

  // ---- matrix products ----
  struct Binary {
    const char* name;
    TensorImplPtr (*fn)(const TensorImplPtr&, const TensorImplPtr&);
    const char* doc;
  };
  const Binary products[] = {
      {"matmul", &matmul,
       "Matrix product with numpy's rules: 1-D @ 1-D is a dot product, a 1-D operand is a row (left) or a "
       "column (right), N-D operands are stacks of matrices with broadcast batch dims. Both operands must "
       "share a dtype; under autocast floating operands run in the autocast dtype.\n\n"
       ">>> import pylucid\n>>> (pylucid.ones(5, 2, 3) @ pylucid.ones(3, 4)).shape\npylucid.Size([5, 2, 4])"},
      {"mm", &mm, "Product of two 2-D tensors."},
      {"bmm", &bmm, "Batched product of two 3-D tensors with equal batch size (no broadcasting)."},
      {"dot", &dot, "Dot product of two 1-D tensors of equal size (a 0-d result)."}};
  for (const auto& b : products) {
    auto fn = b.fn;
    m.def(b.name, [fn](T x, T y) { return fn(x, y); }, py::arg("input"), py::arg("other"), b.doc);
    def_method(b.name, [fn](T x, T y) { return fn(x, y); }, py::arg("other"), b.doc);
  }
  def_method("__matmul__", &fmatmul);
  def_method("__rmatmul__", &rmatmul);
  m.def("linear", [](T x, T w, const OptTensor& b) { return linear(x, w, opt(b)); }, py::arg("input"),
        py::arg("weight"), py::arg("bias") = py::none(),
        "input @ weight^T + bias in one gemm (bias broadcast to [..., out_features]) with one backward node. "
        "input [..., in_features], weight [out_features, in_features].\n\n"
        ">>> import pylucid\n>>> pylucid.linear(pylucid.ones(2, 3), pylucid.ones(4, 3), pylucid.ones(4)).tolist()[0]\n"
        "[4.0, 4.0, 4.0, 4.0]");
}

}  // namespace lucid::bindings
