#include "ops/activation.h"

#include <cmath>

#include "core/autocast.h"
#include "kernels/cpu/vmath.h"
#include "ops/binary.h"
#include "ops/elementwise_double.h"
#include "ops/op_utils.h"
#include "ops/unary.h"

namespace lucid {

namespace {

// float32 takes the vectorisable exp/tanh/sigmoid of vmath.h; other accumulation types (double)
// the standard library.
template <class A> A vexp(A x) {
  if constexpr (std::is_same_v<A, float>) return kernels::exp_f32(x);
  else return std::exp(x);
}
template <class A> A vtanh(A x) {
  if constexpr (std::is_same_v<A, float>) return kernels::tanh_f32(x);
  else return std::tanh(x);
}
template <class A> A vsigmoid(A x) {
  if constexpr (std::is_same_v<A, float>) {
    return kernels::sigmoid_f32(x);
  } else {  // NOTE: two branches so that e^-x never overflows
    if (x >= A(0)) return A(1) / (A(1) + std::exp(-x));
    A e = std::exp(x);
    return e / (A(1) + e);
  }
}
// log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|).
template <class A> A softplus1(A x) { return (x > A(0) ? x : A(0)) + std::log1p(vexp(-std::fabs(x))); }

// Each op: its names, parameters a/b (as PyTorch orders them), f(x) and df(g, x) over the
// accumulation type.
struct OpBase {
  double a = 0, b = 0;
};
struct LeakyReluOp : OpBase {
  static constexpr const char *kName = "leaky_relu", *kNode = "LeakyReluBackward";
  template <class A> A f(A x) const { return x > A(0) ? x : x * A(a); }
  template <class A> A df(A g, A x) const { return x > A(0) ? g : g * A(a); }
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};
struct EluOp : OpBase {  // a = alpha, b = scale (1 for elu, SELU's constant for selu)
  static constexpr const char *kName = "elu", *kNode = "EluBackward";
  template <class A> A f(A x) const { return A(b) * (x > A(0) ? x : A(a) * (vexp(x) - A(1))); }
  template <class A> A df(A g, A x) const { return x > A(0) ? g * A(b) : g * A(b) * A(a) * vexp(x); }
  template <class A> A ddf(A g, A x) const { return x > A(0) ? A(0) : g * A(b) * A(a) * vexp(x); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return mul(ddg::mask(x, CompareOp::Le, 0.0), ddg::scale(mul(v, lucid::exp(x)), a * b));
  }
};
struct CeluOp : OpBase {  // a = alpha
  static constexpr const char *kName = "celu", *kNode = "CeluBackward";
  template <class A> A f(A x) const { return x > A(0) ? x : A(a) * (vexp(x / A(a)) - A(1)); }
  template <class A> A df(A g, A x) const { return x > A(0) ? g : g * vexp(x / A(a)); }
  template <class A> A ddf(A g, A x) const { return x > A(0) ? A(0) : g * vexp(x / A(a)) / A(a); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    return mul(ddg::mask(x, CompareOp::Le, 0.0), ddg::scale(mul(v, lucid::exp(ddg::scale(x, 1.0 / a))), 1.0 / a));
  }
};
struct SoftplusOp : OpBase {  // a = beta, b = threshold
  static constexpr const char *kName = "softplus", *kNode = "SoftplusBackward";
  template <class A> A f(A x) const { return x * A(a) > A(b) ? x : softplus1(x * A(a)) / A(a); }
  template <class A> A df(A g, A x) const { return x * A(a) > A(b) ? g : g * vsigmoid(x * A(a)); }
  template <class A> A ddf(A g, A x) const {
    if (x * A(a) > A(b)) return A(0);
    A s = vsigmoid(x * A(a));
    return g * A(a) * s * (A(1) - s);
  }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr s = lucid::sigmoid(ddg::scale(x, a));
    return mul(ddg::mask(ddg::scale(x, a), CompareOp::Le, b), ddg::scale(mul(v, mul(s, ddg::one_minus(s))), a));
  }
};
struct LogSigmoidOp : OpBase {
  static constexpr const char *kName = "logsigmoid", *kNode = "LogSigmoidBackward";
  template <class A> A f(A x) const { return -softplus1(-x); }
  template <class A> A df(A g, A x) const { return g * vsigmoid(-x); }
  template <class A> A ddf(A g, A x) const {
    A s = vsigmoid(-x);
    return -g * s * (A(1) - s);
  }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr s = lucid::sigmoid(neg(x));
    return neg(mul(v, mul(s, ddg::one_minus(s))));
  }
};
struct HardtanhOp : OpBase {  // a = min_val, b = max_val
  static constexpr const char *kName = "hardtanh", *kNode = "HardtanhBackward";
  template <class A> A f(A x) const { return x < A(a) ? A(a) : x > A(b) ? A(b) : x; }  // NaN passes
  template <class A> A df(A g, A x) const { return (x > A(a) && x < A(b)) ? g : A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};
struct MishOp : OpBase {
  static constexpr const char *kName = "mish", *kNode = "MishBackward";
  template <class A> A f(A x) const { return x * vtanh(softplus1(x)); }
  template <class A> A df(A g, A x) const {
    A t = vtanh(softplus1(x));
    return g * (t + x * vsigmoid(x) * (A(1) - t * t));
  }
  template <class A> A ddf(A g, A x) const {
    A t = vtanh(softplus1(x)), s = vsigmoid(x);
    return g * (A(1) - t * t) * s * (A(2) + x * (A(1) - s) - A(2) * x * t * s);
  }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr t = lucid::tanh(softplus(x, 1.0, 20.0)), s = lucid::sigmoid(x);
    const TensorImplPtr inner = sub(add(ddg::c(2.0, x), mul(x, ddg::one_minus(s))), ddg::scale(mul(mul(x, t), s), 2.0));
    return mul(mul(mul(v, ddg::one_minus(ddg::sq(t))), s), inner);
  }
};
struct HardsigmoidOp : OpBase {
  static constexpr const char *kName = "hardsigmoid", *kNode = "HardsigmoidBackward";
  template <class A> A f(A x) const { return x <= A(-3) ? A(0) : x >= A(3) ? A(1) : x / A(6) + A(0.5); }
  template <class A> A df(A g, A x) const { return (x > A(-3) && x < A(3)) ? g / A(6) : A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};
struct HardswishOp : OpBase {
  static constexpr const char *kName = "hardswish", *kNode = "HardswishBackward";
  // x * 0 below -3, as PyTorch's x * relu6(x + 3) / 6: -0.0 there (printed "-0."), NaN for NaN.
  template <class A> A f(A x) const { return x <= A(-3) ? x * A(0) : x >= A(3) ? x : x * (x + A(3)) / A(6); }
  // PyTorch's conventions at the kinks: 0 at -3, 1 at 3.
  template <class A> A df(A g, A x) const {
    return x <= A(-3) ? A(0) : x < A(3) ? g * (x / A(3) + A(0.5)) : g;
  }
  template <class A> A ddf(A g, A x) const { return (x > A(-3) && x < A(3)) ? g / A(3) : A(0); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr inside = mul(ddg::mask(x, CompareOp::Gt, -3.0), ddg::mask(x, CompareOp::Lt, 3.0));
    return ddg::scale(mul(v, inside), 1.0 / 3.0);
  }
};
struct SoftsignOp : OpBase {
  static constexpr const char *kName = "softsign", *kNode = "SoftsignBackward";
  template <class A> A f(A x) const { return x / (A(1) + std::fabs(x)); }
  template <class A> A df(A g, A x) const {
    A d = A(1) + std::fabs(x);
    return g / (d * d);
  }
  template <class A> A ddf(A g, A x) const {
    A d = A(1) + std::fabs(x);
    return A(-2) * g * (x > A(0) ? A(1) : x < A(0) ? A(-1) : A(0)) / (d * d * d);
  }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr d = add(ddg::c(1.0, x), lucid::abs(x));
    return ddg::scale(div(mul(v, sign(x)), mul(d, ddg::sq(d))), -2.0);
  }
};
struct TanhshrinkOp : OpBase {
  static constexpr const char *kName = "tanhshrink", *kNode = "TanhshrinkBackward";
  template <class A> A f(A x) const { return x - vtanh(x); }
  template <class A> A df(A g, A x) const {
    A t = vtanh(x);
    return g * t * t;
  }
  template <class A> A ddf(A g, A x) const {
    A t = vtanh(x);
    return A(2) * g * t * (A(1) - t * t);
  }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr& v, const TensorImplPtr& x) const {
    const TensorImplPtr t = lucid::tanh(x);
    return ddg::scale(mul(mul(v, t), ddg::one_minus(ddg::sq(t))), 2.0);
  }
};
struct ThresholdOp : OpBase {  // a = threshold, b = value
  static constexpr const char *kName = "threshold", *kNode = "ThresholdBackward";
  template <class A> A f(A x) const { return x > A(a) ? x : A(b); }
  template <class A> A df(A g, A x) const { return x > A(a) ? g : A(0); }
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};
struct HardshrinkOp : OpBase {  // a = lambd
  static constexpr const char *kName = "hardshrink", *kNode = "HardshrinkBackward";
  template <class A> A f(A x) const { return (x >= -A(a) && x <= A(a)) ? A(0) : x; }
  template <class A> A df(A g, A x) const { return (x >= -A(a) && x <= A(a)) ? A(0) : g; }
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};
struct SoftshrinkOp : OpBase {  // a = lambd
  static constexpr const char *kName = "softshrink", *kNode = "SoftshrinkBackward";
  // x * 0 inside [-lambd, lambd], as PyTorch's: -0.0 for negative x, NaN for NaN.
  template <class A> A f(A x) const { return x > A(a) ? x - A(a) : x < -A(a) ? x + A(a) : x * A(0); }
  template <class A> A df(A g, A x) const { return (x >= -A(a) && x <= A(a)) ? A(0) : g; }
  template <class A> A ddf(A, A) const { return A(0); }
  // d(df)/d(x) written with recorded ops (third order and beyond).
  TensorImplPtr ddf_graph(const TensorImplPtr&, const TensorImplPtr&) const {
    return nullptr;
  }
};

