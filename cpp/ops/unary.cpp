#include "ops/unary.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "autograd/tensor_grad.h"
#include "core/autocast.h"
#include "kernels/cpu/gelu.h"
#include "kernels/cpu/vmath.h"
#include "ops/binary.h"
#include "ops/elementwise_double.h"
#include "ops/grad_graph.h"
#include "ops/op_table.h"
#include "ops/op_utils.h"
#include "ops/view.h"

namespace lucid {

namespace {

// What an op accepts: Float rejects integers, FloatPromote computes them in float32, Int keeps
// integer dtypes (bool is rejected by all three).
enum class Domain { Float, FloatPromote, Int };
// What the backward reads besides the incoming gradient.
enum class Saves { Nothing, Input, Output };

// An op may add a dedicated kernel for contiguous float32 operands (vectorised with an ISA the
// generic loops are not compiled for): forward(x, y, n) and backward(g, saved, out, n).
template <class Op>
struct FlatF32 {
  static constexpr bool kNone = true;
};

constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402,
                 k2OverSqrtPi = 1.12837916709551257390;  // 2 / sqrt(pi), erf's derivative at 0

// Each op: its names, domain, what it saves, f(x) and df(g, saved) on accumulation types.
// f is instantiated for every dtype the domain allows; df only for float and double.
struct NegOp {
  static constexpr const char *kName = "neg", *kNode = "NegBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Nothing;
  template <class A> A f(A x) const { return -x; }
  template <class A> A df(A g, A) const { return -g; }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A, A) const { return A(0); }
};
struct AbsOp {
  static constexpr const char *kName = "abs", *kNode = "AbsBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return x < A(0) ? A(-x) : x; }
  // g sgn(x) as PyTorch: at 0 it is g * 0 (NaN for an infinite g, as in sqrt(abs(x)) at 0).
  template <class A> A df(A g, A x) const { return x > A(0) ? g : x < A(0) ? -g : g * A(0); }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};
struct ExpOp {
  static constexpr bool kVectorMath = true;
  static constexpr const char *kName = "exp", *kNode = "ExpBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const {
    if constexpr (std::is_same_v<A, float>) return kernels::exp_f32(x);
    else return std::exp(x);
  }
  template <class A> A df(A g, A y) const { return g * y; }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A) const { return g; }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr&) const {
    return v;
  }
};
struct LogOp {
  static constexpr const char *kName = "log", *kNode = "LogBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::log(x); }
  template <class A> A df(A g, A x) const { return g / x; }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A x) const { return -g / (x * x); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return neg(div(v, ddg::sq(x)));
  }
};
struct SqrtOp {
  static constexpr const char *kName = "sqrt", *kNode = "SqrtBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const { return std::sqrt(x); }
  template <class A> A df(A g, A y) const { return g / (A(2) * y); }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A y) const { return -g / (A(2) * y * y); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& y) const {
    return neg(div(v, ddg::scale(ddg::sq(y), 2.0)));
  }
};
struct RsqrtOp {
  static constexpr const char *kName = "rsqrt", *kNode = "RsqrtBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const { return A(1) / std::sqrt(x); }
  template <class A> A df(A g, A y) const { return A(-0.5) * g * y * y * y; }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A y) const { return A(-1.5) * g * y * y; }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& y) const {
    return ddg::scale(mul(v, ddg::sq(y)), -1.5);
  }
};
struct SinOp {
  static constexpr const char *kName = "sin", *kNode = "SinBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::sin(x); }
  template <class A> A df(A g, A x) const { return g * std::cos(x); }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A x) const { return -g * std::sin(x); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return neg(mul(v, lucid::sin(x)));
  }
};
struct CosOp {
  static constexpr const char *kName = "cos", *kNode = "CosBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::cos(x); }
  template <class A> A df(A g, A x) const { return -g * std::sin(x); }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A x) const { return -g * std::cos(x); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return neg(mul(v, lucid::cos(x)));
  }
};
template <class A> A fast_tanh(A x) {
  if constexpr (std::is_same_v<A, float>) return kernels::tanh_f32(x);
  else return std::tanh(x);
}
struct TanhOp {
  static constexpr bool kVectorMath = true;
  static constexpr const char *kName = "tanh", *kNode = "TanhBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const { return fast_tanh(x); }
  template <class A> A df(A g, A y) const { return g * (A(1) - y * y); }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A y) const { return A(-2) * g * y; }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& y) const {
    return ddg::scale(mul(v, y), -2.0);
  }
};
// NOTE: 1 / (1 + exp(-x)) overflows exp for x << 0; the two-branch form never does.
template <class A> A stable_sigmoid(A x) {
  if constexpr (std::is_same_v<A, float>) {
    return kernels::sigmoid_f32(x);  // the same two branches, vectorisable
  } else {
    if (x >= A(0)) return A(1) / (A(1) + std::exp(-x));
    A e = std::exp(x);
    return e / (A(1) + e);
  }
}
struct SigmoidOp {
  static constexpr bool kVectorMath = true;
  static constexpr const char *kName = "sigmoid", *kNode = "SigmoidBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const { return stable_sigmoid(x); }
  template <class A> A df(A g, A y) const { return g * y * (A(1) - y); }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A y) const { return g * (A(1) - A(2) * y); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& y) const {
    return mul(v, ddg::one_minus(ddg::scale(y, 2.0)));
  }
};
struct ReluOp {
  static constexpr const char *kName = "relu", *kNode = "ReluBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Output;  // y > 0 exactly where x > 0
  template <class A> A f(A x) const { return x < A(0) ? A(0) : x; }  // NaN stays NaN
  template <class A> A df(A g, A y) const { return y > A(0) ? g : A(0); }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};
