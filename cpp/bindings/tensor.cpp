// The Tensor class: construction from numpy (zero copy), numpy views of a tensor, properties,
// autograd entry points, and the Python operators of the binary ops.
#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/tensor_grad.h"
#include "bindings/common.h"
#include "core/autocast.h"
#include "core/op_schema.h"
#include "ops/binary.h"
#include "ops/factory.h"
#include "ops/reduce.h"

namespace lucid::bindings {

TensorImplPtr to_operand(const TensorImplPtr& self, py::handle other) {
  if (py::isinstance<TensorImpl>(other)) return other.cast<TensorImplPtr>();
  if (PyBool_Check(other.ptr()))
    return scalar_tensor(other.ptr() == Py_True ? 1.0 : 0.0, self->dtype);
  if (PyLong_Check(other.ptr())) {
    DType d = self->dtype == DType::Bool ? DType::Int64 : self->dtype;
    if (d == DType::Int64) {
      auto t = empty({}, DType::Int64);
      *t->data<int64_t>() = other.cast<int64_t>();
      return t;
    }
    return scalar_tensor(other.cast<double>(), d);
  }
  if (PyFloat_Check(other.ptr()))
    return scalar_tensor(PyFloat_AS_DOUBLE(other.ptr()), is_floating(self->dtype) ? self->dtype : kDefaultFloat);
  // A numpy scalar (np.float32(2), np.int64(3), np.bool_): a number, as PyTorch treats it.
  const std::string_view tn = Py_TYPE(other.ptr())->tp_name;
  if (tn.starts_with("numpy.") && tn != "numpy.ndarray" && py::hasattr(other, "item")) {
    py::object v = other.attr("item")();
    if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) return to_operand(self, v);
  }
  return nullptr;
}

Shape shape_arg(py::handle h, const char* op) {
  if (PyLong_Check(h.ptr())) return {h.cast<int64_t>()};
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    Shape s;
    for (auto x : h) {
      if (!PyLong_Check(x.ptr()) && !py::hasattr(x, "__index__"))
        throw DtypeMismatch(str(op, ": shape entries must be ints, got ", type_name(x)));
      s.push_back(x.cast<int64_t>());
    }
    return s;
  }
  throw DtypeMismatch(str(op, ": expected a shape (tuple of ints), got ", type_name(h)));
}

Shape shape_args(const py::args& args, const char* op) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return shape_arg(args[0], op);
  return shape_arg(py::tuple(args), op);
}

std::vector<int64_t> dims_arg(py::handle h, const char* op) {
  if (h.is_none()) return {};
  return shape_arg(h, op);
}

int64_t int_arg(py::handle h, const char* op, const char* what) {
  LUCID_CHECK_DTYPE(PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr()), op, ": ", what, " must be an int, got ",
                    type_name(h));
  return h.cast<int64_t>();
}

DType dtype_arg(py::handle h, DType fallback) { return h.is_none() ? fallback : h.cast<DType>(); }

