// AutogradNode<Derived, N_IN> (alias FuncOp): the CRTP base of every op's backward node.
// It owns N_IN saved-input slots with the version each had when saved; before Derived::apply
// runs it checks that no saved tensor was modified in place and that the slots were not freed
// by an earlier backward. Derived provides:
//   static const OpSchema& schema_v1;   const char* name() const;
//   std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);  // one grad per input
#pragma once
#include <array>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/error.h"

namespace lucid {

template <class Derived, size_t N_IN>
struct AutogradNode : Node {
  static constexpr size_t num_inputs = N_IN;
  std::array<TensorImplPtr, N_IN> saved_;
  std::array<uint64_t, N_IN> saved_version_{};
  bool released_ = false;

  const OpSchema* schema() const override { return &Derived::schema_v1; }

  void save(size_t slot, const TensorImplPtr& t) {
    saved_[slot] = t;
    saved_version_[slot] = t ? t->version() : 0;
  }
  // Wires edges to the N_IN inputs (in order).
  void set_inputs(const std::array<TensorImplPtr, N_IN>& inputs) {
    next_edges.resize(N_IN);
    for (size_t i = 0; i < N_IN; ++i) next_edges[i] = inputs[i] ? gradient_edge(inputs[i]) : Edge{};
  }
  bool needs_input_grad(size_t i) const { return i < next_edges.size() && next_edges[i].fn != nullptr; }

  std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) override {
    LUCID_CHECK(!released_, static_cast<Derived*>(this)->name(),
                ": trying to backward through the graph a second time (or to use saved tensors "
                "after they were freed); pass retain_graph=True to the first backward");
    for (size_t i = 0; i < N_IN; ++i)
      LUCID_CHECK(!saved_[i] || saved_[i]->version() == saved_version_[i],
                  static_cast<Derived*>(this)->name(), ": saved input ", i,
                  " was modified by an in-place operation (version ", saved_[i]->version(),
                  ", saved at version ", saved_version_[i], ")");
    return static_cast<Derived*>(this)->apply(grad_out);
  }
  void release_saved() override {
    for (auto& s : saved_) s.reset();
    next_edges.clear();
    released_ = true;
  }
};

template <class Derived, size_t N_IN>
using FuncOp = AutogradNode<Derived, N_IN>;

// True when an op on these inputs must record a node.
inline bool any_requires_grad(std::initializer_list<const TensorImplPtr*> ts) {
  if (!GradMode::is_enabled()) return false;
  for (auto* t : ts)
    if (*t && (*t)->requires_grad) return true;
  return false;
}

// Records `node` as the grad_fn of `out` (which then requires grad).
inline void attach_node(const TensorImplPtr& out, NodePtr node) {
  out->requires_grad = true;
  out->grad_fn = std::move(node);
}

}  // namespace lucid
