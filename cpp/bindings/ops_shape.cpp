// Views, indexing and joining ops from Python: Tensor methods (reshape, permute, T, __getitem__,
// __setitem__, ...) and the module functions pylucid re-exports in _shape.py. Python index
// objects (ints, slices, None, Ellipsis, bools, lists, numpy arrays, Tensors) become IndexItems.
#include "bindings/common.h"
#include "ops/index.h"
#include "ops/join.h"
#include "ops/unfold.h"
#include "ops/view.h"

namespace lucid::bindings {

namespace {

py::object& from_numpy_fn() {
  static py::object* f = nullptr;  // leaked: must outlive interpreter shutdown order
  if (!f) f = new py::object(py::module_::import("pylucid._C").attr("_from_numpy"));
  return *f;
}

py::handle numpy_bool_type() {
  static py::object* t = new py::object(py::module_::import("numpy").attr("bool_"));  // leaked, as above
  return *t;
}

// A list / tuple / numpy array used as an index: int64 or bool tensor.
TensorImplPtr array_index(py::handle obj, const char* op) {
  py::module_ np = py::module_::import("numpy");
  py::object arr = np.attr("asarray")(obj);
  char kind = py::dtype(arr.attr("dtype")).kind();
  if (kind == 'f' && arr.attr("size").cast<int64_t>() == 0) kind = 'i';  // x[[]] selects nothing
  LUCID_CHECK_INDEX(kind == 'b' || kind == 'i' || kind == 'u', op, ": arrays used as indices must hold ints or bools, got ",
                    std::string(py::str(arr.attr("dtype"))));
  if (kind != 'b') arr = arr.attr("astype")("int64");
  return from_numpy_fn()(arr).cast<TensorImplPtr>();
}

// A Python int (or object with __index__) that fits in int64.
int64_t int_value(py::handle h, const char* op) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow) throw IndexOutOfRange(str(op, ": integer ", std::string(py::str(i)), " does not fit in int64"));
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}

IndexItem index_item(py::handle h, const char* op) {
  IndexItem it;
  if (h.is_none()) {
    it.kind = IndexItem::Kind::NewAxis;
  } else if (h.ptr() == Py_Ellipsis) {
    it.kind = IndexItem::Kind::Ellipsis;
  } else if (py::isinstance<TensorImpl>(h)) {
    it.kind = IndexItem::Kind::Tensor;
    it.t = h.cast<TensorImplPtr>();
  } else if (PyBool_Check(h.ptr()) || py::isinstance(h, numpy_bool_type())) {
    it.kind = IndexItem::Kind::Tensor;  // a 0-d mask: adds a dim of size 1 (True) or 0 (False)
    it.t = scalar_tensor(PyObject_IsTrue(h.ptr()) == 1 ? 1.0 : 0.0, DType::Bool);
  } else if (PySlice_Check(h.ptr())) {
    Py_ssize_t start, stop, step;
    if (PySlice_Unpack(h.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
    // Unpack turns None into sentinels that clamp like Python's own slicing.
    it.kind = IndexItem::Kind::Slice;
    it.start = start, it.stop = stop, it.step = step;
    it.has_start = it.has_stop = true;
  } else if (py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h) || py::isinstance<py::array>(h) ||
             PyRange_Check(h.ptr())) {  // x[range(n), t], as the nn tutorial indexes
    it.kind = IndexItem::Kind::Tensor;
    it.t = array_index(h, op);
  } else if (PyIndex_Check(h.ptr())) {
    it.kind = IndexItem::Kind::Int;
    it.i = int_value(h, op);
  } else {
    throw IndexOutOfRange(str(op, ": only ints, slices, None, Ellipsis, bools and int64/bool tensors, lists, ranges or "
                            "arrays are valid indices, got ", type_name(h)));
  }
  return it;
}

std::vector<IndexItem> index_items(py::handle idx, const char* op) {
  std::vector<IndexItem> items;
  if (py::isinstance<py::tuple>(idx)) {
    for (auto h : idx) items.push_back(index_item(h, op));
  } else {
    items.push_back(index_item(idx, op));
  }
  return items;
}

// Python number, Tensor, list or numpy array -> tensor operand next to `self`.
TensorImplPtr value_arg(const TensorImplPtr& self, py::handle v, const char* op) {
  if (auto t = to_operand(self, v)) return t;
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v) || py::isinstance<py::array>(v)) {
    py::object arr = py::module_::import("numpy").attr("asarray")(v);
    return from_numpy_fn()(arr).cast<TensorImplPtr>();
  }
  throw DtypeMismatch(str(op, ": expected a Tensor or a number, got ", type_name(v)));
}

