// The node base: lifetime (live counts and the iterative teardown queue, NOTE [iterative
// teardown] in node.h), hooks, anomaly mode, gradient edges and the leaf's AccumulateGrad.
#include "autograd/node.h"

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "ops/binary.h"
#include "ops/view.h"

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

Node::Node() {
  live.fetch_add(1, std::memory_order_relaxed);
  if (AnomalyMode::is_enabled() && AnomalyMode::trace_hook) anomaly_trace = AnomalyMode::trace_hook();
}

uint64_t next_hook_id() {
  static std::atomic<uint64_t> id{1};
  return id.fetch_add(1, std::memory_order_relaxed);
}

static std::atomic<bool> g_anomaly{false};
bool AnomalyMode::is_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
void AnomalyMode::set_enabled(bool on) { g_anomaly.store(on, std::memory_order_relaxed); }

namespace {
void (*g_view_refresh)(const TensorImplPtr&) = nullptr;
}  // namespace

void set_view_refresh(void (*refresh)(const TensorImplPtr& t)) { g_view_refresh = refresh; }

Edge gradient_edge(const TensorImplPtr& t) {
  if (t->view_gen != t->storage->history_gen && g_view_refresh) g_view_refresh(t);
  if (t->grad_fn) return {t->grad_fn, t->output_nr};
  if (!t->requires_grad) return {};
  NodePtr acc = t->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    t->grad_accumulator = acc;
  }
  return {acc, 0};
}

TensorImplPtr apply_tensor_hooks(const TensorImpl& t, TensorImplPtr g) {
  for (auto& [id, h] : t.hooks)
    if (auto r = h(g)) g = std::move(r);
  return g;
}

TensorImplPtr as_leaf_shape(const TensorImplPtr& g, const TensorImplPtr& v) {
  LUCID_CHECK_SHAPE(g->numel() == v->numel(), "backward: gradient of shape ", shape_str(g->shape),
                    " does not match leaf of shape ", shape_str(v->shape));
  if (g->shape == v->shape) return g;
  if (GradMode::is_enabled()) return reshape(g, v->shape);
  auto c = contiguous_raw(g);
  return make_view(c, v->shape, contiguous_strides(v->shape), c->offset);
}

std::vector<TensorImplPtr> AccumulateGrad::run(const TensorImplPtr& grad_out) {
  accumulate_grad(*variable, apply_tensor_hooks(*variable, as_leaf_shape(grad_out, variable)));
  return {};
}

void AccumulateGrad::run_owned(TensorImplPtr grad_out) {
  auto g = as_leaf_shape(grad_out, variable);
  grad_out.reset();
  accumulate_grad(*variable, apply_tensor_hooks(*variable, std::move(g)), true);
}

namespace {
// May `g` (held once, by the caller) become t.grad as is? Only a whole, dense, unshared buffer:
// nobody else can see it, and it has the shape, dtype and layout a fresh copy would have.
bool can_steal(const TensorImpl& t, const TensorImplPtr& g) {
  return g.use_count() == 1 && g->storage.use_count() == 1 && g->storage->data.use_count() == 1 &&
         !g->grad_fn && !g->requires_grad && g->dtype == t.dtype && g->offset == 0 && g->shape == t.shape &&
         g->storage->nbytes == size_t(g->numel()) * itemsize(g->dtype) && g->is_contiguous();
}
}  // namespace

void accumulate_grad(TensorImpl& t, const TensorImplPtr& g, bool owned) {
  if (GradMode::is_enabled()) {  // create_graph: keep the gradient's graph, never write in place
    t.grad = t.grad ? add(t.grad, g) : (g->requires_grad ? clone(g) : cast_raw(clone(g), t.dtype));
    return;
  }
  if (!t.grad) {
    if (owned && can_steal(t, g)) {
      t.grad = g;
      return;
    }
    auto fresh = empty(t.shape, t.dtype);
    copy_into(fresh, g);
    t.grad = fresh;
  } else {
    add_(t.grad, g);
  }
}

namespace {
// PyTorch's legacy type name of a dtype: torch.FloatTensor, torch.LongTensor, ...
const char* legacy_type_name(DType d) {
  switch (d) {
    case DType::Float16: return "torch.HalfTensor";
    case DType::BFloat16: return "torch.BFloat16Tensor";
    case DType::Float32: return "torch.FloatTensor";
    case DType::Float64: return "torch.DoubleTensor";
    case DType::Int64: return "torch.LongTensor";
    case DType::Bool: return "torch.BoolTensor";
  }
  return "torch.Tensor";
}
}  // namespace

std::string modified_saved_message(const TensorImpl& t, const Node* producer, uint64_t expected) {
  std::string shape = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
  shape += "]";
  std::string which;
  if (producer) {  // "ExpBackward" / "AddBackward0" -> "Exp" / "Add"
    std::string n = producer->name();
    while (!n.empty() && n.back() >= '0' && n.back() <= '9') n.pop_back();
    if (n.size() > 8 && n.compare(n.size() - 8, 8, "Backward") == 0) n.resize(n.size() - 8);
    which = str(", which is output ", t.output_nr, " of ", n, ",");
  }
  const char* hint =
      AnomalyMode::is_enabled()
          ? "Hint: the backtrace further above shows the operation that failed to compute its gradient. The "
            "variable in question was changed in there or anywhere later. Good luck!"
          : "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).";
  return str("one of the variables needed for gradient computation has been modified by an inplace operation: [",
             legacy_type_name(t.dtype), " ", shape, "]", which, " is at version ", t.version(),
             "; expected version ", expected, " instead. ", hint);
}

Node::~Node() {
  for (auto& e : next_edges) defer_release(e.fn);
  drain();
  live.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace lucid
