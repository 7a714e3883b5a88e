// FuncOp<Derived, N_IN>: the CRTP base of every op's backward node.
// It owns N_IN saved-input slots with the version each had when saved; before Derived::apply
// runs it checks that no saved tensor was modified in place and that the slots were not freed
// by an earlier backward. Derived provides:
//   static const OpSchema& schema_v1;   const char* name() const;
//   std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);  // one grad per input
// and, for double backward, apply_graph(grad_out): the same gradients written with
// differentiable ops (or a fused op with its own node), run when the engine has grad mode on
// (create_graph=True). A node without apply_graph raises there if anything needs a graph.
#pragma once
#include <array>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/tensor_grad.h"
#include "core/error.h"

namespace lucid {

template <class Derived, size_t N_IN>
struct FuncOp : Node {
  std::array<TensorImplPtr, N_IN> saved_;
  std::array<uint64_t, N_IN> saved_version_{};
  bool released_ = false;

  const OpSchema* schema() const override { return &Derived::schema_v1; }
  ~FuncOp() override {
    for (auto& s : saved_) defer_release(s);
  }

  std::array<bool, N_IN> saved_is_output_{};

  void save(size_t slot, const TensorImplPtr& t) {
    saved_[slot] = t;
    saved_version_[slot] = t ? t->version() : 0;
  }
  // Saves this node's own output (detached, so the node does not keep itself alive).
  void save_output(size_t slot, const TensorImplPtr& out) {
    save(slot, detach(out));
    saved_is_output_[slot] = true;
  }
  // Wires edges to the N_IN inputs (in order).
  void set_inputs(const std::array<TensorImplPtr, N_IN>& inputs) {
    next_edges.resize(N_IN);
    for (size_t i = 0; i < N_IN; ++i) next_edges[i] = inputs[i] ? gradient_edge(inputs[i]) : Edge{};
  }
  bool needs_input_grad(size_t i) const { return i < next_edges.size() && next_edges[i].fn != nullptr; }

  std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) override {
    LUCID_CHECK(!released_, kFreedGraphMessage);
    for (size_t i = 0; i < N_IN; ++i) {
      const auto& s = saved_[i];
      if (s && s->version() != saved_version_[i])
        throw LucidError(modified_saved_message(*s, saved_is_output_[i] ? this : s->grad_fn.get(),
                                                saved_version_[i]));
    }
    Derived& d = *static_cast<Derived*>(this);
    // create_graph: the engine runs with grad mode on, and the backward must record its graph.
    // Only this branch differs from first order, which keeps its raw fused kernels.
    if (GradMode::is_enabled()) {
      if constexpr (requires { d.apply_graph(grad_out); }) {
        return d.apply_graph(grad_out);
      } else {
        bool needs_graph = grad_out && grad_out->requires_grad;
        for (auto& s : saved_) needs_graph = needs_graph || (s && s->requires_grad);
        LUCID_CHECK(!needs_graph, d.name(), ": double backward (create_graph=True) is not implemented");
        NoGradGuard no_grad;
        return d.apply(grad_out);
      }
    }
    return d.apply(grad_out);
  }
  // A saved output (stored detached to avoid a cycle) as a tensor whose grad_fn is this node
  // again, for apply_graph: the saved output's own derivative then flows through this node.
  TensorImplPtr saved_output(size_t slot) {
    const TensorImplPtr& s = saved_[slot];
    auto t = detach(s);
    t->requires_grad = true;
    t->grad_fn = this->shared_from_this();
    return t;
  }
  void release_saved() override {
    for (auto& s : saved_) s.reset();
    next_edges.clear();
    released_ = true;
  }
};

// True when an op on these inputs must record a node.
inline bool any_requires_grad(std::initializer_list<const TensorImplPtr*> ts) {
  if (!GradMode::is_enabled()) return false;
  for (auto* t : ts)
    if (*t && (*t)->requires_grad) return true;
  return false;
}

// Records `node` as the grad_fn of `out`, its output `output_nr` (out then requires grad).
inline void attach_node(const TensorImplPtr& out, NodePtr node, uint32_t output_nr = 0) {
  out->requires_grad = true;
  out->grad_fn = std::move(node);
  out->output_nr = output_nr;
}

}  // namespace lucid