DType dtype_value(py::handle h, const char* op) {
  if (!py::isinstance<DType>(h)) throw DtypeMismatch(str(op, ": expected a pylucid dtype, got ", type_name(h)));
  return h.cast<DType>();
}

bool bool_value(py::handle h, const char* op, const char* what) {
  if (!PyBool_Check(h.ptr())) throw DtypeMismatch(str(op, ": ", what, " must be a bool, got ", type_name(h)));
  return h.ptr() == Py_True;
}

TensorImplPtr tensor_arg(py::handle h, const char* op, const char* what) {
  if (!py::isinstance<TensorImpl>(h))
    throw DtypeMismatch(str(op, ": ", what, " must be a Tensor, got ", type_name(h)));
  return h.cast<TensorImplPtr>();
}

std::vector<TensorImplPtr> tensor_list(py::handle seq, const char* op) {
  if (py::isinstance<TensorImpl>(seq) || !py::isinstance<py::sequence>(seq))
    throw DtypeMismatch(str(op, ": expected a sequence of Tensors, got ", type_name(seq)));
  std::vector<TensorImplPtr> ts;
  size_t i = 0;
  for (auto h : seq) {
    if (!py::isinstance<TensorImpl>(h))
      throw DtypeMismatch(str(op, ": expected a sequence of Tensors, got ", type_name(h), " at position ", i));
    ts.push_back(h.cast<TensorImplPtr>());
    ++i;
  }
  return ts;
}

py::tuple as_tuple(const std::vector<TensorImplPtr>& v) { return py::tuple(py::cast(v)); }

py::tuple split_py(const TensorImplPtr& t, py::handle sizes, int64_t dim) {
  if (PyIndex_Check(sizes.ptr()) && !py::isinstance<TensorImpl>(sizes)) return as_tuple(split(t, int_value(sizes, "split"), dim));
  return as_tuple(split_with_sizes(t, shape_arg(sizes, "split"), dim));
}

TensorImplPtr where_py(py::handle cond, py::handle a, py::handle b) {
  auto c = tensor_arg(cond, "where", "condition");
  bool at = py::isinstance<TensorImpl>(a), bt = py::isinstance<TensorImpl>(b);
  TensorImplPtr ta, tb;
  if (at) ta = a.cast<TensorImplPtr>();
  if (bt) tb = b.cast<TensorImplPtr>();
  if (!at && !bt) {  // two Python numbers: bool, int64 or float32 by their kinds, as PyTorch
    auto kind_of = [](py::handle h) {
      return PyBool_Check(h.ptr()) ? DType::Bool : PyLong_Check(h.ptr()) ? DType::Int64 : kDefaultFloat;
    };
    auto probe = empty({}, promote_types(kind_of(a), kind_of(b)));
    ta = to_operand(probe, a);
    tb = to_operand(probe, b);
  } else if (!at) {
    ta = to_operand(tb, a);
  } else if (!bt) {
    tb = to_operand(ta, b);
  }
  if (!ta || !tb) throw DtypeMismatch(str("where: input and other must be Tensors or numbers, got ", type_name(a), " and ", type_name(b)));
  KeepLayout keep;  // NOTE [elementwise output layout]
  return where(c, ta, tb);
}

