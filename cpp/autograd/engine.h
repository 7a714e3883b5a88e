// Engine: runs the backward graph from one or more roots. Nodes run in dependency order
// (a node runs once all gradients flowing into it are summed: Kahn's algorithm over an
// iteratively discovered graph, no recursion). A node with several outputs runs once, with the
// summed gradient of each output (nullptr for one no gradient reached). Leaves accumulate into .grad; with `inputs`
// given (autograd.grad), their gradients are captured and returned instead. With create_graph the
// nodes run under grad mode: each node's backward records its own graph (see func_op.h).
#pragma once
#include <vector>

#include "autograd/node.h"

namespace lucid {

struct Engine {
  // roots[i] is an output tensor and grads[i] its gradient (same shape).
  // Returns the gradients of `inputs` (nullptr for an input the roots do not reach).
  // create_graph: run every node with grad mode on, so the gradients carry their own graph.
  static std::vector<TensorImplPtr> backward(const std::vector<TensorImplPtr>& roots,
                                             const std::vector<TensorImplPtr>& grads,
                                             bool retain_graph,
                                             const std::vector<TensorImplPtr>& inputs = {},
                                             bool create_graph = false);
  // True while the innermost backward pass running on this thread has discovered `n` and not yet
  // run it: a node whose work a sibling can do in the same kernel pass (the two outputs of a
  // fused backward) may then hand its gradient to that sibling instead of running its own.
  static bool pending(const Node* n);
};

}  // namespace lucid
