#include "autograd/tensor_grad.h"

#include "autograd/node.h"
#include "core/error.h"

namespace lucid {

TensorImplPtr detach(const TensorImplPtr& t) { return make_view(t, t->shape, t->strides, t->offset); }

TensorImplPtr detach_(const TensorImplPtr& t) {
  t->grad_fn.reset();
  t->requires_grad = false;
  return t;
}

void retain_grad(const TensorImplPtr& t) {
  LUCID_CHECK(t->requires_grad, "retain_grad: can't retain_grad on a tensor that does not require grad");
  if (t->is_leaf() || t->retains_grad) return;
  t->retains_grad = true;
  std::weak_ptr<TensorImpl> w = t;  // the node must not keep its own output alive
  t->grad_fn->pre_hooks.emplace_back(next_hook_id(), [w](const TensorImplPtr& g) -> TensorImplPtr {
    if (auto s = w.lock()) accumulate_grad(*s, g);
    return nullptr;
  });
}

}  // namespace lucid