TensorImplPtr masked_fill_value(const TensorImplPtr& t, py::handle v, const char* op) {
  auto o = to_operand(t, v);
  if (!o) throw DtypeMismatch(str(op, ": value must be a number or a 0-d Tensor, got ", type_name(v)));
  return o;
}

// memory_format=None or torch.preserve_format (the default of clone and to): the copy keeps a dense
// input's layout (NOTE [elementwise output layout]); any other format gives row-major.
bool preserves_format(py::handle fmt) {
  return fmt.is_none() || std::string(py::str(fmt)).find("preserve") != std::string::npos;
}

TensorImplPtr to_py(const TensorImplPtr& t, const py::args& args, const py::kwargs& kw) {
  DType d = t->dtype;
  bool copy = false, preserve = true;
  int bools = 0;
  auto device = [](py::handle h) {
    std::string s = py::str(h);
    LUCID_CHECK(s == "cpu" || s.rfind("cpu:", 0) == 0, "to: pylucid only has the 'cpu' device, got '", s, "'");
  };
  for (auto h : args) {
    if (py::isinstance<DType>(h)) d = h.cast<DType>();
    else if (py::isinstance<TensorImpl>(h)) d = h.cast<TensorImplPtr>()->dtype;
    else if (py::isinstance<py::str>(h) || type_name(h) == "device") device(h);
    else if (PyBool_Check(h.ptr())) copy = (bools++ == 1) ? h.ptr() == Py_True : copy;  // (non_blocking, copy)
    else if (!h.is_none()) throw DtypeMismatch(str("to: expected a dtype, a device or a Tensor, got ", type_name(h)));
  }
  for (auto [k, v] : kw) {
    std::string key = py::str(k);
    if (key == "dtype") d = v.is_none() ? d : dtype_value(v, "to");
    else if (key == "device") { if (!v.is_none()) device(v); }
    else if (key == "copy") copy = bool_value(v, "to", "copy");
    else if (key == "memory_format") preserve = preserves_format(v);
    else if (key != "non_blocking")
      throw DtypeMismatch(str("to: unexpected keyword argument '", key, "'"));
  }
  std::optional<KeepLayout> keep;
  if (preserve) keep.emplace();
  return to(t, d, copy);
}

const char* legacy_type_name(DType d) {
  switch (d) {
    case DType::Bool: return "pylucid.BoolTensor";
    case DType::Int64: return "pylucid.LongTensor";
    case DType::Float16: return "pylucid.HalfTensor";
    case DType::BFloat16: return "pylucid.BFloat16Tensor";
    case DType::Float32: return "pylucid.FloatTensor";
    case DType::Float64: return "pylucid.DoubleTensor";
  }
  return "?";
}

TensorImplPtr reversed_dims(const TensorImplPtr& t) {
  std::vector<int64_t> dims(t->ndim());
  for (int64_t i = 0; i < t->ndim(); ++i) dims[i] = t->ndim() - 1 - i;
  return permute(t, dims);
}

TensorImplPtr matrix_transpose(const TensorImplPtr& t) {
  LUCID_CHECK_SHAPE(t->ndim() >= 2, "mT: expected a tensor with at least 2 dims, got shape ", shape_str(t->shape));
  return transpose(t, -2, -1);
}

TensorImplPtr t2(const TensorImplPtr& t) {
  LUCID_CHECK_SHAPE(t->ndim() <= 2, "t: expects a tensor with <= 2 dims, got shape ", shape_str(t->shape),
                    " (use transpose(dim0, dim1) or mT)");
  return t->ndim() < 2 ? t : transpose(t, 0, 1);
}

}  // namespace

