#include "autograd/engine.h"

#include <unordered_map>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "ops/binary.h"

namespace lucid {

static uint64_t next_seq() {
  thread_local uint64_t seq = 0;
  return seq++;
}
Node::Node() : seq_nr(next_seq()) { live.fetch_add(1, std::memory_order_relaxed); }

Edge gradient_edge(const TensorImplPtr& t) {
  if (t->grad_fn) return {t->grad_fn, 0};
  if (t->requires_grad) return {std::make_shared<AccumulateGrad>(t), 0};
  return {};
}

std::vector<TensorImplPtr> AccumulateGrad::run(const TensorImplPtr& grad_out) {
  LUCID_CHECK_SHAPE(grad_out->numel() == variable->numel(), "backward: gradient of shape ",
                    shape_str(grad_out->shape), " does not match leaf of shape ",
                    shape_str(variable->shape));
  TensorImplPtr g = grad_out;
  if (g->shape != variable->shape) {
    auto c = contiguous_raw(g);
    g = make_view(c, variable->shape, contiguous_strides(variable->shape), c->offset);
  }
  accumulate_grad(*variable, g);
  return {};
}

void accumulate_grad(TensorImpl& t, const TensorImplPtr& g) {
  if (!t.grad) {
    auto fresh = empty(t.shape, t.dtype);
    copy_into(fresh, g);
    t.grad = fresh;
  } else {
    add_(t.grad, g);
  }
}

std::vector<TensorImplPtr> Engine::backward(const std::vector<TensorImplPtr>& roots,
                                            const std::vector<TensorImplPtr>& grads,
                                            bool retain_graph,
                                            const std::vector<TensorImplPtr>& inputs) {
  NoGradGuard no_grad;
  const bool capture = !inputs.empty();
  std::unordered_map<const TensorImpl*, size_t> leaf_slot;
  std::unordered_map<const Node*, size_t> node_slot;
  for (size_t i = 0; i < inputs.size(); ++i) {
    LUCID_CHECK(inputs[i]->requires_grad, "grad: input ", i, " does not require grad");
    if (inputs[i]->grad_fn) node_slot[inputs[i]->grad_fn.get()] = i;
    else leaf_slot[inputs[i].get()] = i;
  }
  std::vector<TensorImplPtr> results(inputs.size());
  auto add_result = [&](size_t slot, const TensorImplPtr& g) {
    results[slot] = results[slot] ? add(results[slot], g) : g;
  };

  // Discover the graph and count, for each node, the edges that feed it.
  std::unordered_map<Node*, int> deps;
  std::unordered_map<Node*, TensorImplPtr> buffer;
  // Every discovered node, held strongly: releasing a node's edges must not free a node that
  // is still waiting to run.
  std::vector<NodePtr> stack;
  for (size_t i = 0; i < roots.size(); ++i) {
    const auto& r = roots[i];
    LUCID_CHECK(r->requires_grad, "backward: element ", i,
                " of tensors does not require grad and does not have a grad_fn");
    LUCID_CHECK_SHAPE(grads[i]->shape == r->shape, "backward: gradient shape ",
                      shape_str(grads[i]->shape), " does not match output shape ", shape_str(r->shape));
    Edge e = gradient_edge(r);
    Node* n = e.fn.get();
    auto g = cast_raw(grads[i], r->dtype);
    auto it = buffer.find(n);
    if (it == buffer.end()) {
      buffer[n] = g;
      deps.emplace(n, 0);
      stack.push_back(e.fn);
    } else {
      it->second = add(it->second, g);
    }
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

  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    TensorImplPtr g;
    if (auto it = buffer.find(n); it != buffer.end()) {
      g = std::move(it->second);
      buffer.erase(it);
    }
    std::vector<TensorImplPtr> outs;
    std::vector<Edge> edges = n->next_edges;  // run/release may clear them
    if (g) {
      for (auto& h : n->pre_hooks) h(g);
      if (capture) {
        if (auto it = node_slot.find(n); it != node_slot.end()) add_result(it->second, g);
      }
      auto* acc = dynamic_cast<AccumulateGrad*>(n);
      if (acc) {
        if (capture) {
          if (auto it = leaf_slot.find(acc->variable.get()); it != leaf_slot.end())
            add_result(it->second, g);
        } else {
          acc->run(g);
        }
      } else {
        outs = n->run(g);
      }
    }
    for (size_t i = 0; i < edges.size(); ++i) {
      Node* next = edges[i].fn.get();
      if (!next) continue;
      if (i < outs.size() && outs[i]) {
        auto it = buffer.find(next);
        if (it == buffer.end()) buffer.emplace(next, outs[i]);
        else it->second = add(it->second, outs[i]);
      }
      if (--deps[next] == 0) ready.push_back(next);
    }
    if (!retain_graph && !dynamic_cast<AccumulateGrad*>(n)) n->release_saved();
  }
  return results;
}

}  // namespace lucid
