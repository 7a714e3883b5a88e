// Unary elementwise ops and their gradients. Float-only functions (exp, log, sqrt, rsqrt, sin,
// cos, tanh, sigmoid, log1p, expm1, erf) promote integer/bool inputs to float32 as PyTorch does; gelu and silu
// reject them (as PyTorch). neg/abs/relu/clamp keep integer dtypes; sign keeps every dtype.
// Each differentiable op saves what its derivative reads: the output for exp, sqrt, rsqrt,
// tanh, sigmoid and relu (as a detached alias), the input otherwise, nothing for neg.
// Derivatives at kinks follow PyTorch: relu'(0) = 0, abs'(0) = 0, clamp passes the gradient
// where min <= x <= max. sign has a zero gradient; isnan and isfinite record none.
// Under autocast exp, log and rsqrt are ForceFP32 (half inputs run in float32), the rest KeepInput.
#pragma once
#include <optional>
#include <string>

#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr neg(const TensorImplPtr& x);
TensorImplPtr abs(const TensorImplPtr& x);
TensorImplPtr exp(const TensorImplPtr& x);
TensorImplPtr log(const TensorImplPtr& x);
TensorImplPtr sqrt(const TensorImplPtr& x);
TensorImplPtr rsqrt(const TensorImplPtr& x);
TensorImplPtr sin(const TensorImplPtr& x);
TensorImplPtr cos(const TensorImplPtr& x);
TensorImplPtr tanh(const TensorImplPtr& x);
TensorImplPtr sigmoid(const TensorImplPtr& x);
TensorImplPtr relu(const TensorImplPtr& x);
// approximate: "none" (exact, 0.5 x (1 + erf(x / sqrt 2))) or "tanh".
TensorImplPtr gelu(const TensorImplPtr& x, const std::string& approximate);
TensorImplPtr silu(const TensorImplPtr& x);
TensorImplPtr log1p(const TensorImplPtr& x);
TensorImplPtr tan(const TensorImplPtr& x);
TensorImplPtr asin(const TensorImplPtr& x);
TensorImplPtr acos(const TensorImplPtr& x);
TensorImplPtr atan(const TensorImplPtr& x);
TensorImplPtr sinh(const TensorImplPtr& x);
TensorImplPtr cosh(const TensorImplPtr& x);
TensorImplPtr asinh(const TensorImplPtr& x);
TensorImplPtr acosh(const TensorImplPtr& x);
TensorImplPtr atanh(const TensorImplPtr& x);
TensorImplPtr log2(const TensorImplPtr& x);
TensorImplPtr log10(const TensorImplPtr& x);
TensorImplPtr exp2(const TensorImplPtr& x);
TensorImplPtr erfc(const TensorImplPtr& x);
TensorImplPtr isinf(const TensorImplPtr& x);
TensorImplPtr isposinf(const TensorImplPtr& x);
TensorImplPtr isneginf(const TensorImplPtr& x);
TensorImplPtr signbit(const TensorImplPtr& x);
TensorImplPtr expm1(const TensorImplPtr& x);
TensorImplPtr erf(const TensorImplPtr& x);
// Rounding keeps the input dtype (integers pass through; round refuses them) and has zero gradient.
TensorImplPtr floor(const TensorImplPtr& x);
TensorImplPtr ceil(const TensorImplPtr& x);
TensorImplPtr trunc(const TensorImplPtr& x);
// Half to even; decimals != 0 rounds to that many decimal places (negative: tens, hundreds, ...).
TensorImplPtr round(const TensorImplPtr& x, int64_t decimals);
// min(max(x, lo), hi); a missing bound is not applied; lo > hi gives hi everywhere (PyTorch).
// At least one bound is required. The bounds are applied in x's dtype: the binding first casts an
// integer tensor to float32 when a bound is a Python float (PyTorch's result type).
TensorImplPtr clamp(const TensorImplPtr& x, std::optional<double> lo, std::optional<double> hi);
TensorImplPtr sign(const TensorImplPtr& x);
TensorImplPtr isnan(const TensorImplPtr& x);
TensorImplPtr isfinite(const TensorImplPtr& x);

// In place (refuse a tensor that requires grad while grad mode is on); bump the version.
TensorImplPtr relu_(const TensorImplPtr& x);
TensorImplPtr clamp_(const TensorImplPtr& x, std::optional<double> lo, std::optional<double> hi);

}  // namespace lucid
