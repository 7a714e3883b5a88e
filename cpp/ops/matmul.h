// Matrix products with numpy's matmul rules: 1-D @ 1-D is a dot product (0-d result), a 1-D
// left operand is a row [1, K] and a 1-D right operand a column [K, 1] (the added dim is
// dropped from the result), N-D operands are stacks of matrices whose batch dims broadcast.
// Backward: dA = dC @ B^T, dB = A^T @ dC, summed over broadcast batch dims. Saves A (for dB)
// and B (for dA) in the compute dtype. linear(x, W, b) = x W^T + b as one gemm with beta = 1
// onto the broadcast bias and one backward node (dx = dy W, dW = dy^T x, db = sum dy).
// Operands must share a dtype (PyTorch's rule); under autocast (AmpPolicy::Promote) floating
// operands run in the autocast dtype and each gradient returns in its input's own dtype.
// float16/bfloat16 are multiplied in float32; int64 with a plain loop; bool is refused.
#pragma once
#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr matmul(const TensorImplPtr& a, const TensorImplPtr& b);
// Checked aliases of matmul: mm (2-D @ 2-D), bmm (3-D @ 3-D, equal batch), dot (1-D @ 1-D).
TensorImplPtr mm(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr bmm(const TensorImplPtr& a, const TensorImplPtr& b);
TensorImplPtr dot(const TensorImplPtr& a, const TensorImplPtr& b);
// x [..., in], weight [out, in], bias broadcastable to [..., out] or nullptr.
TensorImplPtr linear(const TensorImplPtr& x, const TensorImplPtr& weight, const TensorImplPtr& bias);

}  // namespace lucid
