// Autograd extension points from Python: custom Function nodes (pylucid.autograd.Function),
// tensor and node hooks, anomaly mode. Python callables are held through py_fn(), whose
// deleter takes the GIL: nodes may be freed by the engine with the GIL released.
#include "autograd/engine.h"
#include "autograd/function_node.h"
#include "autograd/grad_mode.h"
#include "autograd/tensor_hooks.h"
#include "bindings/common.h"

namespace lucid::bindings {

namespace {

std::shared_ptr<py::object> py_fn(py::object f) {
  return std::shared_ptr<py::object>(new py::object(std::move(f)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

// A gradient returned by a Python hook: a Tensor replaces it, None keeps it.
TensorImplPtr hook_result(const py::object& r, const TensorImplPtr& g, const char* what) {
  if (r.is_none()) return nullptr;
  LUCID_CHECK_DTYPE(py::isinstance<TensorImpl>(r), what, ": a hook must return a Tensor or None, got ",
                    std::string(py::str(py::type::of(r).attr("__name__"))));
  auto t = r.cast<TensorImplPtr>();
  LUCID_CHECK_SHAPE(t->shape == g->shape, what, ": hook returned a gradient of shape ", shape_str(t->shape),
                    ", expected ", shape_str(g->shape));
  return t;
}

// Gradients as a hook sees them: a tuple with None for a missing one.
py::tuple grads_tuple(const std::vector<TensorImplPtr>& gs) {
  py::tuple t(gs.size());
  for (size_t i = 0; i < gs.size(); ++i) t[i] = gs[i] ? py::cast(gs[i]) : py::none();
  return t;
}

template <class V>
bool erase_id(V& v, uint64_t id) {
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it->first == id) {
      v.erase(it);
      return true;
    }
  return false;
}

}  // namespace

LUCID_BINDING(autograd_hooks, 2) {
  m.def("_make_function_nodes", [](const std::string& name, const std::vector<std::optional<TensorImplPtr>>& inputs,
                                  const std::vector<TensorImplPtr>& outputs, py::object backward, py::object release) {
    auto bw = py_fn(std::move(backward));
    auto rel = py_fn(std::move(release));
    std::vector<Edge> edges;
    for (auto& t : inputs) edges.push_back(t && *t ? gradient_edge(*t) : Edge{});
    for (size_t i = 0; i < outputs.size(); ++i) {
      auto node = std::make_shared<FunctionNode>();
      node->name_ = name;
      node->output_nr_ = i;
      node->next_edges = edges;
      node->backward_ = [bw](size_t nr, const TensorImplPtr& g) {
        py::gil_scoped_acquire gil;
        py::object r = (*bw)(nr, g);
        std::vector<TensorImplPtr> out;
        for (auto h : r) out.push_back(h.is_none() ? nullptr : h.cast<TensorImplPtr>());
        return out;
      };
      node->release_ = [rel]() {
        py::gil_scoped_acquire gil;
        (*rel)();
      };
      outputs[i]->requires_grad = true;
      outputs[i]->grad_fn = std::move(node);
      outputs[i]->output_nr = 0;
    }
  }, "Records one FunctionNode per output: backward(output_nr, grad) -> one gradient (or None) per input");

  m.def("_add_tensor_hook", [](const TensorImplPtr& t, py::object fn) -> uint64_t {
    LUCID_CHECK(t->requires_grad, "register_hook: cannot register a hook on a tensor that doesn't require gradient");
    auto f = py_fn(std::move(fn));
    const uint64_t id = next_hook_id();
    auto hook = [f](const TensorImplPtr& g) -> TensorImplPtr {
      py::gil_scoped_acquire gil;
      return hook_result((*f)(g), g, "register_hook");
    };
    if (t->grad_fn) add_tensor_pre_hook(t, id, hook);
    else t->hooks.emplace_back(id, hook);
    return id;
  });
  m.def("_remove_tensor_hook", [](const TensorImplPtr& t, uint64_t id) {
    if (!erase_id(t->hooks, id) && t->grad_fn) erase_id(t->grad_fn->output_pre_hooks(t->output_nr), id);
  });
  // Node hooks see one gradient per output (None for an output no gradient reached), as PyTorch.
  m.def("_add_node_prehook", [](const NodePtr& n, py::object fn) -> uint64_t {
    auto f = py_fn(std::move(fn));
    const uint64_t id = next_hook_id();
    n->node_pre_hooks.emplace_back(id, [f](std::vector<TensorImplPtr>& gout) {
      py::gil_scoped_acquire gil;
      py::object r = (*f)(grads_tuple(gout));
      if (r.is_none()) return;
      py::sequence s = r;
      LUCID_CHECK(py::len(s) == gout.size(), "register_prehook: the hook must return None or a tuple of ",
                  gout.size(), " gradients, got ", py::len(s));
      for (size_t i = 0; i < gout.size(); ++i)
        if (gout[i])
          if (auto t = hook_result(s[i], gout[i], "register_prehook")) gout[i] = t;
    });
    return id;
  });
  m.def("_add_node_hook", [](const NodePtr& n, py::object fn) -> uint64_t {
    auto f = py_fn(std::move(fn));
    const uint64_t id = next_hook_id();
    n->post_hooks.emplace_back(id, [f](std::vector<TensorImplPtr>& gin, const std::vector<TensorImplPtr>& gout) {
      py::gil_scoped_acquire gil;
      py::object r = (*f)(grads_tuple(gin), grads_tuple(gout));
      if (r.is_none()) return;
      py::sequence s = r;
      LUCID_CHECK(py::len(s) == gin.size(), "register_hook: the hook returned ", py::len(s),
                  " grad_inputs, expected ", gin.size());
      for (size_t i = 0; i < gin.size(); ++i) gin[i] = s[i].is_none() ? nullptr : s[i].cast<TensorImplPtr>();
    });
    return id;
  });
  m.def("_remove_node_hook", [](const NodePtr& n, uint64_t id) {
    if (!erase_id(n->node_pre_hooks, id)) erase_id(n->post_hooks, id);
  });

  m.def("_set_anomaly_enabled", [](bool on) {
    if (on && !AnomalyMode::trace_hook) {
      AnomalyMode::trace_hook = []() -> std::string {
        py::gil_scoped_acquire gil;
        try {
          py::object tb = py::module_::import("traceback");
          py::list frames = tb.attr("format_stack")();  // the last frames: the caller, not the runner
          const size_t n = py::len(frames), keep = 8;
          return py::str("").attr("join")(frames[py::slice(n > keep ? n - keep : 0, n, 1)]).cast<std::string>();
        } catch (py::error_already_set&) {
          return {};
        }
      };
    }
    AnomalyMode::set_enabled(on);
  });
  m.def("_is_anomaly_enabled", []() { return AnomalyMode::is_enabled(); });
}

}  // namespace lucid::bindings
