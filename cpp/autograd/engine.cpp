#include "autograd/engine.h"

#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "ops/binary.h"
#include "ops/reduce.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

namespace {

// Raises when a node's gradient holds NaN (anomaly mode).
void check_anomaly(const Node& n, const std::vector<TensorImplPtr>& outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i] || !is_floating(outs[i]->dtype)) continue;
    NoGradGuard no_grad;
    auto bad = isnan(outs[i]);
    auto any = sum(bad, {}, false);
    if (item_as_double(any, "detect_anomaly") == 0) continue;
    const OpSchema* s = n.schema();
    // PyTorch's wording and node name (numbered: SqrtBackward0), then which op it came from.
    std::string name = n.name();
    if (name.size() > 8 && name.compare(name.size() - 8, 8, "Backward") == 0) name += "0";
    throw LucidError(str("Function '", name, "' returned nan values in its ", i, "th output (detect_anomaly: the ",
                         "backward of ", s ? s->name : "an op", ")",
                         n.anomaly_trace.empty() ? std::string()
                                                 : "; the forward op was called at:\n" + n.anomaly_trace));
  }
}

// PyTorch's print of a shape: torch.Size([2, 3]).
std::string torch_size_str(const Shape& s) {
  std::string r = "torch.Size([";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "])";
}

// The gradients waiting at the outputs of nodes with several outputs: one slot per output
// (nullptr while no gradient reached it). Single-output nodes keep theirs in a hash map; this
// one is an ordered map, which costs nothing to create and destroy empty, as it mostly is.
using OutputBuffers = std::map<Node*, std::vector<TensorImplPtr>>;

void add_output_grad(OutputBuffers& buffers, const Edge& e, TensorImplPtr g) {
  auto& gs = buffers[e.fn.get()];
  gs.resize(e.fn->num_outputs);
  auto& slot = gs[e.input_nr];
  slot = slot ? add(slot, g) : std::move(g);
}

// Runs a node with several outputs once on the gradients waiting at its outputs (not at all when
// none arrived): each output's tensor hooks (then `capture`), the node's pre-hooks, the node,
// its post-hooks.
std::vector<TensorImplPtr> run_multi(Node& n, OutputBuffers& buffers, bool anomaly,
                                     const std::function<void(uint32_t, const TensorImplPtr&)>& capture) {
  auto it = buffers.find(&n);
  if (it == buffers.end()) return {};
  std::vector<TensorImplPtr> gs = std::move(it->second);
  buffers.erase(it);
  for (uint32_t i = 0; i < gs.size(); ++i) {
    if (!gs[i]) continue;
    for (auto& [id, h] : n.output_pre_hooks(i))
      if (auto r = h(gs[i])) gs[i] = std::move(r);
    if (capture) capture(i, gs[i]);
  }
  for (auto& [id, h] : n.node_pre_hooks) h(gs);
  auto outs = n.run_outputs(gs);
  if (anomaly) check_anomaly(n, outs);
  for (auto& [id, h] : n.post_hooks) h(outs, gs);
  return outs;
}

// The dependency counts of the innermost backward pass on this thread (nodes leave it as they run).
thread_local std::unordered_map<Node*, int>* tl_pending = nullptr;

struct PendingScope {
  std::unordered_map<Node*, int>* prev;
  explicit PendingScope(std::unordered_map<Node*, int>* d) : prev(tl_pending) { tl_pending = d; }
  ~PendingScope() { tl_pending = prev; }
};

}  // namespace

bool Engine::pending(const Node* n) {
  return tl_pending && tl_pending->count(const_cast<Node*>(n)) > 0;
}

