#include "autograd/engine.h"

#include <cmath>
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

// Applies the pre-hooks of one output to its gradient.
TensorImplPtr apply_pre_hooks(const Node::PreHooks& hooks, TensorImplPtr g) {
  for (auto& [id, h] : hooks)
    if (auto r = h(g)) g = std::move(r);
  return g;
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
  // The summed gradient waiting at each node's output; a node with several outputs keeps one slot
  // per output (nullptr while none reached it).
  std::unordered_map<Node*, TensorImplPtr> buffer;
  std::unordered_map<Node*, std::vector<TensorImplPtr>> buffers;
  auto add_grad = [&](const Edge& e, TensorImplPtr g) {
    Node* n = e.fn.get();
    if (n->num_outputs == 1) {
      auto it = buffer.find(n);
      if (it == buffer.end()) buffer.emplace(n, std::move(g));
      else it->second = add(it->second, g);
    } else {
      auto& gs = buffers[n];
      gs.resize(n->num_outputs);
      auto& slot = gs[e.input_nr];
      slot = slot ? add(slot, g) : std::move(g);
    }
  };
  // Every discovered node, held strongly: releasing a node's edges must not free a node that
  // is still waiting to run.
  std::vector<NodePtr> stack;
  for (size_t i = 0; i < roots.size(); ++i) {
    const auto& r = roots[i];
    Edge e = gradient_edge(r);
    if (deps.emplace(e.fn.get(), 0).second) stack.push_back(e.fn);
    add_grad(e, grads[i]->dtype == r->dtype ? grads[i] : to(grads[i], r->dtype, false));
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
      std::vector<TensorImplPtr> gs;
      if (auto it = buffers.find(n); it != buffers.end()) {
        gs = std::move(it->second);
        buffers.erase(it);
      }
      if (!gs.empty()) {
        for (uint32_t i = 0; i < gs.size(); ++i) {
          if (!gs[i]) continue;
          gs[i] = apply_pre_hooks(n->output_pre_hooks(i), std::move(gs[i]));
          if (capture) capture_output(n, i, gs[i]);
        }
        for (auto& [id, h] : n->node_pre_hooks) h(gs);
        outs = n->run_outputs(gs);
        if (anomaly) check_anomaly(*n, outs);
        for (auto& [id, h] : n->post_hooks) h(outs, gs);
      }
    } else {
      TensorImplPtr g;
      if (auto it = buffer.find(n); it != buffer.end()) {
        g = std::move(it->second);
        buffer.erase(it);
      }
      acc = dynamic_cast<AccumulateGrad*>(n);
      if (g) {
        g = apply_pre_hooks(n->pre_hooks, std::move(g));
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
      if (i < outs.size() && outs[i]) add_grad(edges[i], std::move(outs[i]));
      if (--deps[next] == 0) ready.push_back(next);
    }
    if (!retain_graph && !acc) n->release_saved();
  }
  return results;
}

}  // namespace lucid