namespace {

// PyTorch's wording for two common autograd mistakes.
constexpr const char* kNonLeafRequiresGrad =
    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
    "subgraph that doesn't require differentiation use var_no_grad = var.detach().";
constexpr const char* kNonLeafGradWarning =
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.";

py::dtype numpy_dtype(DType d) {
  switch (d) {
    case DType::Bool: return py::dtype("bool");
    case DType::Int64: return py::dtype("int64");
    case DType::Float16: return py::dtype("float16");
    case DType::Float32: return py::dtype("float32");
    case DType::Float64: return py::dtype("float64");
    default: throw DtypeMismatch("numpy: bfloat16 has no numpy dtype; convert with .float() first");
  }
}

DType dtype_of_numpy(const py::dtype& dt) {
  char k = dt.kind();
  size_t s = dt.itemsize();
  if (k == 'b') return DType::Bool;
  if ((k == 'i' || k == 'u') && !(k == 'u' && s == 8)) return DType::Int64;  // widened on copy
  if (k == 'f' && s == 2) return DType::Float16;
  if (k == 'f' && s == 4) return DType::Float32;
  if (k == 'f' && s == 8) return DType::Float64;
  throw DtypeMismatch(str("from_numpy: unsupported numpy dtype ", std::string(py::str(dt)),
                          " (expected bool, int, float16, float32 or float64)"));
}

// Zero copy when numpy's dtype is one of ours with element-aligned strides, else one copy.
TensorImplPtr from_numpy(py::array arr) {
  DType d = dtype_of_numpy(arr.dtype());
  bool exact = arr.dtype().kind() != 'i' && arr.dtype().kind() != 'u' ? true : arr.dtype().itemsize() == 8 && arr.dtype().kind() == 'i';
  bool aligned = true;
  for (py::ssize_t i = 0; i < arr.ndim(); ++i)
    aligned = aligned && arr.strides(i) % py::ssize_t(itemsize(d)) == 0 && arr.strides(i) >= 0;
  if (!exact || !aligned) {
    arr = py::array(py::module_::import("numpy").attr("ascontiguousarray")(arr, numpy_dtype(d)));
  }
  auto t = std::make_shared<TensorImpl>();
  t->storage = std::make_shared<Storage>();
  py::object owner = arr;
  auto* keep = new py::object(owner);
  t->storage->data = std::shared_ptr<void>(const_cast<void*>(arr.data()), [keep](void*) {
    py::gil_scoped_acquire gil;
    delete keep;
  });
  int64_t extent = 0;
  for (py::ssize_t i = 0; i < arr.ndim(); ++i) {
    t->shape.push_back(arr.shape(i));
    t->strides.push_back(arr.strides(i) / py::ssize_t(itemsize(d)));
    extent += (arr.shape(i) - 1) * t->strides.back();
  }
  t->storage->nbytes = size_t(extent + 1) * itemsize(d);
  t->dtype = d;
  return t;
}

py::array to_numpy(const TensorImplPtr& t) {
  LUCID_CHECK(!(t->requires_grad), "numpy: can't call numpy() on a tensor that requires grad; use tensor.detach().numpy()");
  std::vector<py::ssize_t> shape(t->shape.begin(), t->shape.end()), strides;
  for (auto s : t->strides) strides.push_back(py::ssize_t(s * int64_t(itemsize(t->dtype))));
  auto* hold = new StoragePtr(t->storage);
  py::capsule base(hold, [](void* p) { delete static_cast<StoragePtr*>(p); });
  return py::array(numpy_dtype(t->dtype), shape, strides, t->raw(), base);
}

// pylucid.Size (a tuple subclass defined in Python, registered at import by _set_size_type);
// a plain tuple until then.
PyObject* g_size_type = nullptr;

py::object shape_tuple(const Shape& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
  if (!g_size_type) return t;
  PyObject* r = PyObject_CallOneArg(g_size_type, t.ptr());
  if (!r) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(r);
}

py::object py_scalar(const TensorImplPtr& t) {
  double v = item_as_double(t, "item");
  if (t->dtype == DType::Bool) return py::bool_(v != 0);
  if (t->dtype == DType::Int64) {
    int64_t i = 0;
    auto c = contiguous_raw(t);
    i = *c->data<int64_t>();
    return py::int_(i);
  }
  return py::float_(v);
}

void backward(const TensorImplPtr& self, py::object gradient, bool retain_graph, bool create_graph) {
  TensorImplPtr g;
  if (gradient.is_none()) {
    LUCID_CHECK(self->requires_grad, "element 0 of tensors does not require grad and does not have a grad_fn");
    LUCID_CHECK_SHAPE(self->numel() == 1, "grad can be implicitly created only for scalar outputs");
    g = full(self->shape, 1.0, self->dtype);
  } else {
    g = gradient.cast<TensorImplPtr>();
  }
  py::gil_scoped_release nogil;
  Engine::backward({self}, {g}, retain_graph, {}, create_graph);
}

// PyTorch refuses an integer (or bool) tensor to a negative Python-int power (the result would
// not be an integer); a tensor exponent is computed (1, -1 and 0 powers only survive).
void check_int_tensor_pow(const TensorImplPtr& a, py::handle b) {
  if (is_floating(a->dtype) || !py::isinstance<py::int_>(b) || py::isinstance<py::bool_>(b)) return;
  LUCID_CHECK(b.cast<py::int_>() >= py::int_(0), "Integers to negative integer powers are not allowed.");
}

// In-place arithmetic returns self; the operators (`method` null) give NotImplemented for an
// operand that is neither a Tensor nor a number, so Python can try the other side.
py::object inplace_op(const TensorImplPtr& a, py::handle b, BinaryFn f, const char* method = nullptr) {
  return binary_operand(a, b, f, false, method);
}

// t == x / t != x. A numpy array x is compared elementwise, as PyTorch's operators do (the other
// operators hand an array to numpy, whose result Tensor.__array_wrap__ brings back); without
// this, Python would fall back to identity and answer False.
py::object equality_operand(const TensorImplPtr& a, py::handle b, CompareOp op) {
  auto f = [op](const TensorImplPtr& x, const TensorImplPtr& y) { return compare(x, y, op); };
  py::object r = binary_operand(a, b, f);
  if (r.ptr() == Py_NotImplemented && py::isinstance<py::array>(b))
    return py::cast(f(a, from_numpy(py::reinterpret_borrow<py::array>(b))));
  return r;
}

}  // namespace

