// The ops PyTorch programs reach for beyond the basic math: remainder/fmod/floor_divide (and the
// % and // operators), cumulative sums and products, sorting and top-k, counting and searching.
// Module functions (re-exported by pylucid/_math_ext.py) and the matching Tensor methods.
#include <map>

#include "bindings/common.h"
#include "ops/count.h"
#include "ops/index.h"
#include "ops/lu.h"
#include "ops/modulo.h"
#include "ops/scan.h"
#include "ops/select_k.h"
#include "ops/sort.h"
#include "ops/view.h"

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

// PyTorch's torch.return_types.<name>: a named tuple (values, indices).
py::object values_indices(const char* name, const std::pair<TensorImplPtr, TensorImplPtr>& r) {
  static std::map<std::string, py::object>* types = new std::map<std::string, py::object>();
  auto it = types->find(name);
  if (it == types->end()) {
    py::object nt = py::module_::import("collections").attr("namedtuple")(name, py::make_tuple("values", "indices"));
    nt.attr("__module__") = "pylucid.return_types";
    nt.attr("__repr__") = py::module_::import("pylucid._tensor_str").attr("return_type_repr");
    it = types->emplace(name, nt).first;
  }
  return it->second(r.first, r.second);
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
  const char* sort_doc =
      "Sorts along dim (default -1): a named tuple (values, indices). NaN sorts above every number. With "
      "stable=True equal values keep their order; without it they come in the order PyTorch's CPU sort "
      "leaves them. The gradient flows back to the positions the indices name.\n\n"
      ">>> import pylucid\n>>> pylucid.tensor([3.0, 1.0, 2.0]).sort(descending=True).indices.tolist()\n[0, 2, 1]";
  auto sort_fn = [](T x, int64_t dim, bool descending, bool stable) {
    return values_indices("sort", maybe_nogil(x->numel(), [&] { return sort(x, dim, descending, stable); }));
  };
  m.def("sort", sort_fn, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
        py::arg("stable") = false, sort_doc);
  def_method("sort", sort_fn, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
             py::arg("stable") = false, sort_doc);
  const char* argsort_doc = "The indices (int64) that sort input along dim (sort's indices).\n\n"
                            ">>> import pylucid\n>>> pylucid.argsort(pylucid.tensor([3, 1, 2])).tolist()\n[1, 2, 0]";
  auto argsort_fn = [](T x, int64_t dim, bool descending, bool stable) {
    return maybe_nogil(x->numel(), [&] { return argsort(x, dim, descending, stable); });
  };
  m.def("argsort", argsort_fn, py::arg("input"), py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
        py::arg("stable") = false, argsort_doc);
  def_method("argsort", argsort_fn, py::arg("dim") = -1, py::arg("descending") = false, py::kw_only(),
             py::arg("stable") = false, argsort_doc);
  const char* topk_doc =
      "The k largest (largest=False: smallest) elements along dim (default -1): a named tuple (values, indices), "
      "best first (sorted=False: in PyTorch's selection order). NaN counts as larger than every number. k outside [0, size] raises a ValueError. The gradient "
      "flows back to the positions the indices name.\n\n"
      ">>> import pylucid\n>>> pylucid.tensor([1.0, 5.0, 3.0]).topk(2).values.tolist()\n[5.0, 3.0]";
  auto topk_fn = [](T x, py::handle k, int64_t dim, bool largest, bool sorted) {
    LUCID_CHECK_DTYPE(PyLong_Check(k.ptr()) || py::hasattr(k, "__index__"), "topk: k must be an int, got ",
                      type_name(k));
    LUCID_CHECK_DTYPE(!PyBool_Check(k.ptr()), "topk: k must be an int, got bool");
    const int64_t kk = k.cast<int64_t>();
    return values_indices("topk", maybe_nogil(x->numel(), [&] { return topk(x, kk, dim, largest, sorted); }));
  };
  m.def("topk", topk_fn, py::arg("input"), py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true,
        py::arg("sorted") = true, topk_doc);
  def_method("topk", topk_fn, py::arg("k"), py::arg("dim") = -1, py::arg("largest") = true, py::arg("sorted") = true,
             topk_doc);
  // Order statistics behind pylucid.kthvalue / median / nanmedian / mode (their Python wrappers
  // name the result tuples and pick the overload): (values, indices) pairs, or the value.
  m.def("_kthvalue", [](T x, int64_t k, int64_t dim, bool keepdim) {
    return maybe_nogil(x->numel(), [&] { return kthvalue(x, k, dim, keepdim); });
  }, py::arg("input"), py::arg("k"), py::arg("dim"), py::arg("keepdim"),
     "The k-th smallest along dim and its index (PyTorch's quickselect, so ties pick the same index).");
  m.def("_median_dim", [](T x, int64_t dim, bool keepdim, bool ignore_nan) {
    return maybe_nogil(x->numel(), [&] { return median(x, dim, keepdim, ignore_nan); });
  }, py::arg("input"), py::arg("dim"), py::arg("keepdim"), py::arg("ignore_nan"),
     "The lower median along dim and its index (ignore_nan: nanmedian).");
  m.def("_median_all", [](T x, bool ignore_nan) {
    return maybe_nogil(x->numel(), [&] { return median(x, ignore_nan); });
  }, py::arg("input"), py::arg("ignore_nan"), "The lower median of all elements (ignore_nan: nanmedian).");
  m.def("_mode", [](T x, int64_t dim, bool keepdim) {
    return maybe_nogil(x->numel(), [&] { return mode(x, dim, keepdim); });
  }, py::arg("input"), py::arg("dim"), py::arg("keepdim"), "The most frequent value along dim and its index.");
  const char* diagonal_doc =
      "The diagonal of the (dim1, dim2) planes as a view, as the last dim: offset > 0 above the main diagonal, "
      "< 0 below.\n\n"
      ">>> import pylucid\n>>> pylucid.arange(9).reshape(3, 3).diagonal(1).tolist()\n[1, 5]";
  auto diagonal_fn = [](T x, int64_t offset, int64_t dim1, int64_t dim2) { return diagonal(x, offset, dim1, dim2); };
  m.def("diagonal", diagonal_fn, py::arg("input"), py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1,
        diagonal_doc);
  def_method("diagonal", diagonal_fn, py::arg("offset") = 0, py::arg("dim1") = 0, py::arg("dim2") = 1, diagonal_doc);
  const char* unique_doc =
      "The sorted distinct values of input (flattened); with return_inverse each element's index into them "
      "(input's shape), with return_counts how often each occurs: a tensor, or a tuple when either flag is "
      "set. NaNs are all distinct. Only dim=None is supported; sorted=False returns them sorted too.\n\n"
      ">>> import pylucid\n>>> pylucid.unique(pylucid.tensor([3, 1, 3])).tolist()\n[1, 3]";
  auto unique_fn = [](T x, bool, bool return_inverse, bool return_counts, py::handle dim) -> py::object {
    LUCID_CHECK(dim.is_none(), "unique: dim= is not supported (only dim=None, over the flattened input)");
    auto [v, inv, cnt] = maybe_nogil(x->numel(), [&] { return unique(x); });
    if (!return_inverse && !return_counts) return py::cast(v);
    if (return_inverse && return_counts) return py::make_tuple(v, inv, cnt);
    return py::make_tuple(v, return_inverse ? inv : cnt);
  };
  m.def("unique", unique_fn, py::arg("input"), py::arg("sorted") = true, py::arg("return_inverse") = false,
        py::arg("return_counts") = false, py::arg("dim") = py::none(), unique_doc);
  def_method("unique", unique_fn, py::arg("sorted") = true, py::arg("return_inverse") = false,
             py::arg("return_counts") = false, py::arg("dim") = py::none(), unique_doc);
  m.def(
      "_lu_factor_ex",
      [](T x) {
        auto [lu, piv, info] = maybe_nogil(x->numel(), [&] { return lu_factor_ex(x); });
        return py::make_tuple(lu, piv, info);
      },
      py::arg("input"),
      "(LU, pivots, info) of every matrix of a float32/float64 input through LAPACK's getrf, without a "
      "gradient (pylucid.linalg.lu_factor_ex adds one).");
  const char* bincount_doc =
      "How often each value 0..max occurs in a 1-D non-negative int64 tensor (at least minlength bins); with "
      "weights, the sum of the weights of each value (float32 weights sum in float32, others in float64).\n\n"
      ">>> import pylucid\n>>> pylucid.bincount(pylucid.tensor([0, 2, 2])).tolist()\n[1, 0, 2]";
  auto bincount_fn = [](T x, const OptTensor& w, int64_t minlength) { return bincount(x, opt(w), minlength); };
  m.def("bincount", bincount_fn, py::arg("input"), py::arg("weights") = py::none(), py::arg("minlength") = 0,
        bincount_doc);
  def_method("bincount", bincount_fn, py::arg("weights") = py::none(), py::arg("minlength") = 0, bincount_doc);
  const char* histc_doc =
      "Histogram of a floating input: bins equal bins over [min, max] (the data's range when min == max); "
      "elements outside are ignored. Returns input's dtype.\n\n"
      ">>> import pylucid\n>>> pylucid.histc(pylucid.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3).tolist()\n"
      "[0.0, 2.0, 1.0, 0.0]";
  auto histc_fn = [](T x, int64_t bins, double lo, double hi) {
    return maybe_nogil(x->numel(), [&] { return histc(x, bins, lo, hi); });
  };
  m.def("histc", histc_fn, py::arg("input"), py::arg("bins") = 100, py::arg("min") = 0.0, py::arg("max") = 0.0,
        histc_doc);
  def_method("histc", histc_fn, py::arg("bins") = 100, py::arg("min") = 0.0, py::arg("max") = 0.0, histc_doc);
  m.def("searchsorted",
        [](T seq, py::handle values, bool out_int32, bool right, py::handle side, const OptTensor& sorter) {
          LUCID_CHECK_DTYPE(!out_int32, "searchsorted: out_int32=True is not supported (pylucid's integer dtype "
                            "is int64)");
          if (!side.is_none()) {
            LUCID_CHECK_DTYPE(py::isinstance<py::str>(side), "searchsorted: side must be 'left' or 'right'");
            const std::string sd = side.cast<std::string>();
            LUCID_CHECK(sd == "left" || sd == "right", "searchsorted: side must be 'left' or 'right', got '", sd, "'");
            LUCID_CHECK(!(right && sd == "left"), "searchsorted: side='left' and right=True contradict each other");
            right = sd == "right";
          }
          auto v = to_operand(seq, values);
          LUCID_CHECK_DTYPE(v, "searchsorted: expected a Tensor or a number for input, got ", type_name(values));
          auto s = seq;
          if (sorter) {
            LUCID_CHECK_DTYPE((*sorter)->dtype == DType::Int64, "searchsorted: sorter must be int64");
            LUCID_CHECK_SHAPE((*sorter)->shape == seq->shape, "searchsorted: sorter of shape ",
                              shape_str((*sorter)->shape), " must match sorted_sequence's ", shape_str(seq->shape));
            s = gather(seq, -1, *sorter);
          }
          return searchsorted(s, v, right);
        },
        py::arg("sorted_sequence"), py::arg("input"), py::kw_only(), py::arg("out_int32") = false,
        py::arg("right") = false, py::arg("side") = py::none(), py::arg("sorter") = py::none(),
        "For each value of input (a Tensor or a number), the index where it would be inserted into the last "
        "dim of sorted_sequence to keep it sorted: the leftmost such index, or the rightmost with right=True "
        "(side='right'). sorter= gives the argsort of an unsorted sequence. Returns int64.\n\n"
        ">>> import pylucid\n>>> pylucid.searchsorted(pylucid.tensor([1, 3, 5]), pylucid.tensor([3, 6])).tolist()\n"
        "[1, 3]");
  def_method("__mod__", [](T a, py::handle b) { return binary_operand(a, b, &remainder); });
  def_method("__rmod__", [](T a, py::handle b) { return binary_operand(a, b, &remainder, true); });
  def_method("__floordiv__", [](T a, py::handle b) { return binary_operand(a, b, &floor_divide); });
  def_method("__rfloordiv__", [](T a, py::handle b) { return binary_operand(a, b, &floor_divide, true); });
}

}  // namespace lucid::bindings