std::vector<TensorImplPtr> Engine::backward(const std::vector<TensorImplPtr>& roots,
                                            const std::vector<TensorImplPtr>& grads,
                                            bool retain_graph,
                                            const std::vector<TensorImplPtr>& inputs,
                                            bool create_graph) {
  GradModeGuard grad_mode(create_graph);
  const bool capture = !inputs.empty();
  const bool anomaly = AnomalyMode::is_enabled();
  std::unordered_map<const TensorImpl*, size_t> leaf_slot;
  std::map<std::pair<const Node*, uint32_t>, size_t> node_slot;  // a non-leaf input: its (grad_fn, output_nr)
  for (size_t i = 0; i < roots.size(); ++i) {  // PyTorch's checks, in PyTorch's order
    LUCID_CHECK(roots[i]->requires_grad, "element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    LUCID_CHECK_SHAPE(grads[i]->shape == roots[i]->shape, "Mismatch in shape: grad_output[", i, "] has a shape of ",
                      torch_size_str(grads[i]->shape), " and output[", i, "] has a shape of ",
                      torch_size_str(roots[i]->shape), ".");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    LUCID_CHECK(inputs[i]->requires_grad, "One of the differentiated Tensors does not require grad");
    if (inputs[i]->grad_fn) node_slot[{inputs[i]->grad_fn.get(), inputs[i]->output_nr}] = i;
    else leaf_slot[inputs[i].get()] = i;
  }
  std::vector<TensorImplPtr> results(inputs.size());
  auto add_result = [&](size_t slot, const TensorImplPtr& g) {
    results[slot] = results[slot] ? add(results[slot], g) : g;
  };
  auto capture_output = [&](const Node* n, uint32_t output_nr, const TensorImplPtr& g) {
    if (auto it = node_slot.find({n, output_nr}); it != node_slot.end()) add_result(it->second, g);
  };

  // Discover the graph and count, for each node, the edges that feed it.
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, TensorImplPtr> buffer;  // the summed gradient at a node's output
  OutputBuffers buffers;                            // ... at each output of a node with several
  // Every discovered node, held strongly: releasing a node's edges must not free a node that
  // is still waiting to run.
  std::vector<NodePtr> stack;
  for (size_t i = 0; i < roots.size(); ++i) {
    const auto& r = roots[i];
    Edge e = gradient_edge(r);
    Node* n = e.fn.get();
    auto g = grads[i]->dtype == r->dtype ? grads[i] : to(grads[i], r->dtype, false);
    if (deps.emplace(n, 0).second) stack.push_back(e.fn);
    if (n->num_outputs > 1) add_output_grad(buffers, e, std::move(g));
    else if (auto it = buffer.find(n); it == buffer.end()) buffer.emplace(n, std::move(g));
    else it->second = add(it->second, g);
  }
  for (size_t s = 0; s < stack.size(); ++s) {  // stack doubles as a visited list
    for (auto& e : stack[s]->next_edges) {
      if (!e.fn) continue;
      auto [it, fresh] = deps.emplace(e.fn.get(), 0);
      ++it->second;
      if (fresh) stack.push_back(e.fn);
    }
  }
  std::vector<Node*> ready;
  for (auto& n : stack)
    if (deps[n.get()] == 0) ready.push_back(n.get());
  PendingScope pending_scope(&deps);

  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    std::vector<TensorImplPtr> outs;
    std::vector<Edge> edges = n->next_edges;  // run/release may clear them
    AccumulateGrad* acc = nullptr;
    if (n->num_outputs > 1) {
      std::function<void(uint32_t, const TensorImplPtr&)> cap;
      if (capture) cap = [&](uint32_t i, const TensorImplPtr& g) { capture_output(n, i, g); };
      outs = run_multi(*n, buffers, anomaly, cap);
    } else {
      TensorImplPtr g;
      if (auto it = buffer.find(n); it != buffer.end()) {
        g = std::move(it->second);
        buffer.erase(it);
      }
      acc = dynamic_cast<AccumulateGrad*>(n);
      if (g) {
        for (auto& [id, h] : n->pre_hooks)
          if (auto r = h(g)) g = std::move(r);
        if (capture) capture_output(n, 0, g);
        if (!n->node_pre_hooks.empty()) {
          std::vector<TensorImplPtr> gs{g};
          for (auto& [id, h] : n->node_pre_hooks) h(gs);
          if (gs[0]) g = gs[0];
        }
        if (acc) {
          if (capture) {
            if (auto it = leaf_slot.find(acc->variable.get()); it != leaf_slot.end())
              add_result(it->second, apply_tensor_hooks(*acc->variable, as_leaf_shape(g, acc->variable)));
          } else {
            acc->run_owned(std::move(g));
          }
        } else {
          outs = n->run(g);
          if (anomaly) check_anomaly(*n, outs);
          if (!n->post_hooks.empty()) {
            const std::vector<TensorImplPtr> gs{g};
            for (auto& [id, h] : n->post_hooks) h(outs, gs);
          }
        }
      } else if (n->has_deferred()) {
        outs = n->run(nullptr);
        if (anomaly) check_anomaly(*n, outs);
      }
    }
    deps.erase(n);
    for (size_t i = 0; i < edges.size(); ++i) {
      Node* next = edges[i].fn.get();
      if (!next) continue;
      if (i < outs.size() && outs[i]) {
        if (next->num_outputs > 1) add_output_grad(buffers, edges[i], std::move(outs[i]));
        else if (auto it = buffer.find(next); it == buffer.end()) buffer.emplace(next, std::move(outs[i]));
        else it->second = add(it->second, outs[i]);
      }
      if (--deps[next] == 0) ready.push_back(next);
    }
    if (!retain_graph && !acc) n->release_saved();
  }
  return results;
}

}  // namespace lucid