// Docstrings of the module functions (PyTorch's semantics; see the C++ headers for details).
namespace doc {
constexpr const char* reshape =
    "A tensor with x's elements in `shape` (one -1 is inferred): a view when the strides allow it, "
    "else a copy.";
constexpr const char* flatten =
    "Dims start_dim..end_dim merged into one (a view when possible); a 0-d input gives shape (1,).";
constexpr const char* unflatten =
    "Dim `dim` split into `sizes` (one -1 is inferred); a view.";
constexpr const char* squeeze =
    "A view without size-1 dims: all of them, or those of `dim` (an int or tuple); other sizes are "
    "kept.";
constexpr const char* unsqueeze =
    "A view with a size-1 dim inserted at `dim` (in [-ndim-1, ndim]).";
constexpr const char* permute =
    "A view with the dims reordered: output dim i is input dim dims[i].";
constexpr const char* transpose =
    "A view with dims dim0 and dim1 swapped.";
constexpr const char* swapaxes =
    "Alias of transpose (numpy's name).";
constexpr const char* swapdims =
    "Alias of transpose.";
constexpr const char* t =
    "The transpose of a tensor with <= 2 dims (0-d and 1-d tensors come back unchanged).";
constexpr const char* movedim =
    "A view with the dims in `source` moved to the positions in `destination`; the others keep their "
    "order.";
constexpr const char* moveaxis =
    "Alias of movedim (numpy's name).";
constexpr const char* broadcast_to =
    "A view broadcast to `size` (stride 0 along the expanded dims); see Tensor.expand.";
constexpr const char* narrow =
    "A view of `length` elements of dim `dim` starting at `start` (negative start counts from the "
    "end).";
constexpr const char* select =
    "A view of index `index` along `dim`, that dim removed.";
constexpr const char* split =
    "A tuple of views along `dim`: pieces of split_size (the last may be smaller), or of the given "
    "sizes.";
constexpr const char* chunk =
    "A tuple of at most `chunks` views along `dim`, each of ceil(size / chunks) elements (the last "
    "may be smaller).";
constexpr const char* unbind =
    "A tuple of the views input.select(dim, i) for every i.";
constexpr const char* clone =
    "A contiguous copy; its gradient flows back to input.";
constexpr const char* index_select =
    "The entries of input at the int64 positions `index` (0-d or 1-d) along `dim`; repeated positions "
    "accumulate their gradients.";
constexpr const char* gather =
    "out[..., i, ...] = input[..., index[..., i, ...], ...] along `dim`; index has input's number of "
    "dims.";
constexpr const char* scatter_add =
    "A copy of input with src added at the positions `index` names along `dim` (repeated positions "
    "add up).";
constexpr const char* nonzero =
    "The (n, ndim) int64 coordinates of the nonzero elements in row-major order, or a tuple of "
    "n-vectors (as_tuple=True).";
constexpr const char* cat =
    "The tensors joined along `dim` (promoted to a common dtype); 1-d empty tensors are skipped as in "
    "PyTorch.";
constexpr const char* stack =
    "The tensors (all of one shape) joined along a new dim `dim`.";
constexpr const char* where =
    "condition ? input : other elementwise, all three broadcast (input/other may be numbers); "
    "where(condition) is nonzero(condition, as_tuple=True).";
constexpr const char* tril =
    "The lower triangle of the last two dims: elements with col - row <= diagonal kept, the rest "
    "zeroed.";
constexpr const char* triu =
    "The upper triangle of the last two dims: elements with col - row >= diagonal kept, the rest "
    "zeroed.";
constexpr const char* masked_fill =
    "input with `value` (a number or 0-d tensor) where `mask` (bool, broadcast with input) is True.";
}  // namespace doc