LUCID_BINDING(tensor, 0) {
  py::enum_<DType> dt(m, "dtype",
                      "The element type of a tensor (PyTorch's torch.dtype): pylucid.bool, int64, float16, "
                      "bfloat16, float32, float64; `name` is its name and `value` its integer code.");
  dt.value("bool", DType::Bool)
      .value("int64", DType::Int64)
      .value("float16", DType::Float16)
      .value("bfloat16", DType::BFloat16)
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .def("__repr__", [](DType d) { return std::string("pylucid.") + dtype_name(d); })
      .def("__str__", [](DType d) { return std::string("pylucid.") + dtype_name(d); })
      .def_property_readonly("is_floating_point", [](DType d) { return is_floating(d); },
                             "True for float16, bfloat16, float32 and float64 (the dtypes that can require grad).")
      .def_property_readonly("itemsize", [](DType d) { return itemsize(d); },
                             "Bytes per element (1 for bool, 2 for float16/bfloat16, 4 for float32, 8 for "
                             "int64/float64).");
  // pybind11 makes the enum's `name` and `value` properties without a docstring; give them one.
  dt.attr("__dict__")["name"].attr("__doc__") = "The dtype's name without the module, e.g. 'float32'.";
  dt.attr("__dict__")["value"].attr("__doc__") =
      "The dtype's integer code in the C++ DType enum (bool 0, int64 1, float16 2, bfloat16 3, float32 4, "
      "float64 5), not PyTorch's numbering.";
  m.def("promote_types", &promote_types);
  m.def("_numpy_dtype", [](DType d) -> py::object { return numpy_dtype(d); }, py::arg("dtype"),
        "numpy's dtype (a numpy.dtype) for a pylucid dtype; bfloat16 has none.");

  py::class_<TensorImpl, TensorImplPtr> T(m, "Tensor",
      "A strided n-d array of one dtype on shared storage, with autograd fields (requires_grad, grad, "
      "grad_fn). Create tensors with pylucid.tensor, zeros, randn, from_numpy, ...; Tensor(data, "
      "requires_grad) makes a leaf sharing data's memory.");
  T.def(py::init([](const TensorImplPtr& data, bool requires_grad) {
          auto t = detach(data);
          if (requires_grad)
            LUCID_CHECK_DTYPE(is_floating(t->dtype), "Parameter: only floating tensors can require grad, got ", dtype_name(t->dtype));
          t->requires_grad = requires_grad;
          return t;
        }),
        py::arg("data"), py::arg("requires_grad") = false)
      .def_property_readonly("shape", [](const TensorImpl& t) { return shape_tuple(t.shape); },
          "The size of each dim as a pylucid.Size (a tuple of ints; Size([]) for a 0-d tensor), as PyTorch's Tensor.shape.")
      .def_property_readonly("dtype", [](const TensorImpl& t) { return t.dtype; },
          "The element type, a pylucid.dtype.")
      .def_property_readonly("ndim", [](const TensorImpl& t) { return t.ndim(); },
          "The number of dims (0 for a scalar tensor); same as dim().")
      .def("dim", [](const TensorImpl& t) { return t.ndim(); },
          "The number of dims (0 for a scalar tensor); same as the ndim property.")
      .def("numel", [](const TensorImpl& t) { return t.numel(); },
          "The number of elements, the product of the shape (1 for a 0-d tensor, 0 when a dim is 0).")
      .def("stride", [](const TensorImpl& t) { return py::tuple(py::cast(t.strides)); },
          "The step between neighbouring elements of each dim, in elements (not bytes), a tuple of ints; 0 along "
          "broadcast (expanded) dims.")
      .def("storage_offset", [](const TensorImpl& t) { return t.offset; },
          "Where the first element sits in the shared storage, in elements (nonzero for views such as x[1:]).")
      .def("element_size", [](const TensorImpl& t) { return itemsize(t.dtype); },
          "Bytes per element (dtype.itemsize).")
      .def("data_ptr", [](const TensorImpl& t) { return reinterpret_cast<uintptr_t>(t.raw()); },
          "The address of the first element as an int (storage start plus storage_offset * element_size); "
          "views of one storage can be compared by it.")
      .def("_storage_nbytes", [](const TensorImpl& t) { return t.storage ? t.storage->nbytes : size_t(0); },
          "The size in bytes of the whole storage this tensor views (Tensor.untyped_storage().nbytes()).")
      .def("is_contiguous", &TensorImpl::is_contiguous,
          "True when the elements are laid out in row-major order without gaps (size-1 dims' strides are ignored, "
          "as in PyTorch).")
      .def_property_readonly("_version", [](const TensorImpl& t) { return t.version(); })
      .def_property_readonly("is_leaf", &TensorImpl::is_leaf,
          "True when the tensor has no grad_fn, as tensors created by the user and every tensor that does not "
          "require grad are. Only leaves get .grad filled by backward (unless retain_grad() was called).")
      .def_property(
          "requires_grad", [](const TensorImpl& t) { return t.requires_grad; },
          [](TensorImpl& t, bool on) {
            LUCID_CHECK(t.is_leaf() || on, kNonLeafRequiresGrad);
            LUCID_CHECK_DTYPE(!on || is_floating(t.dtype), "only Tensors of floating point dtype can require gradients");
            t.requires_grad = on;
          },
          "Whether autograd records operations on this tensor and computes its gradient. Settable on leaves "
          "(floating dtypes only); a non-leaf result requires grad when any input does.")
      .def("requires_grad_", [](const TensorImplPtr& t, bool on) {
            LUCID_CHECK(t->is_leaf() || on, kNonLeafRequiresGrad);
            LUCID_CHECK_DTYPE(!on || is_floating(t->dtype), "only Tensors of floating point dtype can require gradients");
            t->requires_grad = on;
            return t;
          }, py::arg("requires_grad") = true,
          "Sets requires_grad in place and returns self (floating leaves only; a non-leaf can only be set "
          "to True, which it already is).")
      .def_property(
          "grad", [](const TensorImpl& t) {
            if (!t.is_leaf() && !t.retains_grad && !t.grad && PyErr_WarnEx(PyExc_UserWarning, kNonLeafGradWarning, 1) < 0)
              throw py::error_already_set();
            return t.grad;
          },
          [](TensorImpl& t, const OptTensor& og) {
            TensorImplPtr g = opt(og);
            if (g) {
              LUCID_CHECK_SHAPE(g->shape == t.shape, "grad: assigned grad of shape ", shape_str(g->shape),
                                " does not match tensor of shape ", shape_str(t.shape));
              LUCID_CHECK_DTYPE(g->dtype == t.dtype, "grad: assigned grad of dtype ", dtype_name(g->dtype),
                                " does not match tensor of dtype ", dtype_name(t.dtype));
            }
            t.grad = g;
          },
          "The gradient accumulated by backward (same shape and dtype as the tensor), or None before the first "
          "backward. Filled for leaves that require grad and for tensors after retain_grad(); assignable "
          "(a tensor of the same shape and dtype, or None).")
      .def("retain_grad", &retain_grad,
          "Makes backward fill .grad of this non-leaf tensor too (summed over the calls, as for leaves); a "
          "no-op for leaves. Raises if the tensor does not require grad.")
      .def_property_readonly("retains_grad", [](const TensorImpl& t) { return t.retains_grad; },
          "True for a non-leaf tensor after retain_grad(), whose .grad backward then fills; False for leaves.")
      .def("backward", &backward, py::arg("gradient") = py::none(), py::arg("retain_graph") = false,
           py::arg("create_graph") = false)
      .def("detach", &detach,
          "A new leaf sharing this tensor's storage and version counter, with no grad_fn and requires_grad=False; "
          "in-place changes to either are seen by both (and by autograd's saved-tensor checks).")
      .def("detach_", &detach_,
          "Detaches this tensor from the graph in place (drops grad_fn, sets requires_grad=False, making it "
          "a leaf) and returns self.")
      .def_property(
          "data", &detach,
          [](TensorImpl& t, const TensorImplPtr& src) {
            // PyTorch's `x.data = y`: x now views y's storage (shape and dtype too), keeping its
            // own autograd fields; what x's graph saved is untouched.
            LUCID_CHECK_DTYPE(!t.requires_grad || is_floating(src->dtype),
                              "data: a tensor that requires grad cannot take data of dtype ", dtype_name(src->dtype));
            t.storage = src->storage;
            t.shape = src->shape;
            t.strides = src->strides;
            t.offset = src->offset;
            t.dtype = src->dtype;
          },
          "A detached alias of this tensor (shares storage, requires_grad=False, no grad_fn); assigning a "
          "tensor makes this tensor view that tensor's data instead, keeping its requires_grad and grad.")
      .def("numpy", &to_numpy,
          "A numpy array sharing this tensor's memory (no copy, same strides). Raises for a tensor that requires "
          "grad (use detach().numpy()) and for bfloat16, which numpy has no dtype for.")
      .def("item", &py_scalar,
          "The value of a one-element tensor as a Python bool, int or float (by dtype); raises for any other size.")
      .def("__bool__", [](const TensorImplPtr& t) { return item_as_double(t, "bool") != 0; })
      .def("__float__", [](const TensorImplPtr& t) { return item_as_double(t, "float"); })
      .def("__int__", [](const TensorImplPtr& t) -> py::object {
            // int64 goes through item() so values beyond 2^53 stay exact; NaN/inf raise as int() does.
            if (t->dtype == DType::Int64) return py_scalar(t);
            if (t->dtype == DType::Bool) return py::int_(item_as_double(t, "int") != 0 ? 1 : 0);
            return py::int_(py::float_(item_as_double(t, "int")));
          })
      .def("__index__", [](const TensorImplPtr& t) -> py::object {
            LUCID_CHECK_DTYPE((t->dtype == DType::Int64 || t->dtype == DType::Bool) && t->numel() == 1,
                              "__index__: only integer tensors of a single element can be converted to an index, "
                              "got dtype ", dtype_name(t->dtype), " and shape ", shape_str(t->shape));
            if (t->dtype == DType::Bool) return py::int_(item_as_double(t, "__index__") != 0 ? 1 : 0);
            return py_scalar(t);
          })
      .def("__len__", [](const TensorImplPtr& t) {
            LUCID_CHECK_DTYPE(t->ndim() > 0, "len: len() of a 0-d tensor");  // a TypeError, as PyTorch
            return t->shape[0];
          })
      .def("__add__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &add); })
      .def("__radd__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &add, true); })
      .def("__sub__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &sub); })
      .def("__rsub__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &sub, true); })
      .def("__mul__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &mul); })
      .def("__rmul__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &mul, true); })
      .def("__truediv__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &div); })
      .def("__rtruediv__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &div, true); })
      .def("__pow__", [](const TensorImplPtr& a, py::handle b) {
        check_int_tensor_pow(a, b);
        return binary_operand(a, b, &pow);
      })
      .def("__rpow__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, &pow, true); })
      .def("__iadd__", [](const TensorImplPtr& a, py::handle b) { return inplace_op(a, b, [](const TensorImplPtr& x, const TensorImplPtr& y) { return add_(x, y); }); })
      .def("__isub__", [](const TensorImplPtr& a, py::handle b) { return inplace_op(a, b, &sub_); })
      .def("__imul__", [](const TensorImplPtr& a, py::handle b) { return inplace_op(a, b, &mul_); })
      .def("__itruediv__", [](const TensorImplPtr& a, py::handle b) { return inplace_op(a, b, &div_); })
      .def("__eq__", [](const TensorImplPtr& a, py::handle b) { return equality_operand(a, b, CompareOp::Eq); })
      .def("__ne__", [](const TensorImplPtr& a, py::handle b) { return equality_operand(a, b, CompareOp::Ne); })
      .def("__lt__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, [](const TensorImplPtr& x, const TensorImplPtr& y) { return compare(x, y, CompareOp::Lt); }); })
      .def("__le__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, [](const TensorImplPtr& x, const TensorImplPtr& y) { return compare(x, y, CompareOp::Le); }); })
      .def("__gt__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, [](const TensorImplPtr& x, const TensorImplPtr& y) { return compare(x, y, CompareOp::Gt); }); })
      .def("__ge__", [](const TensorImplPtr& a, py::handle b) { return binary_operand(a, b, [](const TensorImplPtr& x, const TensorImplPtr& y) { return compare(x, y, CompareOp::Ge); }); })
      .def("__hash__", [](const TensorImplPtr& t) { return reinterpret_cast<intptr_t>(t.get()); })
      .def("add_", [](const TensorImplPtr& a, py::handle b, double alpha) {
            auto o = to_operand(a, b);
            LUCID_CHECK_DTYPE(o != nullptr, "add_: expected a Tensor or a number, got ",
                              type_name(b));
            return add_(a, o, alpha);
          }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1.0,
          "self += alpha * other in place (other a Tensor or number, broadcast to self's shape; its result "
          "dtype must cast to self's) and returns self. Under autograd it is recorded as PyTorch records it "
          "(refused on a leaf that requires grad).")
      .def("sub_", [](const TensorImplPtr& a, py::handle b, double alpha) -> py::object {
            if (alpha == 1.0) return inplace_op(a, b, &sub_, "sub_");
            // PyTorch's sub_ with alpha is add_ with -alpha (the same rounding).
            auto o = to_operand(a, b);
            LUCID_CHECK_DTYPE(o != nullptr, "sub_: expected a Tensor or a number, got ", type_name(b));
            return py::cast(add_(a, o, -alpha));
          }, py::arg("other"), py::kw_only(), py::arg("alpha") = 1.0,
           "self -= alpha * other in place (a Tensor or number, broadcast to self's shape) and returns self; "
           "recorded by autograd (refused on a leaf that requires grad).")
      .def("mul_", [](const TensorImplPtr& a, py::handle b) { return inplace_op(a, b, &mul_, "mul_"); },
           "self *= other in place (a Tensor or number, broadcast to self's shape) and returns self; recorded "
           "by autograd (refused on a leaf that requires grad).")
      .def("div_", [](const TensorImplPtr& a, py::handle b) { return inplace_op(a, b, &div_, "div_"); },
           "self /= other in place (true division: self must be floating; other broadcast to self's shape) "
           "and returns self; recorded by autograd (refused on a leaf that requires grad).")
      .def("copy_", [](const TensorImplPtr& a, const TensorImplPtr& b) { return copy_(a, b); },
          "Copies src (broadcast to this shape, converted to this dtype) into this tensor in place and returns "
          "it. Recorded by autograd: the gradient flows to src (refused on a leaf that requires grad).")
      .def("fill_", [](const TensorImplPtr& a, double v) { return fill_(a, v); },
          "Sets every element to value (converted to this dtype) in place and returns self; the old value's "
          "history is dropped (refused on a leaf that requires grad while grad mode is on).")
      .def("zero_", [](const TensorImplPtr& a) { return fill_(a, 0.0); },
          "Sets every element to zero in place and returns self; the old value's history is dropped (refused on "
          "a leaf that requires grad while grad mode is on).");

  m.def("add", [](const TensorImplPtr& a, py::handle b) { return function_op(a, b, &add, "add"); },
        py::arg("input"), py::arg("other"));
  m.def("sub", [](const TensorImplPtr& a, py::handle b) { return function_op(a, b, &sub, "sub"); },
        py::arg("input"), py::arg("other"));
  m.def("mul", [](const TensorImplPtr& a, py::handle b) { return function_op(a, b, &mul, "mul"); },
        py::arg("input"), py::arg("other"));
  m.def("div", [](const TensorImplPtr& a, py::handle b) { return function_op(a, b, &div, "div"); },
        py::arg("input"), py::arg("other"));
  m.def("pow", [](const TensorImplPtr& a, py::handle b) {
          check_int_tensor_pow(a, b);
          return function_op(a, b, &pow, "pow");
        },
        py::arg("input"), py::arg("other"));
  m.def("maximum", [](const TensorImplPtr& a, const TensorImplPtr& b) { KeepLayout keep; return maximum(a, b); });
  m.def("_inplace_records", [](const TensorImplPtr& x, const std::vector<TensorImplPtr>& others, const std::string& op) {
          bool r = inplace_records(x, {}, op.c_str());
          for (const auto& o : others) r = r || inplace_records(x, {o}, op.c_str());
          return r;
        }, py::arg("input"), py::arg("others"), py::arg("op"),
        "Whether an in-place op on input (with these other operands) must be recorded by autograd; raises "
        "for a leaf that requires grad under grad mode.");
  m.def("_rebase_inplace", [](const TensorImplPtr& x, const TensorImplPtr& r, const std::string& op) {
          return rebase_inplace(x, r, op.c_str());
        }, py::arg("input"), py::arg("result"), py::arg("op"),
        "Writes result (input's new value, computed out of place) into input and moves input's autograd "
        "history onto result's node, as PyTorch's in-place ops do; returns input.");
  m.def("minimum", [](const TensorImplPtr& a, const TensorImplPtr& b) { KeepLayout keep; return minimum(a, b); });
  m.def("result_type", [](const TensorImplPtr& a, const TensorImplPtr& b) { return result_type(a, b); });

  m.def("_set_size_type", [](py::handle type) {
    LUCID_CHECK_DTYPE(PyType_Check(type.ptr()) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type.ptr()), &PyTuple_Type),
                      "_set_size_type: expected a subclass of tuple, got ", type_name(type));
    Py_XDECREF(g_size_type);
    g_size_type = type.inc_ref().ptr();
  });
  m.def("_from_numpy", &from_numpy);
  m.def("_empty", [](py::handle shape, py::handle dtype) { return empty(shape_arg(shape, "empty"), dtype_arg(dtype, kDefaultFloat)); });
  m.def("_full", [](py::handle shape, double v, py::handle dtype) { return full(shape_arg(shape, "full"), v, dtype_arg(dtype, kDefaultFloat)); });
  m.def("_arange", [](double a, double b, double s, DType d) { return arange(a, b, s, d); });
  m.def("_linspace", [](double a, double b, int64_t n, DType d) { return linspace(a, b, n, d); });

  // grad mode and autocast state (the Python context managers save and restore these)
  m.def("is_grad_enabled", &GradMode::is_enabled);
  m.def("_set_grad_enabled", &GradMode::set_enabled);
  m.def("_autocast_state", []() { return py::make_tuple(autocast_state().enabled, autocast_state().dtype); });
  m.def("_set_autocast_state", [](bool on, DType d) {
    LUCID_CHECK_DTYPE(d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32,
                      "autocast: dtype must be float16 or bfloat16, got ", dtype_name(d));
    autocast_state().enabled = on;
    autocast_state().dtype = d;
  });
}

}  // namespace lucid::bindings
