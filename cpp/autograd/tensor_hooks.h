// Gradient hooks on a non-leaf tensor, kept apart from tensor_grad.h (which every op includes).
#pragma once
#include "autograd/node.h"

namespace lucid {

// Adds `hook` (handle `id`) to the pre-hooks of t's output of its grad_fn, ahead of the hook retain_grad()
// put there: PyTorch runs a tensor's retains-grad hook after all its other hooks, so t.grad is
// the gradient as the hooks left it, whatever the order of register_hook and retain_grad.
void add_tensor_pre_hook(const TensorImplPtr& t, uint64_t id, Node::PreHook hook);

}  // namespace lucid
