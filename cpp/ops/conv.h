// Convolution (1-d and 2-d, grouped, strided, dilated, padded) and its transpose, as in
// PyTorch's conv1d/conv2d/conv_transpose1d/conv_transpose2d. A 1-d op is the 2-d op on
// H = 1. Heavy part: one GEMM per group over a whole batch chunk, on an im2col column matrix:
//   conv:       y_g = W_g @ im2col(x)_g                 (W viewed as (C_out, C_in/g * kH * kW))
//   dx:         dx  = col2im(W_g^T @ dy_g)              (the transposed conv's forward)
//   dW:         dW_g = dy_g @ im2col(x)_g^T,  db = sum over n, h, w of dy
// The transposed conv swaps the roles (its forward is conv's dx, its dx is conv's forward).
// Saved: x and weight (slots 0, 1; slot 2 is bias's edge and saves nothing). AmpPolicy Promote.
#pragma once
#include <array>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

// Geometry of one call, per spatial dim (index 0 = H, 1 = W; H is 1 for 1-d).
struct ConvSpec {
  int dims = 2;             // 1 or 2 spatial dims
  bool transposed = false;
  int64_t groups = 1;
  std::array<int64_t, 2> stride{1, 1}, pad_lo{0, 0}, pad_hi{0, 0}, dilation{1, 1}, output_padding{0, 0};
};

struct ConvolutionBackward : FuncOp<ConvolutionBackward, 3> {
  static const OpSchema& schema_v1;  // {convolution, 1, Promote, produces_grad}
  ConvSpec spec_;
  Shape x_shape_, w_shape_, bias_shape_;
  DType x_dtype_ = kDefaultFloat, w_dtype_ = kDefaultFloat, bias_dtype_ = kDefaultFloat;
  DType compute_dtype_ = kDefaultFloat;
  const char* name() const override { return "ConvolutionBackward"; }
  // {dx, d_weight, d_bias}, each in its input's dtype (nullptr where not needed).
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the same values, each recorded with a ConvolutionBackwardBackward node.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

// The node of one output of ConvolutionBackward under create_graph=True (wrt_ 0: dx, 1: d_weight,
// 2: d_bias): maps that output's upstream gradient to {d grad_out, d x, d weight}, each term a
// convolution or one of its gradients (the op is bilinear). Saved: grad_out, x, weight.
struct ConvolutionBackwardBackward : FuncOp<ConvolutionBackwardBackward, 3> {
  static const OpSchema& schema_v1;  // {convolution_backward, 1, Promote, produces_grad}
  ConvSpec spec_;
  int wrt_ = 0;
  DType compute_dtype_ = kDefaultFloat;
  const char* name() const override { return "ConvolutionBackwardBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // Third order: the same terms recorded (a convolution, or one gradient of a convolution taken
  // through ConvolutionBackward::apply_graph), so they differentiate again.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

// x (N, C_in, [H,] W) or unbatched (C_in, [H,] W); weight (C_out, C_in/groups, [kH,] kW) for a
// convolution, (C_in, C_out/groups, [kH,] kW) for a transposed one; bias (C_out,) or null.
// `op` names the caller in errors ("conv2d", "Conv2d", ...).
TensorImplPtr convolution(const TensorImplPtr& x, const TensorImplPtr& weight, const TensorImplPtr& bias,
                          const ConvSpec& spec, const char* op);

}  // namespace lucid
