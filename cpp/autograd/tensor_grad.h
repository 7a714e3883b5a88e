// Autograd on one tensor, below the Python API: detaching from the graph and retain_grad.
#pragma once
#include "core/tensor_impl.h"

namespace lucid {

// A new leaf sharing t's storage, shape, strides and version counter, with no grad_fn and
// requires_grad=False. Also how an op saves its own output without the reference cycle
// out -> grad_fn -> out.
TensorImplPtr detach(const TensorImplPtr& t);
// Drops t's grad_fn and requires_grad in place (t becomes a leaf); returns t.
TensorImplPtr detach_(const TensorImplPtr& t);
// Makes backward accumulate into the .grad of the non-leaf t too (a pre-hook on its grad_fn);
// a no-op for leaves and when already retained. Raises if t does not require grad.
void retain_grad(const TensorImplPtr& t);

}  // namespace lucid
