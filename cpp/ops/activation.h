// Parametrised activations of nn.functional (PyTorch's formulas, defaults in the Python layer):
//   leaky_relu  x > 0 ? x : slope x                    elu   x > 0 ? x : alpha (e^x - 1)
//   selu        scale * elu(x, alpha) (fixed alpha, scale)   celu  max(0,x) + min(0, alpha (e^(x/alpha) - 1))
//   softplus    x beta > threshold ? x : log1p(e^(beta x)) / beta
//   logsigmoid  min(x, 0) - log1p(e^-|x|)              hardtanh  clamp(x, min_val, max_val)
//   mish        x tanh(softplus(x))                    hardsigmoid  clamp(x / 6 + 1/2, 0, 1)
//   hardswish   x hardsigmoid(x)                       softsign  x / (1 + |x|)
//   tanhshrink  x - tanh(x)                            threshold  x > t ? x : value
//   hardshrink  |x| > l ? x : 0                        softshrink  x -+ l beyond +-l, else 0
// Floating inputs only (as PyTorch). Every op saves its input (nothing else) for one generic
// ActivationBackward node; derivatives at kinks follow PyTorch's backward kernels (hardtanh
// passes the gradient only strictly inside (min_val, max_val), leaky_relu uses x > 0).
#pragma once
#include <string>

#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr leaky_relu(const TensorImplPtr& x, double negative_slope);
TensorImplPtr elu(const TensorImplPtr& x, double alpha);
TensorImplPtr selu(const TensorImplPtr& x);
TensorImplPtr celu(const TensorImplPtr& x, double alpha);
TensorImplPtr softplus(const TensorImplPtr& x, double beta, double threshold);
TensorImplPtr logsigmoid(const TensorImplPtr& x);
TensorImplPtr hardtanh(const TensorImplPtr& x, double min_val, double max_val);
TensorImplPtr mish(const TensorImplPtr& x);
TensorImplPtr hardsigmoid(const TensorImplPtr& x);
TensorImplPtr hardswish(const TensorImplPtr& x);
TensorImplPtr softsign(const TensorImplPtr& x);
TensorImplPtr tanhshrink(const TensorImplPtr& x);
TensorImplPtr threshold(const TensorImplPtr& x, double threshold, double value);
TensorImplPtr hardshrink(const TensorImplPtr& x, double lambd);
TensorImplPtr softshrink(const TensorImplPtr& x, double lambd);

// In place, by name (one of the ops above that PyTorch offers with inplace=True: leaky_relu,
// elu, selu, celu, hardtanh, hardsigmoid, hardswish, threshold, mish). Refuses a tensor that
// requires grad while grad mode is on; bumps the version. a and b are the op's parameters in
// the order of its out-of-place signature (unused ones ignored).
TensorImplPtr activation_(const TensorImplPtr& x, const std::string& op, double a, double b);

}  // namespace lucid
