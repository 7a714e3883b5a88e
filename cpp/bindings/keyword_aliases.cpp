// numpy's keyword names on the bound functions and Tensor methods. PyTorch's argument parser
// takes `axis` for `dim` and `keepdims` for `keepdim` on every native function and method
// (torch.cumprod(x, axis=0), x.sum(axis=1, keepdims=True)). Each bound function and method whose
// signature names dim or keepdim gets one more overload, tried only when its own ones do not
// match: it renames those keywords and calls again, so ordinary calls pay nothing. Runs after
// every other binding (order 90); the Python-defined functions get the same from
// pylucid._numpy_kwargs.
#include <cstdlib>
#include <cstring>
#include <string>

#include "bindings/common.h"

namespace lucid::bindings {

namespace {

const char* numpy_keyword_alias(const std::string& key) {
  if (key == "axis") return "dim";
  if (key == "keepdims") return "keepdim";
  return nullptr;
}

// kwargs with numpy's names replaced (a name given both ways is left for the call to refuse).
py::dict renamed_keywords(const py::kwargs& kw, bool& changed) {
  py::dict out;
  changed = false;
  for (auto item : kw) {
    const std::string key = py::str(item.first);
    const char* to = numpy_keyword_alias(key);
    if (to && !kw.contains(to)) {
      out[to] = item.second;
      changed = true;
    } else {
      out[item.first] = item.second;
    }
  }
  return out;
}

// pybind11's TypeError for arguments no overload takes, with the overloads' signatures.
[[noreturn]] void throw_no_overload(const std::string& name, py::handle fn, const py::args& args,
                                    const py::kwargs& kw) {
  std::string msg = name + "(): incompatible function arguments. The following argument types are supported:";
  py::object doc = py::getattr(fn, "__doc__", py::none());
  if (!doc.is_none()) {
    const std::string d = py::str(doc);
    size_t start = 0;
    int n = 0;
    while (start < d.size()) {
      size_t end = d.find('\n', start);
      if (end == std::string::npos) end = d.size();
      std::string line = d.substr(start, end - start);
      const size_t dot = line.find(". ");
      if (dot != std::string::npos && dot > 0 && line.find_first_not_of("0123456789") == dot) line = line.substr(dot + 2);
      if (line.rfind(name + "(", 0) == 0 && line.find("*args, **kwargs") == std::string::npos)
        msg += "\n    " + std::to_string(++n) + ". " + line;
      start = end + 1;
    }
  }
  msg += "\n\nInvoked with: " + std::string(py::str(py::repr(args)));
  if (py::len(kw)) msg += ", kwargs: " + std::string(py::str(py::repr(kw)));
  throw py::type_error(msg);
}

bool names_dim_keyword(py::handle fn) {
  py::object doc = py::getattr(fn, "__doc__", py::none());
  if (doc.is_none()) return false;
  const std::string d = py::str(doc);
  return d.find(" dim: ") != std::string::npos || d.find("(dim: ") != std::string::npos ||
         d.find("keepdim: ") != std::string::npos;
}

bool is_bound_function(py::handle v) {
  PyObject* f = v.ptr();
  if (PyInstanceMethod_Check(f)) f = PyInstanceMethod_GET_FUNCTION(f);
  return PyCFunction_Check(f);  // the extension's module and class hold only pybind11 functions
}

// The overload would make pybind11 rewrite the docstring as "Overloaded function" with a
// (*args, **kwargs) entry; the function keeps the docstring (and so the stub) it had.
void restore_doc(py::handle fn, const std::string& doc) {
  PyObject* f = fn.ptr();
  if (PyInstanceMethod_Check(f)) f = PyInstanceMethod_GET_FUNCTION(f);
  auto* cf = reinterpret_cast<PyCFunctionObject*>(f);
  std::free(const_cast<char*>(cf->m_ml->ml_doc));  // pybind11 strdup'ed it
  cf->m_ml->ml_doc = strdup(doc.c_str());
}

std::string doc_of(py::handle fn) {
  py::object doc = py::getattr(fn, "__doc__", py::none());
  return doc.is_none() ? std::string() : std::string(py::str(doc));
}

void alias_module_function(py::module_& m, const std::string& name) {
  const std::string doc = doc_of(m.attr(name.c_str()));
  m.def(
      name.c_str(),
      [m, name](const py::args& args, const py::kwargs& kw) -> py::object {
        bool changed = false;
        py::dict renamed = renamed_keywords(kw, changed);
        py::object target = m.attr(name.c_str());
        if (!changed) throw_no_overload(name, target, args, kw);
        return target(*args, **renamed);
      });
  restore_doc(m.attr(name.c_str()), doc);
}

void alias_method(py::object cls, const std::string& name) {
  const std::string doc = doc_of(cls.attr(name.c_str()));
  py::cpp_function cf(
      [name](py::object self, const py::args& args, const py::kwargs& kw) -> py::object {
        bool changed = false;
        py::dict renamed = renamed_keywords(kw, changed);
        py::object target = self.attr(name.c_str());
        if (!changed) throw_no_overload(name, target, args, kw);
        return target(*args, **renamed);
      },
      py::name(name.c_str()), py::is_method(cls), py::sibling(py::getattr(cls, name.c_str(), py::none())));
  py::setattr(cls, name.c_str(), cf);
  restore_doc(cls.attr("__dict__")[name.c_str()], doc);
}

}  // namespace

LUCID_BINDING(keyword_aliases, 90) {
  std::vector<std::string> functions, methods;
  for (auto item : py::reinterpret_borrow<py::dict>(m.attr("__dict__"))) {
    const std::string name = py::str(item.first);
    if (name.rfind("__", 0) != 0 && is_bound_function(item.second) && names_dim_keyword(item.second))
      functions.push_back(name);
  }
  py::object cls = py::type::of<TensorImpl>();
  for (auto item : py::dict(cls.attr("__dict__"))) {  // a mappingproxy, copied
    const std::string name = py::str(item.first);
    if (name.rfind("__", 0) != 0 && is_bound_function(item.second) && names_dim_keyword(item.second))
      methods.push_back(name);
  }
  for (const auto& name : functions) alias_module_function(m, name);
  for (const auto& name : methods) alias_method(cls, name);
}

}  // namespace lucid::bindings
