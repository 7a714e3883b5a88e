// Binary elementwise ops with numpy broadcasting and PyTorch type promotion:
// add, sub, mul, div (true division), pow, maximum, minimum (differentiable), the comparisons
// (bool result, no gradient) and the in-place forms used by optimizers and .grad accumulation.
// Gradients of broadcast operands are summed back to their shapes (sum_to).
#pragma once
#include <initializer_list>

#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr add(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr sub(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr mul(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr div(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr pow(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr maximum(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr minimum(const TensorImplPtr& a, const TensorImplPtr& b);
// atan2(a, b): the angle of the point (b, a) in (-pi, pi]; integers promote to float32.
TensorImplPtr atan2(const TensorImplPtr& a, const TensorImplPtr& b);

enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge };
TensorImplPtr compare(const TensorImplPtr& a, const TensorImplPtr& b, CompareOp op);

// In place on `a` (b broadcast to a's shape, computed in a's dtype); bumps a's version.
// Refuses a tensor that requires grad while grad mode is on.
TensorImplPtr add_(const TensorImplPtr& a, const TensorImplPtr& b, double alpha = 1.0);
TensorImplPtr sub_(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr mul_(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr div_(const TensorImplPtr& a, const TensorImplPtr& b);
// Copies b (broadcast, any dtype) into a.
TensorImplPtr copy_(const TensorImplPtr& a, const TensorImplPtr& b);
// Raises when `t` may not be modified in place (requires grad under grad mode).
void check_inplace(const TensorImplPtr& t, const char* op);
// Raises PyTorch's "more than one element of the written-to tensor refers to a single memory
// location" when t (the target of an in-place op or out=) is an expanded view.
void check_no_internal_overlap(const TensorImplPtr& t);
// Raises PyTorch's "some elements of the input tensor and the written-to tensor refer to a single
// memory location" when dense `in` and `out` share some memory but are not the same elements.
void check_no_partial_overlap(const TensorImplPtr& out, const TensorImplPtr& in);
// In-place ops under autograd, as in PyTorch. inplace_records: whether writing into x must be
// recorded (grad mode on, and x or one of `others` requires grad); raises for a leaf that requires
// grad. rebase_inplace: writes `result` (x's new value computed out of place, with its node) into
// x, bumps x's version (nodes that saved x's old value then refuse to run) and makes result's node
// x's grad_fn, so later uses of x differentiate through the write. Returns x.
// NOTE: only x's history moves; another view of the same storage keeps its old grad_fn.
bool inplace_records(const TensorImplPtr& x, std::initializer_list<TensorImplPtr> others, const char* op);
TensorImplPtr rebase_inplace(const TensorImplPtr& x, const TensorImplPtr& result, const char* op);

// PyTorch's result_type for two tensors: 0-d tensors only promote across categories.
DType result_type(const TensorImplPtr& a, const TensorImplPtr& b);

}  // namespace lucid