template <class Op>
struct ActivationBackward : FuncOp<ActivationBackward<Op>, 1> {
  static const OpSchema& schema_v1;
  Op op;
  DType in_dtype = DType::Float32;
  const char* name() const override { return Op::kNode; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g0) {
    const TensorImplPtr& x = this->saved_[0];
    return {cast_raw(elementwise_backward(Op::kName, cast_raw(g0, x->dtype), x, op), in_dtype)};
  }
  // create_graph: the fused first-order values plus an ElementwiseBackwardBackward node.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    std::vector<TensorImplPtr> r;
    {
      NoGradGuard no_grad;
      r = apply(g);
    }
    record_elementwise_double(r[0], g, this->saved_[0], this->saved_[0], op, Op::kNode);
    return r;
  }
};

#define LUCID_ACT_SCHEMA(Op, op_name)                                          \
  template <>                                                                  \
  const OpSchema& ActivationBackward<Op>::schema_v1 = register_schema(         \
      {.name = op_name, .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true}); \
  template <>                                                                  \
  const OpSchema& ElementwiseBackwardBackward<Op>::schema_v1 = ActivationBackward<Op>::schema_v1;
LUCID_ACT_SCHEMA(LeakyReluOp, "leaky_relu")
LUCID_ACT_SCHEMA(EluOp, "elu")
LUCID_ACT_SCHEMA(CeluOp, "celu")
LUCID_ACT_SCHEMA(SoftplusOp, "softplus")
LUCID_ACT_SCHEMA(LogSigmoidOp, "logsigmoid")
LUCID_ACT_SCHEMA(HardtanhOp, "hardtanh")
LUCID_ACT_SCHEMA(MishOp, "mish")
LUCID_ACT_SCHEMA(HardsigmoidOp, "hardsigmoid")
LUCID_ACT_SCHEMA(HardswishOp, "hardswish")
LUCID_ACT_SCHEMA(SoftsignOp, "softsign")
LUCID_ACT_SCHEMA(TanhshrinkOp, "tanhshrink")
LUCID_ACT_SCHEMA(ThresholdOp, "threshold")
LUCID_ACT_SCHEMA(HardshrinkOp, "hardshrink")
LUCID_ACT_SCHEMA(SoftshrinkOp, "softshrink")
#undef LUCID_ACT_SCHEMA

