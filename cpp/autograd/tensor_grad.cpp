#include "autograd/tensor_grad.h"

#include <algorithm>

#include "autograd/node.h"
#include "autograd/tensor_hooks.h"
#include "core/error.h"

namespace lucid {

namespace {

// retain_grad's pre-hook: accumulates the gradient into the tensor's .grad. A named type, so
// add_tensor_pre_hook can keep it last.
struct RetainGradHook {
  std::weak_ptr<TensorImpl> w;  // the node must not keep its own output alive
  TensorImplPtr operator()(const TensorImplPtr& g) const {
    if (auto s = w.lock()) accumulate_grad(*s, g);
    return nullptr;
  }
};

}  // namespace

TensorImplPtr detach(const TensorImplPtr& t) { return make_view(t, t->shape, t->strides, t->offset); }

TensorImplPtr detach_(const TensorImplPtr& t) {
  t->grad_fn.reset();
  t->output_nr = 0;
  t->requires_grad = false;
  return t;
}

void retain_grad(const TensorImplPtr& t) {
  LUCID_CHECK(t->requires_grad, "retain_grad: can't retain_grad on a tensor that does not require grad");
  if (t->is_leaf() || t->retains_grad) return;
  t->retains_grad = true;
  t->grad_fn->output_pre_hooks(t->output_nr).emplace_back(next_hook_id(), RetainGradHook{t});
}

void add_tensor_pre_hook(const TensorImplPtr& t, uint64_t id, Node::PreHook hook) {
  auto& hooks = t->grad_fn->output_pre_hooks(t->output_nr);
  auto pos = std::find_if(hooks.begin(), hooks.end(),
                          [](const auto& h) { return h.second.template target<RetainGradHook>() != nullptr; });
  hooks.emplace(pos, id, std::move(hook));
}

}  // namespace lucid
