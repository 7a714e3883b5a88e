// Shared by the binding files (the only place pybind11 is included). Each topic file registers
// its bind function with LUCID_BINDING(topic) so module.cpp needs no edit when one is added.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor_impl.h"
#include "ops/op_table.h"

namespace py = pybind11;

// A Tensor argument never arrives as a null pointer: None is refused at conversion (TypeError
// naming the signature) instead of reaching an op. Optional tensor arguments are spelled
// std::optional<TensorImplPtr>, whose caster maps None to nullopt without asking this one.
namespace pybind11::detail {
template <>
struct type_caster<std::shared_ptr<lucid::TensorImpl>>
    : copyable_holder_caster<lucid::TensorImpl, std::shared_ptr<lucid::TensorImpl>> {
  bool load(handle src, bool convert) {
    if (src.is_none()) return false;
    return copyable_holder_caster<lucid::TensorImpl, std::shared_ptr<lucid::TensorImpl>>::load(src, convert);
  }
};
}  // namespace pybind11::detail

namespace lucid::bindings {

using OptTensor = std::optional<TensorImplPtr>;
inline TensorImplPtr opt(const OptTensor& t) { return t ? *t : nullptr; }

using BindFn = void (*)(py::module_&);
std::vector<std::pair<int, BindFn>>& binders();
struct Registrar {
  Registrar(int order, BindFn f) { binders().emplace_back(order, f); }
};
// `order` fixes the sequence (Tensor class first, then ops, then nodes).
#define LUCID_BINDING(name, order)                     \
  static void bind_##name(py::module_& m);               \
  static ::lucid::bindings::Registrar registrar_##name(order, &bind_##name); \
  static void bind_##name(py::module_& m)

// Python scalar or Tensor -> tensor operand for a binary op with `self` (PyTorch's rules for
// Python numbers: a float keeps a floating tensor's dtype, else becomes float32; an int keeps
// the tensor's dtype unless it is bool). Returns nullptr for an unsupported type.
TensorImplPtr to_operand(const TensorImplPtr& self, py::handle other);
// Shape from a tuple/list, or from *args of ints (reshape(2, 3) and reshape((2, 3))).
Shape shape_arg(py::handle h, const char* op);
Shape shape_args(const py::args& args, const char* op);
// Ints from an int, tuple/list of ints, or None (-> empty).
std::vector<int64_t> dims_arg(py::handle h, const char* op);
DType dtype_arg(py::handle h, DType fallback);
// A Python int (not a bool) as int64; else DtypeMismatch "<op>: <what> must be an int, got <type>".
int64_t int_arg(py::handle h, const char* op, const char* what);

// Runs `f` with the GIL released when `work` (elements touched) is large enough to repay the
// switch (~0.1 us), so other Python threads run while a kernel does.
constexpr int64_t kNoGilWork = 1 << 14;
template <class F>
auto maybe_nogil(int64_t work, F&& f) {
  if (work >= kNoGilWork) {
    py::gil_scoped_release nogil;
    return f();
  }
  return f();
}

// Adds (or overloads) a method of the Tensor class from any binding file:
//   def_method("exp", [](const TensorImplPtr& t) { return exp(t); });
template <class F, class... Extra>
void def_method(const char* name, F&& f, const Extra&... extra) {
  py::object cls = py::type::of<TensorImpl>();
  py::cpp_function cf(std::forward<F>(f), py::name(name), py::is_method(cls),
                      py::sibling(py::getattr(cls, name, py::none())), extra...);
  py::setattr(cls, name, cf);
}

// The Python type name of `h`, for error messages ("expected a Tensor, got str").
inline std::string type_name(py::handle h) { return py::str(py::type::of(h).attr("__name__")); }

// The Python side of a binary op on a Tensor `a` and an operand `b`: f(a, o) (reflected: f(o, a))
// with o = to_operand(a, b), the GIL released for large work. For any other b the operators
// (`name` null) return NotImplemented, so Python can try the other side; functions and named
// methods raise DtypeMismatch "<name>: expected a Tensor or a number<what>, got <type>".
// The result as a tensor; null only for an operator's (`name` null) foreign operand.
template <class F>
TensorImplPtr apply_operand(const TensorImplPtr& a, py::handle b, F&& f, bool reflected, const char* name,
                            const char* what) {
  auto o = to_operand(a, b);
  if (!o) {
    LUCID_CHECK_DTYPE(!name, name, ": expected a Tensor or a number", what, ", got ", type_name(b));
    return nullptr;
  }
  return maybe_nogil(std::max(a->numel(), o->numel()), [&] {
    KeepLayout keep;  // NOTE [elementwise output layout]
    return reflected ? f(o, a) : f(a, o);
  });
}

template <class F>
py::object binary_operand(const TensorImplPtr& a, py::handle b, F&& f, bool reflected = false,
                          const char* name = nullptr, const char* what = "") {
  auto r = apply_operand(a, b, std::forward<F>(f), reflected, name, what);
  if (!r) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(r);
}

// The module functions pylucid.add(input, other) etc.: like the operators, but an operand that is
// neither a Tensor nor a number raises instead of returning NotImplemented. Returns the tensor
// itself (no round trip through a Python object: this is the per-call fast path).
inline TensorImplPtr function_op(const TensorImplPtr& a, py::handle b, BinaryFn f, const char* name) {
  return apply_operand(a, b, f, false, name, " for other");
}

// Binds one function as both pylucid.<name>(input, ...) and the method Tensor.<name>(...), with one
// docstring; `extra` describes the arguments after input.
template <class F, class... Extra>
void def_function_and_method(py::module_& m, const char* name, F&& f, const char* doc, const Extra&... extra) {
  m.def(name, f, doc, py::arg("input").none(false), extra...);
  def_method(name, std::forward<F>(f), py::doc(doc), extra...);
}

}  // namespace lucid::bindings