template <class Op>
void check_float(const TensorImplPtr& x) {
  LUCID_CHECK_DTYPE(is_floating(x->dtype), Op::kName, ": expected a floating input, got ", dtype_name(x->dtype),
                    " (convert with .float() first)");
}

template <class Op>
TensorImplPtr act(const TensorImplPtr& x, double a = 0, double b = 0) {
  using Node = ActivationBackward<Op>;
  check_float<Op>(x);
  Op op;
  op.a = a, op.b = b;
  auto xc = cast_raw(x, compute_dtype(Node::schema_v1, x->dtype));
  auto out = empty_elementwise(xc->shape, xc->dtype, {xc.get()});
  elementwise_forward<Dtypes::Float>(Op::kName, xc, out, op);
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<Node>();
    n->op = op;
    n->in_dtype = x->dtype;
    n->set_inputs({x});
    n->save(0, xc);
    attach_node(out, std::move(n));
  }
  return out;
}

template <class Op>
TensorImplPtr act_inplace(const TensorImplPtr& x, const char* name, double a = 0, double b = 0) {
  check_inplace(x, name);
  check_float<Op>(x);
  Op op;
  op.a = a, op.b = b;
  elementwise_forward<Dtypes::Float>(Op::kName, x, x, op);
  x->bump_version();
  return x;
}