// Two op types (exact and tanh form) so that each inner loop is branch-free; one schema "gelu".
template <bool Tanh>
struct GeluOpT {
  static constexpr const char *kName = "gelu", *kNode = "GeluBackward";
  static constexpr Domain kDomain = Domain::Float;
  static constexpr Saves kSaves = Saves::Input;
  static constexpr double kSqrt2OverPi = 0.79788456080286535588, kInvSqrt2 = 0.70710678118654752440,
                          kInvSqrt2Pi = 0.39894228040143267794, kCubic = 0.044715;
  // NOTE: float (float32 and the half types) takes kernels::normal_cdf_pdf_f32, which vectorises
  // and keeps relative accuracy where 1 + erf(x / sqrt 2) cancels (x << 0); float64 stays std::erf.
  template <class A> A f(A x) const {
    if constexpr (Tanh) return A(0.5) * x * (A(1) + fast_tanh(A(kSqrt2OverPi) * (x + A(kCubic) * x * x * x)));
    else if constexpr (std::is_same_v<A, float>) return float(double(x) * kernels::normal_cdf_pdf_f32(x).cdf);
    else return A(0.5) * x * (A(1) + std::erf(x * A(kInvSqrt2)));
  }
  template <class A> A df(A g, A x) const {
    if constexpr (Tanh) {
      A t = fast_tanh(A(kSqrt2OverPi) * (x + A(kCubic) * x * x * x));
      A du = A(kSqrt2OverPi) * (A(1) + A(3 * kCubic) * x * x);
      return g * (A(0.5) * (A(1) + t) + A(0.5) * x * (A(1) - t * t) * du);
    } else if constexpr (std::is_same_v<A, float>) {
      const kernels::NormalCdfPdf c = kernels::normal_cdf_pdf_f32(x);
      return float(double(g) * (c.cdf + double(x) * c.pdf));
    } else {
      A cdf = A(0.5) * (A(1) + std::erf(x * A(kInvSqrt2)));
      return g * (cdf + x * A(kInvSqrt2Pi) * std::exp(A(-0.5) * x * x));
    }
  }
  template <class A> A ddf(A g, A x) const {
    if constexpr (Tanh) {
      A t = std::tanh(A(kSqrt2OverPi) * (x + A(kCubic) * x * x * x));
      A du = A(kSqrt2OverPi) * (A(1) + A(3 * kCubic) * x * x), d2u = A(kSqrt2OverPi * 6 * kCubic) * x;
      return g * (A(1) - t * t) * (du - x * t * du * du + A(0.5) * x * d2u);
    } else {
      return g * A(kInvSqrt2Pi) * std::exp(A(-0.5) * x * x) * (A(2) - x * x);
    }
  }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr x2 = ddg::sq(x);
    if constexpr (Tanh) {
      const TensorImplPtr t = lucid::tanh(ddg::scale(add(x, ddg::scale(mul(x2, x), kCubic)), kSqrt2OverPi));
      const TensorImplPtr du = ddg::scale(add(ddg::c(1.0, x), ddg::scale(x2, 3 * kCubic)), kSqrt2OverPi);
      const TensorImplPtr inner = add(sub(du, mul(mul(x, t), ddg::sq(du))), ddg::scale(x2, 3 * kSqrt2OverPi * kCubic));
      return mul(mul(v, ddg::one_minus(ddg::sq(t))), inner);
    } else {
      return mul(ddg::scale(mul(v, lucid::exp(ddg::scale(x2, -0.5))), kInvSqrt2Pi), sub(ddg::c(2.0, x), x2));
    }
  }
};
template <>
struct FlatF32<GeluOpT<false>> {
  static void forward(const float* x, float* y, int64_t n) { kernels::gelu_forward_f32(x, y, n); }
  static void backward(const float* g, const float* x, float* out, int64_t n) { kernels::gelu_backward_f32(g, x, out, n); }
};
using GeluOp = GeluOpT<false>;
using GeluTanhOp = GeluOpT<true>;
struct SiluOp {
  static constexpr bool kVectorMath = true;
  static constexpr const char *kName = "silu", *kNode = "SiluBackward";
  static constexpr Domain kDomain = Domain::Float;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return x * stable_sigmoid(x); }
  template <class A> A df(A g, A x) const {
    A s = stable_sigmoid(x);
    return g * s * (A(1) + x * (A(1) - s));
  }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A g, A x) const {
    A s = stable_sigmoid(x);
    return g * s * (A(1) - s) * (A(2) + x * (A(1) - A(2) * s));
  }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr s = lucid::sigmoid(x);
    return mul(mul(v, mul(s, ddg::one_minus(s))), add(ddg::c(2.0, x), mul(x, ddg::one_minus(ddg::scale(s, 2.0)))));
  }
};
struct Log1pOp {
  static constexpr const char *kName = "log1p", *kNode = "Log1pBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::log1p(x); }
  template <class A> A df(A g, A x) const { return g / (A(1) + x); }
  template <class A> A ddf(A g, A x) const { return -g / ((A(1) + x) * (A(1) + x)); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return neg(div(v, ddg::sq(add(x, ddg::c(1.0, x)))));
  }
};
struct Expm1Op {
  static constexpr const char *kName = "expm1", *kNode = "Expm1Backward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const { return std::expm1(x); }
  template <class A> A df(A g, A y) const { return g * (y + A(1)); }
  template <class A> A ddf(A g, A) const { return g; }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr&) const {
    return v;
  }
};
struct ErfOp {
  static constexpr const char *kName = "erf", *kNode = "ErfBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const {
    if constexpr (std::is_same_v<A, float>) return kernels::erf_f32(x);
    else return std::erf(x);
  }
  template <class A> A df(A g, A x) const { return g * A(k2OverSqrtPi) * std::exp(-x * x); }
  template <class A> A ddf(A g, A x) const { return A(-2) * x * g * A(k2OverSqrtPi) * std::exp(-x * x); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return mul(ddg::scale(mul(x, v), -2.0 * k2OverSqrtPi), lucid::exp(neg(ddg::sq(x))));
  }
};
// The trigonometric, hyperbolic and base-2/10 functions: std:: on the accumulation type.
struct TanOp {
  static constexpr const char *kName = "tan", *kNode = "TanBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const { return std::tan(x); }
  template <class A> A df(A g, A y) const { return g * (A(1) + y * y); }
  template <class A> A ddf(A g, A y) const { return A(2) * g * y; }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& y) const {
    return ddg::scale(mul(v, y), 2.0);
  }
};
struct AsinOp {
  static constexpr const char *kName = "asin", *kNode = "AsinBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::asin(x); }
  template <class A> A df(A g, A x) const { return g / std::sqrt(A(1) - x * x); }
  template <class A> A ddf(A g, A x) const { return g * x / ((A(1) - x * x) * std::sqrt(A(1) - x * x)); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr d = ddg::one_minus(ddg::sq(x));
    return div(mul(v, x), mul(d, lucid::sqrt(d)));
  }
};
struct AcosOp {
  static constexpr const char *kName = "acos", *kNode = "AcosBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::acos(x); }
  template <class A> A df(A g, A x) const { return -g / std::sqrt(A(1) - x * x); }
  template <class A> A ddf(A g, A x) const { return -g * x / ((A(1) - x * x) * std::sqrt(A(1) - x * x)); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr d = ddg::one_minus(ddg::sq(x));
    return neg(div(mul(v, x), mul(d, lucid::sqrt(d))));
  }
};
struct AtanOp {
  static constexpr const char *kName = "atan", *kNode = "AtanBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::atan(x); }
  template <class A> A df(A g, A x) const { return g / (A(1) + x * x); }
  template <class A> A ddf(A g, A x) const { return A(-2) * g * x / ((A(1) + x * x) * (A(1) + x * x)); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return ddg::scale(div(mul(v, x), ddg::sq(add(ddg::sq(x), ddg::c(1.0, x)))), -2.0);
  }
};
struct SinhOp {
  static constexpr const char *kName = "sinh", *kNode = "SinhBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::sinh(x); }
  template <class A> A df(A g, A x) const { return g * std::cosh(x); }
  template <class A> A ddf(A g, A x) const { return g * std::sinh(x); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return mul(v, lucid::sinh(x));
  }
};
struct CoshOp {
  static constexpr const char *kName = "cosh", *kNode = "CoshBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::cosh(x); }
  template <class A> A df(A g, A x) const { return g * std::sinh(x); }
  template <class A> A ddf(A g, A x) const { return g * std::cosh(x); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return mul(v, lucid::cosh(x));
  }
};
struct AsinhOp {
  static constexpr const char *kName = "asinh", *kNode = "AsinhBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::asinh(x); }
  template <class A> A df(A g, A x) const { return g / std::sqrt(x * x + A(1)); }
  template <class A> A ddf(A g, A x) const { return -g * x / ((x * x + A(1)) * std::sqrt(x * x + A(1))); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr d = add(ddg::sq(x), ddg::c(1.0, x));
    return neg(div(mul(v, x), mul(d, lucid::sqrt(d))));
  }
};
struct AcoshOp {
  static constexpr const char *kName = "acosh", *kNode = "AcoshBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::acosh(x); }
  template <class A> A df(A g, A x) const { return g / std::sqrt(x * x - A(1)); }
  template <class A> A ddf(A g, A x) const { return -g * x / ((x * x - A(1)) * std::sqrt(x * x - A(1))); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr d = sub(ddg::sq(x), ddg::c(1.0, x));
    return neg(div(mul(v, x), mul(d, lucid::sqrt(d))));
  }
};
struct AtanhOp {
  static constexpr const char *kName = "atanh", *kNode = "AtanhBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::atanh(x); }
  template <class A> A df(A g, A x) const { return g / (A(1) - x * x); }
  template <class A> A ddf(A g, A x) const { return A(2) * g * x / ((A(1) - x * x) * (A(1) - x * x)); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return ddg::scale(div(mul(v, x), ddg::sq(ddg::one_minus(ddg::sq(x)))), 2.0);
  }
};
struct Log2Op {
  static constexpr const char *kName = "log2", *kNode = "Log2Backward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::log2(x); }
  template <class A> A df(A g, A x) const { return g / (x * A(kLn2)); }
  template <class A> A ddf(A g, A x) const { return -g / (x * x * A(kLn2)); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return neg(div(v, ddg::scale(ddg::sq(x), kLn2)));
  }
};
struct Log10Op {
  static constexpr const char *kName = "log10", *kNode = "Log10Backward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::log10(x); }
  template <class A> A df(A g, A x) const { return g / (x * A(kLn10)); }
  template <class A> A ddf(A g, A x) const { return -g / (x * x * A(kLn10)); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return neg(div(v, ddg::scale(ddg::sq(x), kLn10)));
  }
};
struct Exp2Op {
  static constexpr const char *kName = "exp2", *kNode = "Exp2Backward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Output;
  template <class A> A f(A x) const { return std::exp2(x); }
  template <class A> A df(A g, A y) const { return g * y * A(kLn2); }
  template <class A> A ddf(A g, A) const { return g * A(kLn2); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr&) const {
    return ddg::scale(v, kLn2);
  }
};
struct ErfcOp {
  static constexpr const char *kName = "erfc", *kNode = "ErfcBackward";
  static constexpr Domain kDomain = Domain::FloatPromote;
  static constexpr Saves kSaves = Saves::Input;
  template <class A> A f(A x) const { return std::erfc(x); }
  template <class A> A df(A g, A x) const { return -g * A(k2OverSqrtPi) * std::exp(-x * x); }
  template <class A> A ddf(A g, A x) const { return A(2) * x * g * A(k2OverSqrtPi) * std::exp(-x * x); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return mul(ddg::scale(mul(x, v), 2.0 * k2OverSqrtPi), lucid::exp(neg(ddg::sq(x))));
  }
};
// floor/ceil/trunc/round: piecewise constant, so the gradient is zero (PyTorch records a node
// that returns zeros). Integers pass through unchanged (round only with decimals = 0, as PyTorch).
template <class A, class F> A round_int(A x, F fn) {
  if constexpr (std::is_integral_v<A>) return x;
  else return fn(x);
}
struct FloorOp {
  static constexpr const char *kName = "floor", *kNode = "FloorBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Nothing;
  template <class A> A f(A x) const { return round_int(x, [](A v) { return std::floor(v); }); }
  template <class A> A df(A, A) const { return A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
};
struct CeilOp {
  static constexpr const char *kName = "ceil", *kNode = "CeilBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Nothing;
  template <class A> A f(A x) const { return round_int(x, [](A v) { return std::ceil(v); }); }
  template <class A> A df(A, A) const { return A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
};
struct TruncOp {
  static constexpr const char *kName = "trunc", *kNode = "TruncBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Nothing;
  template <class A> A f(A x) const { return round_int(x, [](A v) { return std::trunc(v); }); }
  template <class A> A df(A, A) const { return A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
};
// -1, 0 or 1 (0 for NaN); piecewise constant like floor: a node with a zero gradient (PyTorch's).
struct SignOp {
  static constexpr const char *kName = "sign", *kNode = "SignBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Nothing;
  template <class A> A f(A v) const { return A((A(0) < v) - (v < A(0))); }
  template <class A> A df(A, A) const { return A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
};
// Half to even (std::nearbyint in the default rounding mode). decimals != 0 follows PyTorch:
// nearbyint(x * 10^d) / 10^d for d > 0 and nearbyint(x / 10^-d) * 10^-d for d < 0.
struct RoundOp {
  static constexpr const char *kName = "round", *kNode = "RoundBackward";
  static constexpr Domain kDomain = Domain::Float;
  static constexpr Saves kSaves = Saves::Nothing;
  int64_t decimals = 0;
  double ten_pow = 1;
  template <class A> A f(A x) const {
    if (decimals == 0) return std::nearbyint(x);
    if (decimals > 0) return std::nearbyint(x * A(ten_pow)) / A(ten_pow);
    return std::nearbyint(x / A(ten_pow)) * A(ten_pow);
  }
  template <class A> A df(A, A) const { return A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
};
struct ClampOp {
  static constexpr const char *kName = "clamp", *kNode = "ClampBackward";
  static constexpr Domain kDomain = Domain::Int;
  static constexpr Saves kSaves = Saves::Input;
  bool has_lo = false, has_hi = false;
  double lo = 0, hi = 0;
  // Bounds convert saturating (an int64 tensor clamped at 1e300 must not overflow).
  template <class A> A f(A x) const {  // comparisons are false for NaN: NaN passes through
    if (has_lo && x < kernels::convert<A>(lo)) x = kernels::convert<A>(lo);
    if (has_hi && x > kernels::convert<A>(hi)) x = kernels::convert<A>(hi);
    return x;
  }
  template <class A> A df(A g, A x) const {
    return ((!has_lo || x >= A(lo)) && (!has_hi || x <= A(hi))) ? g : A(0);
  }
  // d(df)/d(saved): the second derivative times g (double backward).
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(saved) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};

template <class Op>
struct UnaryBackward : FuncOp<UnaryBackward<Op>, 1> {
  static const OpSchema& schema_v1;
  Op op;
  DType in_dtype = DType::Float32;
  const char* name() const override { return Op::kNode; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g0) {
    const TensorImplPtr& s = this->saved_[0];
    auto g = s ? cast_raw(g0, s->dtype) : g0;
    if constexpr (!requires { FlatF32<Op>::kNone; }) {
      if (g->dtype == DType::Float32 && g->is_contiguous() && s && s->is_contiguous()) {
        auto out = empty(g->shape, g->dtype);
        FlatF32<Op>::backward(g->template data<float>(), s->template data<float>(), out->template data<float>(), out->numel());
        return {cast_raw(out, in_dtype)};
      }
    }
    return {cast_raw(elementwise_backward(Op::kName, g, s, op), in_dtype)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g);
};

template <class Op>
std::vector<TensorImplPtr> UnaryBackward<Op>::apply_graph(const TensorImplPtr& g) {
  if constexpr (std::is_same_v<Op, NegOp>) {  // -g
    return {to(neg(g), in_dtype, false)};
  } else if constexpr (Op::kSaves == Saves::Nothing) {  // the rounding ops: 0 * g, recorded
    return {to(mul(g, constant(0.0, g->dtype)), in_dtype, false)};
  } else {
    std::vector<TensorImplPtr> r;
    {
      NoGradGuard no_grad;
      r = apply(g);
    }
    TensorImplPtr s = Op::kSaves == Saves::Output ? this->saved_output(0) : this->saved_[0];
    // the detached alias saved_[0] is what the node keeps: the graph-carrying one would be a cycle
    record_elementwise_double(r[0], g, s, this->saved_[0], op, Op::kNode);
    return r;
  }
}

const OpSchema& kIsnanSchema = register_schema(
    {.name = "isnan", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});
const OpSchema& kIsfiniteSchema = register_schema(
    {.name = "isfinite", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

// out[i] = op.f(x[i]) in x's dtype (x already in the compute dtype); `out` may alias x.
template <class Op>
void run_forward(const TensorImplPtr& x, const TensorImplPtr& out, const Op& op) {
  if constexpr (!requires { FlatF32<Op>::kNone; }) {
    if (x->dtype == DType::Float32 && same_dense_layout(*x, *out)) {
      FlatF32<Op>::forward(x->template data<float>(), out->template data<float>(), x->numel());
      return;
    }
  }
  // bool never gets here (domain_dtype refuses it for every domain that keeps its dtype)
  elementwise_forward<Op::kDomain == Domain::Int ? Dtypes::NoBool : Dtypes::Float>(Op::kName, x, out, op);
}

// The dtype an op computes in for input dtype `d` (before autocast).
template <class Op>
DType domain_dtype(DType d) {
  LUCID_CHECK_DTYPE(d != DType::Bool || Op::kDomain == Domain::FloatPromote, Op::kName,
                    ": not supported for bool tensors");
  if (is_floating(d)) return d;
  LUCID_CHECK_DTYPE(Op::kDomain != Domain::Float, Op::kName, ": expected a floating input, got ",
                    dtype_name(d), " (convert with .float() first)");
  return Op::kDomain == Domain::FloatPromote ? kDefaultFloat : d;
}

template <class Op>
TensorImplPtr unary_op(const TensorImplPtr& x, const Op& op = Op{}) {
  using Node = UnaryBackward<Op>;
  auto xc = cast_raw(x, compute_dtype(Node::schema_v1, domain_dtype<Op>(x->dtype)));
  auto out = empty_elementwise(xc->shape, xc->dtype, {xc.get()});
  run_forward(xc, out, op);
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<Node>();
    n->op = op;
    n->in_dtype = x->dtype;
    n->set_inputs({x});
    if constexpr (Op::kSaves == Saves::Input) n->save(0, xc);
    if constexpr (Op::kSaves == Saves::Output) n->save_output(0, out);
    attach_node(out, std::move(n));
  }
  return out;
}

template <class Op>
TensorImplPtr unary_inplace(const TensorImplPtr& x, const Op& op, const char* name) {
  check_no_internal_overlap(x);
  if (inplace_records(x, {}, name))  // an op that saves its input gets a copy of x's old value
    return rebase_inplace(x, unary_op(Op::kSaves == Saves::Input ? clone(x) : x, op), name);
  check_inplace(x, name);
  domain_dtype<Op>(x->dtype);
  run_forward(x, x, op);
  x->bump_version();
  return x;
}

ClampOp clamp_op(std::optional<double> lo, std::optional<double> hi, const char* name) {
  LUCID_CHECK(lo || hi, name, ": at least one of 'min' or 'max' must not be None");
  ClampOp op;
  op.has_lo = lo.has_value(), op.has_hi = hi.has_value();
  op.lo = lo.value_or(0.0), op.hi = hi.value_or(0.0);
  return op;
}

}  // namespace

// ---- the op table -----------------------------------------------------------------------------
// LUCID_UNARY_OP(Op, name, policy, doc): the schema {name, 1, policy, produces_grad}, the function
// TensorImplPtr name(x) and its entry in the op table (ops/op_table.h: pylucid._C.name and
// Tensor.name, documented by `doc`). An op with checks or arguments of its own writes its function
// and enters it with LUCID_REGISTER_UNARY(python_name, function, doc).
#define LUCID_UNARY_SCHEMA(Op, op_name, policy)                                                \
  template <>                                                                                  \
  const OpSchema& UnaryBackward<Op>::schema_v1 = register_schema(                              \
      {.name = op_name, .version = 1, .amp_policy = AmpPolicy::policy, .produces_grad = true}); \
  template <>                                                                                  \
  const OpSchema& ElementwiseBackwardBackward<Op>::schema_v1 = UnaryBackward<Op>::schema_v1;
#define LUCID_REGISTER_UNARY(py_name, fn, doc) \
  [[maybe_unused]] static const bool registered_##py_name = register_op(UnaryEntry{#py_name, &fn, doc});
#define LUCID_UNARY_OP(Op, name, policy, doc)                                 \
  LUCID_UNARY_SCHEMA(Op, #name, policy)                                       \
  TensorImplPtr name(const TensorImplPtr& x) { return unary_op<Op>(x); }      \
  LUCID_REGISTER_UNARY(name, name, doc)

LUCID_UNARY_OP(AbsOp, abs, KeepInput,
               "|input|, elementwise; the gradient at 0 is 0.")
LUCID_UNARY_OP(ExpOp, exp, ForceFP32,
               "e^input, elementwise (integers promote to float32).")
LUCID_UNARY_OP(LogOp, log, ForceFP32,
               "Natural logarithm, elementwise (integers promote to float32).")
LUCID_UNARY_OP(SqrtOp, sqrt, KeepInput,
               "Square root, elementwise (integers promote to float32).")
LUCID_UNARY_OP(RsqrtOp, rsqrt, ForceFP32,
               "1 / sqrt(input), elementwise (integers promote to float32).")
LUCID_UNARY_OP(SinOp, sin, KeepInput,
               "Sine, elementwise (integers promote to float32).")
LUCID_UNARY_OP(CosOp, cos, KeepInput,
               "Cosine, elementwise (integers promote to float32).")
LUCID_UNARY_OP(TanhOp, tanh, KeepInput,
               "Hyperbolic tangent, elementwise (integers promote to float32).")
LUCID_UNARY_OP(SigmoidOp, sigmoid, KeepInput,
               "1 / (1 + e^-input), elementwise, without overflow for large |input|.")
LUCID_UNARY_OP(ReluOp, relu, KeepInput,
               "max(input, 0), elementwise; NaN stays NaN, the gradient at 0 is 0.\n\n"
               ">>> import pylucid\n>>> pylucid.tensor([-1.0, 2.0]).relu().tolist()\n[0.0, 2.0]")
LUCID_UNARY_OP(Log1pOp, log1p, ForceFP32,
               "log(1 + input), accurate for small input (integers promote to float32).")
LUCID_UNARY_OP(Expm1Op, expm1, ForceFP32,
               "exp(input) - 1, accurate for small input (integers promote to float32).")
LUCID_UNARY_OP(ErfOp, erf, ForceFP32,
               "The error function 2/sqrt(pi) * integral_0^x exp(-t^2) dt (integers promote to float32).")
LUCID_UNARY_OP(FloorOp, floor, KeepInput,
               "Largest integer <= input, in input's dtype (integers pass through); zero gradient.")
LUCID_UNARY_OP(CeilOp, ceil, KeepInput,
               "Smallest integer >= input, in input's dtype (integers pass through); zero gradient.")
LUCID_UNARY_OP(TruncOp, trunc, KeepInput,
               "input rounded toward zero, in input's dtype (integers pass through); zero gradient.")
LUCID_UNARY_OP(TanOp, tan, KeepInput,
               "Tangent, elementwise (integers promote to float32).")
LUCID_UNARY_OP(AsinOp, asin, KeepInput,
               "Arcsine (NaN outside [-1, 1]), elementwise (integers promote to float32).")
LUCID_UNARY_OP(AcosOp, acos, KeepInput,
               "Arccosine (NaN outside [-1, 1]), elementwise (integers promote to float32).")
LUCID_UNARY_OP(AtanOp, atan, KeepInput,
               "Arctangent, elementwise (integers promote to float32).")
LUCID_UNARY_OP(SinhOp, sinh, KeepInput,
               "Hyperbolic sine, elementwise (integers promote to float32).")
LUCID_UNARY_OP(CoshOp, cosh, KeepInput,
               "Hyperbolic cosine, elementwise (integers promote to float32).")
LUCID_UNARY_OP(AsinhOp, asinh, KeepInput,
               "Inverse hyperbolic sine, elementwise (integers promote to float32).")
LUCID_UNARY_OP(AcoshOp, acosh, KeepInput,
               "Inverse hyperbolic cosine (NaN below 1), elementwise (integers promote to float32).")
LUCID_UNARY_OP(AtanhOp, atanh, KeepInput,
               "Inverse hyperbolic tangent (inf at +-1, NaN outside), elementwise (integers promote to float32).")
LUCID_UNARY_OP(Log2Op, log2, ForceFP32,
               "Base-2 logarithm, elementwise (integers promote to float32).")
LUCID_UNARY_OP(Log10Op, log10, ForceFP32,
               "Base-10 logarithm, elementwise (integers promote to float32).")
LUCID_UNARY_OP(Exp2Op, exp2, ForceFP32,
               "2^input, elementwise (integers promote to float32).")
LUCID_UNARY_OP(ErfcOp, erfc, ForceFP32,
               "1 - erf(input), accurate where erf is near 1, elementwise (integers promote to float32).")
LUCID_REGISTER_UNARY(arcsin, asin, "Alias of asin.")
LUCID_REGISTER_UNARY(arccos, acos, "Alias of acos.")
LUCID_REGISTER_UNARY(arctan, atan, "Alias of atan.")
LUCID_REGISTER_UNARY(arcsinh, asinh, "Alias of asinh.")
LUCID_REGISTER_UNARY(arccosh, acosh, "Alias of acosh.")
LUCID_REGISTER_UNARY(arctanh, atanh, "Alias of atanh.")
LUCID_REGISTER_UNARY(fix, trunc, "Alias of trunc.")

LUCID_UNARY_SCHEMA(NegOp, "neg", KeepInput)
TensorImplPtr neg(const TensorImplPtr& x) {
  LUCID_CHECK_DTYPE(x->dtype != DType::Bool, "neg: negation, the `-` operator, on a bool tensor is not supported; "
                    "use the `~` or logical_not() operator instead");
  return unary_op<NegOp>(x);
}
LUCID_REGISTER_UNARY(neg, neg, "-input, elementwise (integers stay integers; bool is refused).")
LUCID_REGISTER_UNARY(negative, neg, "Alias of neg.")

LUCID_UNARY_SCHEMA(SiluOp, "silu", KeepInput)
TensorImplPtr silu(const TensorImplPtr& x) { return unary_op<SiluOp>(x); }

LUCID_UNARY_SCHEMA(RoundOp, "round", KeepInput)
TensorImplPtr round(const TensorImplPtr& x, int64_t decimals) {
  LUCID_CHECK(decimals >= -300 && decimals <= 300, "round: decimals must lie in [-300, 300], got ", decimals);
  // An int64 tensor rounds to itself when decimals is 0 (PyTorch refuses decimals and bool).
  if (x->dtype == DType::Int64 && decimals == 0) return trunc(x);
  RoundOp op;
  op.decimals = decimals;
  op.ten_pow = std::pow(10.0, double(decimals < 0 ? -decimals : decimals));
  return unary_op(x, op);
}

LUCID_UNARY_SCHEMA(GeluOp, "gelu", KeepInput)
template <>
const OpSchema& UnaryBackward<GeluTanhOp>::schema_v1 = UnaryBackward<GeluOp>::schema_v1;  // same op
template <>
const OpSchema& ElementwiseBackwardBackward<GeluTanhOp>::schema_v1 = UnaryBackward<GeluOp>::schema_v1;
TensorImplPtr gelu(const TensorImplPtr& x, const std::string& approximate) {
  LUCID_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '",
              approximate, "'");
  return approximate == "tanh" ? unary_op<GeluTanhOp>(x) : unary_op<GeluOp>(x);
}

LUCID_UNARY_SCHEMA(ClampOp, "clamp", KeepInput)
TensorImplPtr clamp(const TensorImplPtr& x, std::optional<double> lo, std::optional<double> hi) {
  return unary_op(x, clamp_op(lo, hi, "clamp"));
}

TensorImplPtr relu_(const TensorImplPtr& x) { return unary_inplace(x, ReluOp{}, "relu_"); }
TensorImplPtr clamp_(const TensorImplPtr& x, std::optional<double> lo, std::optional<double> hi) {
  return unary_inplace(x, clamp_op(lo, hi, "clamp_"), "clamp_");
}

LUCID_UNARY_SCHEMA(SignOp, "sign", KeepInput)
TensorImplPtr sign(const TensorImplPtr& x) {
  if (x->dtype == DType::Bool) return unary_apply("sign", x, []<class A>() { return [](A v) { return v; }; });
  return unary_op<SignOp>(x);
}

namespace {
// A bool test of each element: pred on floating values; integer and bool elements, never NaN or
// infinite, all give `integer_result`.
template <class Pred>
TensorImplPtr float_test(const char* name, const TensorImplPtr& x, bool integer_result, Pred pred) {
  return unary_apply<true>(name, x, [integer_result, pred]<class A>() {
    return [integer_result, pred](A v) {
      if constexpr (std::is_floating_point_v<A>) return bool(pred(v));
      else return (void)v, integer_result;
    };
  });
}
}  // namespace

TensorImplPtr isnan(const TensorImplPtr& x) {
  (void)kIsnanSchema;
  return float_test("isnan", x, false, [](auto v) { return std::isnan(v); });
}
TensorImplPtr isinf(const TensorImplPtr& x) {
  (void)kIsfiniteSchema;
  return float_test("isinf", x, false, [](auto v) { return std::isinf(v); });
}
TensorImplPtr isposinf(const TensorImplPtr& x) {
  return float_test("isposinf", x, false, [](auto v) { return std::isinf(v) && v > 0; });
}
TensorImplPtr isneginf(const TensorImplPtr& x) {
  return float_test("isneginf", x, false, [](auto v) { return std::isinf(v) && v < 0; });
}
TensorImplPtr isfinite(const TensorImplPtr& x) {
  (void)kIsfiniteSchema;
  return float_test("isfinite", x, true, [](auto v) { return std::isfinite(v); });
}

TensorImplPtr signbit(const TensorImplPtr& x) {
  return unary_apply<true>("signbit", x, []<class A>() {
    return [](A v) {
      // NOTE: std::signbit here vectorises into an insn gcc 12 cannot emit (ICE); copysign reads the same bit.
      if constexpr (std::is_floating_point_v<A>) return std::copysign(A(1), v) < A(0);
      else if constexpr (std::is_signed_v<A>) return v < A(0);
      else return (void)v, false;
    };
  });
}

LUCID_REGISTER_UNARY(sign, sign, "-1, 0 or 1 by the sign of input (0 for NaN); zero gradient.")
LUCID_REGISTER_UNARY(isnan, isnan, "Bool tensor: True where input is NaN.")
LUCID_REGISTER_UNARY(isfinite, isfinite, "Bool tensor: True where input is neither inf nor NaN.")
LUCID_REGISTER_UNARY(isinf, isinf, "Bool tensor: True where input is +inf or -inf.")
LUCID_REGISTER_UNARY(isposinf, isposinf, "Bool tensor: True where input is +inf.")
LUCID_REGISTER_UNARY(isneginf, isneginf, "Bool tensor: True where input is -inf.")
LUCID_REGISTER_UNARY(signbit, signbit, "Bool tensor: True where the sign bit is set (negative numbers and -0.0).")

}  // namespace lucid
