// Node: one step of the backward graph. Most nodes have one output: `run(grad_out)` maps its
// gradient to one gradient per next edge, in input order (nullptr where an input needs none).
// A node may have several outputs (split/chunk/unbind: one node for all pieces, as PyTorch):
// a tensor names its output by TensorImpl::output_nr, an Edge by input_nr, and the engine runs
// such a node once with all its output gradients (`run_outputs`). AccumulateGrad is the node at
// a leaf.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/op_schema.h"
#include "core/tensor_impl.h"

namespace lucid {

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct Edge {
  NodePtr fn;  // null: this input needs no gradient
  uint32_t input_nr = 0;  // which output of fn this edge's gradient is for
};

// NOTE [iterative teardown]: a graph can be a chain of millions of nodes (total = total + x in a
// loop). Destroying its head must not recurse through next_edges (or through saved tensors whose
// grad_fn is the next node): ~Node hands what it owns to a thread-local queue, and the outermost
// destructor on the stack drains the queue in a loop, so the C++ stack depth stays constant.
struct Node : std::enable_shared_from_this<Node> {
  std::vector<Edge> next_edges;
  uint32_t num_outputs = 1;
  // Called with the summed gradient of an output before the node runs (retain_grad and
  // Tensor.register_hook on a non-leaf, the retain_grad hook last); a hook returns a replacement
  // gradient or nullptr. Keyed by handle id (see next_hook_id). pre_hooks are those of output 0,
  // the only output of most nodes; a node with several outputs keeps the others' itself.
  using PreHook = std::function<TensorImplPtr(const TensorImplPtr&)>;
  using PreHooks = std::vector<std::pair<uint64_t, PreHook>>;
  PreHooks pre_hooks;
  virtual PreHooks& output_pre_hooks(uint32_t /*output_nr*/) { return pre_hooks; }
  // Node.register_prehook: called after the tensors' hooks with all output gradients (nullptr
  // for an output no gradient reached); may replace entries.
  using NodePreHook = std::function<void(std::vector<TensorImplPtr>&)>;
  std::vector<std::pair<uint64_t, NodePreHook>> node_pre_hooks;
  // Node.register_hook: called with (grad_inputs, grad_outputs) after the node ran; may replace
  // entries of grad_inputs.
  using PostHook = std::function<void(std::vector<TensorImplPtr>&, const std::vector<TensorImplPtr>&)>;
  std::vector<std::pair<uint64_t, PostHook>> post_hooks;
  // Where the forward op was called from, recorded only under anomaly mode (see AnomalyMode).
  std::string anomaly_trace;

  static inline std::atomic<int64_t> live{0};  // live nodes, for leak tests
  Node();
  virtual ~Node();
  virtual const char* name() const = 0;
  virtual const OpSchema* schema() const { return nullptr; }
  // Maps the output's gradient to one gradient per next edge. With grad mode on (the engine
  // under create_graph=True) the result is itself recorded, so it can be differentiated again.
  virtual std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) = 0;
  // A node with several outputs: the same, given every output's gradient (nullptr for an output
  // no gradient reached, at least one not null). Called by the engine when num_outputs > 1.
  virtual std::vector<TensorImplPtr> run_outputs(const std::vector<TensorImplPtr>& grads) { return run(grads[0]); }
  // Frees saved state after a backward without retain_graph.
  virtual void release_saved() { next_edges.clear(); }
  // True when another node handed this one work to do in the current backward pass (see
  // Engine::pending): the engine then runs it even if no gradient reached its output, with
  // grad_out null.
  virtual bool has_deferred() const { return false; }
};

// PyTorch's wording for the two ways a backward finds its saved state unusable: freed by an
// earlier backward, or changed in place since it was saved (`t`, made by node `producer` or a
// leaf when null, now at a later version than `expected`).
inline constexpr const char* kFreedGraphMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.";
std::string modified_saved_message(const TensorImpl& t, const Node* producer, uint64_t expected);

// A process-wide id for hook handles.
uint64_t next_hook_id();

// autograd.detect_anomaly(): the engine checks every gradient a node returns for NaN and names
// the node and the forward op; nodes created meanwhile record where they were created
// (`trace_hook`, set by the bindings, returns the caller's Python stack).
struct AnomalyMode {
  static bool is_enabled();
  static void set_enabled(bool on);
  static inline std::function<std::string()> trace_hook;
};

// Hands a tensor / node to the teardown queue (see NOTE [iterative teardown]); `p` is left empty.
void defer_release(TensorImplPtr& p);
void defer_release(NodePtr& p);

// The leaf end of the graph: adds the incoming gradient into variable->grad.
struct AccumulateGrad final : Node {
  TensorImplPtr variable;
  explicit AccumulateGrad(TensorImplPtr v) : variable(std::move(v)) {}
  ~AccumulateGrad() override { defer_release(variable); }
  const char* name() const override { return "AccumulateGrad"; }
  std::vector<TensorImplPtr> run(const TensorImplPtr& grad_out) override;
  // The engine's entry: `grad_out` is handed over, so a first gradient that nothing else holds
  // becomes variable->grad without a copy (PyTorch's AccumulateGrad steals it the same way).
  void run_owned(TensorImplPtr grad_out);
  void release_saved() override {}
};

// t.grad += g, where g has t's shape: the first gradient is copied into a fresh buffer (g may be
// shared with other leaves or with the caller) unless `owned` says the caller handed over the only
// reference to a dense buffer of t's dtype, which is then kept as is; later ones are added in
// place. Used by leaves (AccumulateGrad) and by non-leaf tensors that retain_grad(). Under grad
// mode (create_graph) the sum is recorded out of place instead, so .grad keeps its graph.
void accumulate_grad(TensorImpl& t, const TensorImplPtr& g, bool owned = false);

// A leaf's gradient g (same numel) in the leaf's shape, as a view when possible.
TensorImplPtr as_leaf_shape(const TensorImplPtr& g, const TensorImplPtr& leaf);

// Applies a leaf's Tensor.register_hook hooks to its gradient.
TensorImplPtr apply_tensor_hooks(const TensorImpl& t, TensorImplPtr g);

// The edge through which a gradient for `t` flows: its grad_fn, the AccumulateGrad of a leaf that
// requires grad (created on first use and shared while alive), or an empty edge.
Edge gradient_edge(const TensorImplPtr& t);
// Installed by ops/view.cpp: gives a view whose base's history was rewritten through another view
// (storage->history_gen moved past t->view_gen) a grad_fn that reads from the base's new history.
// gradient_edge calls it, so the autograd core needs no knowledge of view ops.
void set_view_refresh(void (*refresh)(const TensorImplPtr& t));

}  // namespace lucid