// SELU's constants (Klambauer et al.), as PyTorch spells them.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

TensorImplPtr leaky_relu(const TensorImplPtr& x, double s) { return act<LeakyReluOp>(x, s); }
TensorImplPtr elu(const TensorImplPtr& x, double alpha) { return act<EluOp>(x, alpha, 1.0); }
TensorImplPtr selu(const TensorImplPtr& x) { return act<EluOp>(x, kSeluAlpha, kSeluScale); }
TensorImplPtr celu(const TensorImplPtr& x, double alpha) {
  LUCID_CHECK(alpha != 0, "celu: alpha must not be 0 (it divides the input)");
  return act<CeluOp>(x, alpha);
}
TensorImplPtr softplus(const TensorImplPtr& x, double beta, double threshold) {
  LUCID_CHECK(beta != 0, "softplus: beta must not be 0 (it divides the result)");
  return act<SoftplusOp>(x, beta, threshold);
}
TensorImplPtr logsigmoid(const TensorImplPtr& x) { return act<LogSigmoidOp>(x); }
TensorImplPtr hardtanh(const TensorImplPtr& x, double min_val, double max_val) {
  LUCID_CHECK(min_val <= max_val, "hardtanh: min_val (", min_val, ") must be less than or equal to max_val (",
              max_val, ")");
  return act<HardtanhOp>(x, min_val, max_val);
}
TensorImplPtr mish(const TensorImplPtr& x) { return act<MishOp>(x); }
TensorImplPtr hardsigmoid(const TensorImplPtr& x) { return act<HardsigmoidOp>(x); }
TensorImplPtr hardswish(const TensorImplPtr& x) { return act<HardswishOp>(x); }
TensorImplPtr softsign(const TensorImplPtr& x) { return act<SoftsignOp>(x); }
TensorImplPtr tanhshrink(const TensorImplPtr& x) { return act<TanhshrinkOp>(x); }
TensorImplPtr threshold(const TensorImplPtr& x, double t, double value) { return act<ThresholdOp>(x, t, value); }
TensorImplPtr hardshrink(const TensorImplPtr& x, double lambd) { return act<HardshrinkOp>(x, lambd); }
TensorImplPtr softshrink(const TensorImplPtr& x, double lambd) {
  LUCID_CHECK(lambd >= 0, "softshrink: lambd must be non-negative, got ", lambd);
  return act<SoftshrinkOp>(x, lambd);
}

TensorImplPtr activation_(const TensorImplPtr& x, const std::string& op, double a, double b) {
  if (op == "leaky_relu") return act_inplace<LeakyReluOp>(x, "leaky_relu_", a);
  if (op == "elu") return act_inplace<EluOp>(x, "elu_", a, 1.0);
  if (op == "selu") return act_inplace<EluOp>(x, "selu_", kSeluAlpha, kSeluScale);
  if (op == "celu") {
    LUCID_CHECK(a != 0, "celu_: alpha must not be 0 (it divides the input)");
    return act_inplace<CeluOp>(x, "celu_", a);
  }
  if (op == "hardtanh") {
    LUCID_CHECK(a <= b, "hardtanh_: min_val (", a, ") must be less than or equal to max_val (", b, ")");
    return act_inplace<HardtanhOp>(x, "hardtanh_", a, b);
  }
  if (op == "hardsigmoid") return act_inplace<HardsigmoidOp>(x, "hardsigmoid_");
  if (op == "hardswish") return act_inplace<HardswishOp>(x, "hardswish_");
  if (op == "threshold") return act_inplace<ThresholdOp>(x, "threshold_", a, b);
  if (op == "mish") return act_inplace<MishOp>(x, "mish_");
  LUCID_CHECK(false, "activation_: no in-place form of '", op, "'");
  return x;
}

}  // namespace lucid
