// Node lifetime: sequence numbers, live counts and the iterative teardown queue
// (NOTE [iterative teardown] in node.h).
#include "autograd/node.h"

namespace lucid {

namespace {
struct TeardownQueue {
  std::vector<NodePtr> nodes;
  std::vector<TensorImplPtr> tensors;
  bool draining = false;
};
thread_local TeardownQueue t_queue;

// Drops queued references one at a time; destructors that run meanwhile only enqueue.
void drain() {
  auto& q = t_queue;
  if (q.draining) return;
  q.draining = true;
  while (!q.nodes.empty() || !q.tensors.empty()) {
    if (!q.nodes.empty()) {
      NodePtr n = std::move(q.nodes.back());
      q.nodes.pop_back();
    } else {
      TensorImplPtr t = std::move(q.tensors.back());
      q.tensors.pop_back();
    }
  }
  q.draining = false;
}
}  // namespace

void defer_release(TensorImplPtr& p) {
  // Only a last reference whose release may cascade (a grad_fn or a grad) needs the queue.
  if (p && p.use_count() == 1 && (p->grad_fn || p->grad)) t_queue.tensors.push_back(std::move(p));
  else p.reset();
}
void defer_release(NodePtr& p) {
  if (p && p.use_count() == 1) t_queue.nodes.push_back(std::move(p));
  else p.reset();
}

Node::~Node() {
  for (auto& e : next_edges) defer_release(e.fn);
  drain();
  live.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace lucid