LUCID_BINDING(ops_shape, 11) {
  using T = const TensorImplPtr&;
  py::object cls = py::type::of<TensorImpl>();
  py::object property = py::module_::import("builtins").attr("property");
  py::setattr(cls, "T", property(py::cpp_function([](T t) { return reversed_dims(t); }), py::none(), py::none(),
                                 "A view with all dims in reverse order (permute(ndim-1, ..., 0)); the transpose of a "
                                 "matrix, the tensor itself for 0-d and 1-d."));
  py::setattr(cls, "mT", property(py::cpp_function([](T t) { return matrix_transpose(t); }), py::none(), py::none(),
                                  "A view with the last two dims swapped (a batch of transposed matrices); needs "
                                  "ndim >= 2."));

  // ---- views ----
  def_method("view", [](T t, py::args a) {
               if (a.size() == 1 && py::isinstance<DType>(a[0])) {  // view(dtype): a reinterpretation
                 const DType d = a[0].cast<DType>();
                 LUCID_CHECK(d == t->dtype, "view: reinterpreting ", dtype_name(t->dtype), " elements as ",
                             dtype_name(d), " is not supported; only view(", dtype_name(t->dtype), ") (an alias)");
                 return view(t, t->shape);
               }
               return view(t, shape_args(a, "view"));
             },
             "A view of the same elements with the given shape (ints or one tuple; one -1 is inferred), sharing "
             "storage; never copies: raises LucidError when the strides do not allow it (use reshape). "
             "view(dtype) with the tensor's own dtype is an alias.");
  def_method("reshape", [](T t, py::args a) { return reshape(t, shape_args(a, "reshape")); },
             "The same elements with the given shape (ints or one tuple; one -1 is inferred): a view when the "
             "strides allow it, else a contiguous copy. Gradients are reshaped back.");
  def_method("unfold", [](T t, int64_t d, int64_t size, int64_t step) { return unfold(t, d, size, step); },
             py::arg("dimension"), py::arg("size"), py::arg("step"),
             "A view of the windows of length size taken every step along dimension, as a new last dim "
             "(x.unfold(0, 3, 2) of arange(6) is [[0, 1, 2], [2, 3, 4]]); shares x's storage, and the "
             "gradient of overlapping windows accumulates.");
  def_method("view_as", [](T t, T o) { return view(t, o->shape); }, py::arg("other").none(false),
             "view(other.shape): a view with other's shape (never a copy).");
  def_method("reshape_as", [](T t, T o) { return reshape(t, o->shape); }, py::arg("other").none(false),
             "reshape(other.shape): other's shape, a view when the strides allow it, else a copy.");
  auto both = [&m](const char* name, auto&& fn, const char* doc, const auto&... extra) {
    def_function_and_method(m, name, fn, doc, extra...);
  };
  both("flatten", [](T t, int64_t s, int64_t e) { return flatten(t, s, e); }, doc::flatten,
       py::arg("start_dim") = 0, py::arg("end_dim") = -1);
  both("unflatten", [](T t, int64_t d, py::handle s) { return unflatten(t, d, shape_arg(s, "unflatten")); },
       doc::unflatten, py::arg("dim"), py::arg("sizes"));
  both("squeeze", [](T t, py::handle d) { return squeeze(t, dims_arg(d, "squeeze")); }, doc::squeeze,
       py::arg("dim") = py::none());
  both("unsqueeze", [](T t, int64_t d) { return unsqueeze(t, d); }, doc::unsqueeze, py::arg("dim"));
  def_method("permute", [](T t, py::args a) { return permute(t, shape_args(a, "permute")); },
             "A view with the dims reordered (ints or one tuple, a permutation of 0..ndim-1): output dim i is "
             "input dim dims[i].");
  both("transpose", [](T t, int64_t a, int64_t b) { return transpose(t, a, b); }, doc::transpose,
       py::arg("dim0"), py::arg("dim1"));
  both("swapaxes", [](T t, int64_t a, int64_t b) { return transpose(t, a, b); }, doc::swapaxes,
       py::arg("axis0"), py::arg("axis1"));
  both("swapdims", [](T t, int64_t a, int64_t b) { return transpose(t, a, b); }, doc::swapdims,
       py::arg("dim0"), py::arg("dim1"));
  both("t", [](T t) { return t2(t); }, doc::t);
  both("movedim", [](T t, py::handle s, py::handle d) {
    return movedim(t, dims_arg(s, "movedim"), dims_arg(d, "movedim"));
  }, doc::movedim, py::arg("source"), py::arg("destination"));
  both("moveaxis", [](T t, py::handle s, py::handle d) {
    return movedim(t, dims_arg(s, "moveaxis"), dims_arg(d, "moveaxis"));
  }, doc::moveaxis, py::arg("source"), py::arg("destination"));
  def_method("expand", [](T t, py::args a) { return expand(t, shape_args(a, "expand")); },
             "A view broadcast to the given sizes without copying: only size-1 dims grow (stride 0), -1 keeps a "
             "dim, new leading dims may be added. The gradient is summed back over the expanded dims.");
  def_method("expand_as", [](T t, T o) { return expand(t, o->shape); }, py::arg("other").none(false),
             "expand(other.shape): a view broadcast to other's shape.");
  both("broadcast_to", [](T t, py::handle s) { return expand(t, shape_arg(s, "broadcast_to")); },
       doc::broadcast_to, py::arg("size"));
  both("narrow", [](T t, int64_t d, int64_t s, int64_t n) { return narrow(t, d, s, n); }, doc::narrow,
       py::arg("dim"), py::arg("start"), py::arg("length"));
  both("select", [](T t, int64_t d, int64_t i) { return select(t, d, i); }, doc::select, py::arg("dim"),
       py::arg("index").none(false));
  def_method("split", [](T t, py::handle s, int64_t d) { return split_py(t, s, d); }, py::arg("split_size"),
             py::arg("dim") = 0,
             "A tuple of views along dim: pieces of split_size (an int; the last may be smaller), or of the "
             "given sizes (a list that must add up to the dim's size).");
  both("chunk", [](T t, int64_t c, int64_t d) { return as_tuple(chunk(t, c, d)); }, doc::chunk,
       py::arg("chunks"), py::arg("dim") = 0);
  both("unbind", [](T t, int64_t d) { return as_tuple(unbind(t, d)); }, doc::unbind, py::arg("dim") = 0);
  // memory_format (torch.contiguous_format, channels_last, ...) is accepted: contiguous() always
  // gives the row-major layout (pylucid keeps no channels-last layout).
  def_method("contiguous", [](T t, py::handle) { return contiguous(t); },
             "self when already contiguous, else a row-major copy (differentiable). memory_format is accepted "
             "and every format gives the row-major layout.",
             py::arg("memory_format") = py::none());
  both("clone", [](T t, py::handle fmt) {
    std::optional<KeepLayout> keep;
    if (preserves_format(fmt)) keep.emplace();
    return clone(t);
  }, doc::clone, py::kw_only(),
       py::arg("memory_format") = py::none());
  def_method("to", &to_py,
             "This tensor converted to a dtype, given as a dtype, as other Tensor's dtype, or dtype=; a device "
             "may be passed but must be 'cpu'. Returns self when the dtype already matches unless copy=True. "
             "Differentiable: the gradient is cast back to this dtype.");
  def_method("type", [](T t, py::handle d) -> py::object {
    if (d.is_none()) return py::str(legacy_type_name(t->dtype));
    return py::cast(to(t, dtype_value(d, "type"), false));
  }, py::arg("dtype") = py::none(),
             "Without an argument, PyTorch's legacy type name (e.g. 'pylucid.FloatTensor'); with a dtype, "
             "to(dtype).");

  // ---- indexing ----
  def_method("__getitem__", [](T t, py::handle idx) { return index(t, index_items(idx, "index")); });
  def_method("__setitem__", [](T t, py::handle idx, py::handle v) {
    index_put_(t, index_items(idx, "setitem"), value_arg(t, v, "setitem"));
  });
  def_method("__iter__", [](T t) {
    LUCID_CHECK_DTYPE(t->ndim() > 0, "iter: iteration over a 0-d tensor");
    return py::iter(py::cast(unbind(t, 0)));
  });
  both("index_select", [](T t, int64_t d, T i) { return index_select(t, d, i); }, doc::index_select,
       py::arg("dim"), py::arg("index").none(false));
  both("gather", [](T t, int64_t d, T i) { return gather(t, d, i); }, doc::gather, py::arg("dim"),
       py::arg("index").none(false));
  both("scatter_add", [](T t, int64_t d, T i, T s) { return scatter_add(t, d, i, s); }, doc::scatter_add,
       py::arg("dim"), py::arg("index").none(false), py::arg("src").none(false));
  def_method("scatter_add_", [](T t, int64_t d, T i, T s) { return scatter_add_(t, d, i, s); }, py::arg("dim"),
             py::arg("index").none(false), py::arg("src").none(false),
             "In-place scatter_add: adds src (self's dtype) at the positions the int64 index names along dim "
             "(repeated positions add up) and returns self; not recorded by autograd (refused on a tensor "
             "that requires grad while grad mode is on).");
  both("nonzero", [](T t, bool as_tuple_) -> py::object {
    return as_tuple_ ? py::object(as_tuple(nonzero_tuple(t))) : py::cast(nonzero(t));
  }, doc::nonzero, py::kw_only(), py::arg("as_tuple") = false);

  // ---- joining and selection ----
  both("masked_fill", [](T t, T m, py::handle v) { return masked_fill(t, m, masked_fill_value(t, v, "masked_fill")); },
       doc::masked_fill, py::arg("mask").none(false), py::arg("value"));
  def_method("masked_fill_", [](T t, T m, py::handle v) {
               for (size_t i = 0; i < t->shape.size(); ++i) {  // PyTorch's deprecation warning for expanded targets
                 if (t->shape[i] > 1 && t->strides[i] == 0) {
                   if (PyErr_WarnEx(PyExc_UserWarning,
                                    "Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor "
                                    "before performing this operation. This also applies to advanced indexing e.g. "
                                    "tensor[mask] = scalar", 1) < 0)
                     throw py::error_already_set();
                   break;
                 }
               }
               return masked_fill_(t, m, masked_fill_value(t, v, "masked_fill_"));
             },
             py::arg("mask").none(false), py::arg("value"),
             "In-place masked_fill: writes value (a number or 0-d tensor) where the bool mask, broadcast to "
             "self's shape, is True, and returns self; not recorded by autograd.");
  both("tril", [](T t, int64_t k) { return tril(t, k); }, doc::tril, py::arg("diagonal") = 0);
  both("triu", [](T t, int64_t k) { return triu(t, k); }, doc::triu, py::arg("diagonal") = 0);
  def_method("where", [](T t, py::handle c, py::handle o) { return where_py(c, py::cast(t), o); }, py::arg("condition"),
             py::arg("other"),
             "pylucid.where(condition, self, other): self where condition is True, else other (a Tensor or "
             "number), all broadcast; differentiable in self and other.");

  // ---- module functions (re-exported by pylucid/_shape.py) ----
  m.def("reshape", [](T t, py::handle s) { return reshape(t, shape_arg(s, "reshape")); },
        doc::reshape, py::arg("input").none(false), py::arg("shape"));
  m.def("permute", [](T t, py::handle d) { return permute(t, shape_arg(d, "permute")); },
        doc::permute, py::arg("input").none(false), py::arg("dims"));
  m.def("split", [](T t, py::handle s, int64_t d) { return split_py(t, s, d); },
        doc::split, py::arg("tensor").none(false),
        py::arg("split_size_or_sections"), py::arg("dim") = 0);
  m.def("cat", [](py::handle ts, int64_t d) { return cat(tensor_list(ts, "cat"), d); },
        doc::cat, py::arg("tensors"), py::arg("dim") = 0);
  m.def("stack", [](py::handle ts, int64_t d) { return stack(tensor_list(ts, "stack"), d); },
        doc::stack, py::arg("tensors"),
        py::arg("dim") = 0);
  m.def("where", [](py::handle c, py::handle a, py::handle b) -> py::object {
    if (a.is_none() && b.is_none()) return as_tuple(nonzero_tuple(tensor_arg(c, "where", "condition")));
    if (a.is_none() || b.is_none()) throw LucidError("where: pass both input and other, or neither (nonzero)");
    return py::cast(where_py(c, a, b));
  }, doc::where, py::arg("condition"), py::arg("input") = py::none(), py::arg("other") = py::none());
}

}  // namespace lucid::bindings
