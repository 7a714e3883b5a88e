// The _C extension: maps the core's typed errors to Python exceptions and runs every topic's
// bind function (registered by LUCID_BINDING in the other files of this folder).
#include <algorithm>

#include "bindings/common.h"
#include "core/error.h"

namespace lucid::bindings {

std::vector<std::pair<int, BindFn>>& binders() {
  static std::vector<std::pair<int, BindFn>> b;
  return b;
}

}  // namespace lucid::bindings

using namespace lucid;

PYBIND11_MODULE(_C, m) {
  m.doc() = "pylucid's C++ core";
  // LucidError is a RuntimeError; the specific errors also derive from the builtin a Python
  // caller would catch for that kind of mistake.
  static PyObject* lucid_error = PyErr_NewExceptionWithDoc("pylucid.LucidError", "Base of every pylucid error (a RuntimeError); the message names the op, what it got and what it expected.", PyExc_RuntimeError, nullptr);
  static PyObject* shape_mismatch = PyErr_NewExceptionWithDoc(
      "pylucid.ShapeMismatch", "Shapes that do not fit the op (also a ValueError).", py::make_tuple(py::handle(lucid_error), py::handle(PyExc_ValueError)).release().ptr(), nullptr);
  static PyObject* dtype_mismatch = PyErr_NewExceptionWithDoc(
      "pylucid.DtypeMismatch", "A dtype or argument type the op does not accept (also a TypeError).", py::make_tuple(py::handle(lucid_error), py::handle(PyExc_TypeError)).release().ptr(), nullptr);
  static PyObject* index_error = PyErr_NewExceptionWithDoc(
      "pylucid.IndexOutOfRange", "An index or dim outside its range (also an IndexError).", py::make_tuple(py::handle(lucid_error), py::handle(PyExc_IndexError)).release().ptr(), nullptr);
  m.attr("LucidError") = py::handle(lucid_error);
  m.attr("ShapeMismatch") = py::handle(shape_mismatch);
  m.attr("DtypeMismatch") = py::handle(dtype_mismatch);
  m.attr("IndexOutOfRange") = py::handle(index_error);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ShapeMismatch& e) {
      PyErr_SetString(shape_mismatch, e.what());
    } catch (const DtypeMismatch& e) {
      PyErr_SetString(dtype_mismatch, e.what());
    } catch (const IndexOutOfRange& e) {
      PyErr_SetString(index_error, e.what());
    } catch (const LucidError& e) {
      PyErr_SetString(lucid_error, e.what());
    } catch (const py::cast_error& e) {
      // An argument of the wrong Python type reached a binding that converts it itself.
      PyErr_SetString(dtype_mismatch, str("invalid argument: ", e.what()).c_str());
    }
  });
  auto& b = bindings::binders();
  std::stable_sort(b.begin(), b.end(), [](auto& x, auto& y) { return x.first < y.first; });
  for (auto& [order, fn] : b) fn(m);
}
