// Autograd from Python: Node (grad_fn) objects, OpSchema and the registry, the engine entry
// points behind Tensor.backward and pylucid.autograd.grad.
#include <cstdio>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "bindings/common.h"
#include "ops/select_k.h"

namespace lucid::bindings {

// The selecting nodes of ops/select_k.h, with PyTorch's saved attributes (reading a freed one
// raises PyTorch's error, as there).
template <SelectKind K>
void bind_select_node_class(py::module_& m, const char* name, const char* doc) {
  using N = SelectBackward<K>;
  py::class_<N, Node, std::shared_ptr<N>>(m, name, doc)
      .def_property_readonly("_saved_dim", [](const N& n) { return n.dim_; })
      .def_property_readonly("_saved_keepdim", [](const N& n) { return n.keepdim_; })
      .def_property_readonly("_saved_self_sym_sizes", [](const N& n) { return py::tuple(py::cast(n.in_shape_)); })
      .def_property_readonly("_saved_indices", [](const N& n) {
        LUCID_CHECK(!n.released_, kFreedGraphMessage);
        return n.indices_;
      });
}
template <SplitKind K>
void bind_split_node_class(py::module_& m, const char* name, const char* doc) {
  using N = EvenSplitBackward<K>;
  py::class_<N, Node, std::shared_ptr<N>>(m, name, doc)
      .def_property_readonly("_saved_self", [](const N& n) {
        LUCID_CHECK(!n.released_, kFreedGraphMessage);
        return n.saved_[0];
      })
      .def_property_readonly("_saved_result", [](const N& n) {
        LUCID_CHECK(!n.released_, kFreedGraphMessage);
        return n.saved_[1];
      });
}

LUCID_BINDING(autograd, 1) {
  py::enum_<AmpPolicy> amp(m, "AmpPolicy",
                           "What an op computes in under autocast: Promote (floating inputs run in the autocast "
                           "dtype), KeepInput (the input dtype), ForceFP32 (half inputs upcast to float32, "
                           "float32/float64 kept); `name` is the policy's name and `value` its integer code.");
  amp.value("Promote", AmpPolicy::Promote)
      .value("KeepInput", AmpPolicy::KeepInput)
      .value("ForceFP32", AmpPolicy::ForceFP32);
  // pybind11 makes the enum's `name` and `value` properties without a docstring; give them one.
  amp.attr("__dict__")["name"].attr("__doc__") = "The policy's name, 'Promote', 'KeepInput' or 'ForceFP32'.";
  amp.attr("__dict__")["value"].attr("__doc__") =
      "The policy's integer code in the C++ AmpPolicy enum (Promote 0, KeepInput 1, ForceFP32 2).";

  py::class_<OpSchema>(m, "OpSchema", "What an op declares once: name, version, amp_policy (its behaviour under autocast) and produces_grad (whether it records a backward node).")
      .def_property_readonly("name", [](const OpSchema& s) { return std::string(s.name); },
                             "The op's registered name, e.g. 'rms_norm' (the key of pylucid.ops.schema).")
      .def_readonly("version", &OpSchema::version,
                    "The schema's version, an int (1 for every op today, their nodes' schema_v1).")
      .def_readonly("amp_policy", &OpSchema::amp_policy,
                    "The op's AmpPolicy, which picks the dtype it computes in under autocast.")
      .def_readonly("produces_grad", &OpSchema::produces_grad,
                    "Whether the op records a backward node when an input requires grad (False for "
                    "non-differentiable ops such as comparisons).")
      .def("__eq__", [](const OpSchema& a, const OpSchema& b) {
        return std::string(a.name) == b.name && a.version == b.version && a.amp_policy == b.amp_policy &&
               a.produces_grad == b.produces_grad;
      })
      .def("__repr__", [](const OpSchema& s) {
        return str("OpSchema(name='", s.name, "', version=", s.version, ", amp_policy=",
                   amp_policy_name(s.amp_policy), ", produces_grad=", s.produces_grad ? "True" : "False", ")");
      });

  m.def("_schema", [](const std::string& name) {
    const OpSchema* s = find_schema(name);
    LUCID_CHECK(s, "schema: no op named '", name, "' is registered");
    return *s;
  });
  m.def("_schemas", []() { return all_schemas(); });

  py::class_<Node, NodePtr>(m, "Node", "A backward node of the autograd graph (a tensor's grad_fn): name(), schema, next_functions.")
      .def("name", &Node::name, "The node's class name, e.g. 'MulBackward' or 'AccumulateGrad'.")
      .def_property_readonly("schema", [](const Node& n) -> py::object {
        return n.schema() ? py::cast(*n.schema()) : py::none();
      }, "A copy of the OpSchema of the op that recorded this node; None for AccumulateGrad.")
      .def_property_readonly("next_functions", [](const Node& n) {
        py::list l;
        for (auto& e : n.next_edges) l.append(py::make_tuple(e.fn ? py::cast(e.fn) : py::none(), e.input_nr));
        return py::tuple(l);
      }, "One (node, input_nr) pair per input of the op, in input order, as in PyTorch. The node is the "
         "input's grad_fn, an AccumulateGrad for a leaf that requires grad, or None for an input that needs "
         "no gradient; input_nr says which output of that node the input is (the index of a piece made by "
         "split, chunk or unbind, else 0). Empty once a backward without "
         "retain_graph has freed the graph.")
      .def("__repr__", [](const Node& n) {
        // As PyTorch prints a grad_fn: <AddBackward0 object at 0x...> (PyTorch numbers each
        // overload's node; the first overload, 0, is the one toy programs meet).
        std::string name = n.name();
        const std::string suffix = "Backward";
        if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
          name += "0";
        char addr[32];
        std::snprintf(addr, sizeof(addr), "%p", static_cast<const void*>(&n));
        return str("<", name, " object at ", addr, ">");
      });

  // PyTorch gives each kind of node its own class (type(y.grad_fn).__name__ == 'MulBackward0').
  // Here every node is one C++ type; the Python side gives a node object a subclass of Node named
  // as PyTorch names it (pylucid._node_class). Such a subclass adds no state (__slots__ = ()), and
  // takes Node's deallocator and GC slots, so that an instance may switch to it by __class__
  // assignment.
  m.def(
      "_node_subclass",
      [](const std::string& name) {
        py::handle base = py::type::of<Node>();
        py::handle meta = reinterpret_cast<PyObject*>(Py_TYPE(base.ptr()));
        py::dict ns;
        ns["__slots__"] = py::tuple();
        ns["__module__"] = "builtins";  // printed as PyTorch's: <class 'MulBackward0'>
        ns["__doc__"] = py::none();
        py::object cls = meta(name, py::make_tuple(base), ns);
        auto* t = reinterpret_cast<PyTypeObject*>(cls.ptr());
        const auto* b = reinterpret_cast<const PyTypeObject*>(base.ptr());
        t->tp_dealloc = b->tp_dealloc;
        t->tp_free = b->tp_free;
        t->tp_traverse = b->tp_traverse;
        t->tp_clear = b->tp_clear;
        t->tp_flags = (t->tp_flags & ~Py_TPFLAGS_HAVE_GC) | (b->tp_flags & Py_TPFLAGS_HAVE_GC);
        PyType_Modified(t);
        return cls;
      },
      py::arg("name"));

  // Bound here rather than with the rest of Tensor so that its signature names the Node class.
  py::class_<TensorImpl, TensorImplPtr>(m.attr("Tensor"))
      .def_property_readonly("grad_fn", [](const TensorImpl& t) { return t.grad_fn; },
                             "The backward node that produced this tensor; None for a leaf.")
      .def_property_readonly("output_nr", [](const TensorImpl& t) { return t.output_nr; },
                             "Which output of grad_fn this tensor is: the index of a piece made by split, chunk or "
                             "unbind, else 0.");

  py::class_<AccumulateGrad, Node, std::shared_ptr<AccumulateGrad>>(m, "AccumulateGrad", "The node at a leaf: adds the incoming gradient into variable.grad.")
      .def_readonly("variable", &AccumulateGrad::variable,
                    "The leaf tensor whose .grad this node accumulates into (a strong reference).");

  // Nodes with their own Python class, so type(t.grad_fn).__name__ is PyTorch's name too.
  const char* to_index = "the gradient goes to the returned index.";
  bind_select_node_class<SelectKind::MaxDim>(m, "MaxBackward0", to_index);
  bind_select_node_class<SelectKind::MinDim>(m, "MinBackward0", to_index);
  bind_select_node_class<SelectKind::MedianDim>(m, "MedianBackward1", to_index);
  bind_select_node_class<SelectKind::NanmedianDim>(m, "NanmedianBackward1", to_index);
  bind_select_node_class<SelectKind::Kthvalue>(m, "KthvalueBackward0", to_index);
  bind_select_node_class<SelectKind::Mode>(m, "ModeBackward0", to_index);
  const char* split = "the gradient is split evenly among the elements equal to the result (the NaNs if it is NaN).";
  bind_split_node_class<SplitKind::Max>(m, "MaxBackward1", split);
  bind_split_node_class<SplitKind::Min>(m, "MinBackward1", split);
  bind_split_node_class<SplitKind::Median>(m, "MedianBackward0", split);
  bind_split_node_class<SplitKind::Nanmedian>(m, "NanmedianBackward0", split);
  const char* split_ties = "the gradient is split evenly among the elements equal to the result.";
  bind_split_node_class<SplitKind::Amax>(m, "AmaxBackward0", split_ties);
  bind_split_node_class<SplitKind::Amin>(m, "AminBackward0", split_ties);

  m.def("_accumulate_grad", [](const TensorImplPtr& t, const TensorImplPtr& g, bool create_graph) {
    GradModeGuard mode(create_graph);
    LUCID_CHECK_SHAPE(g->shape == t->shape, "backward: gradient of shape ", shape_str(g->shape),
                      " does not match input of shape ", shape_str(t->shape));
    accumulate_grad(*t, g);
  }, "t.grad += g (used by backward(inputs=...)); records the sum under grad mode");
  m.def("_live_counts", []() {
    return py::make_tuple(TensorImpl::live.load(), Node::live.load());
  }, "(live TensorImpl objects, live autograd nodes) in this process");
  m.def("_run_backward", [](std::vector<TensorImplPtr> roots, std::vector<TensorImplPtr> grads,
                           bool retain_graph, std::vector<TensorImplPtr> inputs, bool create_graph) {
    py::gil_scoped_release nogil;
    return Engine::backward(roots, grads, retain_graph, inputs, create_graph);
  }, py::arg("roots"), py::arg("grads"), py::arg("retain_graph"), py::arg("inputs"),
     py::arg("create_graph") = false);
}

}  // namespace lucid::bindings
