// Node: one step of the backward graph. Every op output has its own node (single output), so
// `run(grad_out)` maps the gradient of that output to one gradient per next edge, in input
// order (nullptr where an input needs none). AccumulateGrad is the node at a leaf.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/op_schema.h"
#include "core/tensor_impl.h"

namespace lucid {

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct Edge {
  NodePtr fn;  // null: this input needs no gradient
  uint32_t input_nr = 0;
};

struct Node {
  std::vector<Edge> next_edges;
  uint64_t seq_nr;
  // Called with the summed gradient of this node's output before it runs (retain_grad).
  std::vector<std::function<void(const TensorImplPtr&)>> pre_hooks;

  static inline std::atomic<int64_t> live{0};  // live nodes, for leak tests
  Node();
  virtual ~Node() { live.fetch_sub(1, std::memory_order_relaxed); }
  virtual const char* name() const = 0;
  virtual const OpSchema* schema() const { return nullptr; }
  virtual std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) = 0;
  // Frees saved state after a backward without retain_graph.
  virtual void release_saved() { next_edges.clear(); }
};

// The leaf end of the graph: adds the incoming gradient into variable->grad.
struct AccumulateGrad final : Node {
  TensorImplPtr variable;
  explicit AccumulateGrad(TensorImplPtr v) : variable(std::move(v)) {}
  const char* name() const override { return "AccumulateGrad"; }
  std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) override;
  void release_saved() override {}
};

// t.grad += g, where g has t's shape: the first gradient is copied into a fresh buffer (g may be
// shared with other leaves or with the caller), later ones are added in place. Used by leaves
// (AccumulateGrad) and by non-leaf tensors that retain_grad().
void accumulate_grad(TensorImpl& t, const TensorImplPtr& g);

// The edge through which a gradient for `t` flows: its grad_fn, a fresh AccumulateGrad for a
// leaf that requires grad, or an empty edge.
Edge gradient_edge(const TensorImplPtr& t);

}  // namespace lucid
