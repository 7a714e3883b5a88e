#include "ops/binary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>

#include "ops/grad_graph.h"
#include "ops/join.h"
#include "ops/op_table.h"
#include "ops/op_utils.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

namespace {

int category(DType d) { return d == DType::Bool ? 0 : is_floating(d) ? 2 : 1; }

// Broadcast shape, promoted dtype, and both operands converted to the compute dtype.
struct Prepared {
  Shape shape;
  DType dt;
  TensorImplPtr a, b;
};
Prepared prepare(const char* name, const TensorImplPtr& a, const TensorImplPtr& b, bool float_result) {
  Prepared p;
  p.shape = broadcast_shapes(a->shape, b->shape, name);
  p.dt = result_type(a, b);
  if (float_result && !is_floating(p.dt)) p.dt = kDefaultFloat;
  p.a = cast_raw(a, p.dt);
  p.b = cast_raw(b, p.dt);
  return p;
}

// x^y as PyTorch computes a number exponent: sqrt for 0.5, 1 / sqrt for -0.5, x x for 2, x x x for
// 3, 1 / x for -1 and 1 / (x x) for -2 (so pow(-0., 0.5) is -0 and pow(-inf, 0.5) NaN, and the
// roundings agree with PyTorch's), std::pow otherwise. Floating A only.
enum class PowKind { General, Sqrt, Rsqrt, Square, Cube, Reciprocal, InvSquare };
inline PowKind pow_kind(double e) {
  return e == 0.5 ? PowKind::Sqrt : e == -0.5 ? PowKind::Rsqrt : e == 2 ? PowKind::Square : e == 3 ? PowKind::Cube
         : e == -1 ? PowKind::Reciprocal : e == -2 ? PowKind::InvSquare : PowKind::General;
}
template <class A>
inline A pow_as(PowKind k, A x, A y) {
  switch (k) {
    case PowKind::Sqrt: return std::sqrt(x);
    case PowKind::Rsqrt: return A(1) / std::sqrt(x);
    case PowKind::Square: return x * x;
    case PowKind::Cube: return x * x * x;
    case PowKind::Reciprocal: return A(1) / x;
    case PowKind::InvSquare: return A(1) / (x * x);
    case PowKind::General: break;
  }
  return A(std::pow(x, y));
}

template <class A>
A int_pow(A base, A e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  A r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

// ---- backward nodes ---------------------------------------------------------------------

// Shapes and dtypes of both inputs: the grads go back in each input's own shape and dtype.
struct InputMeta {
  Shape a_shape, b_shape;
  DType a_dtype, b_dtype;
  void set(const TensorImplPtr& a, const TensorImplPtr& b) {
    a_shape = a->shape, b_shape = b->shape, a_dtype = a->dtype, b_dtype = b->dtype;
  }
};

struct AddBackward : FuncOp<AddBackward, 2>, InputMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return "AddBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    return {needs_input_grad(0) ? grad_for(g, a_shape, a_dtype) : nullptr,
            needs_input_grad(1) ? grad_for(g, b_shape, b_dtype) : nullptr};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    return {needs_input_grad(0) ? grad_for_graph(g, a_shape, a_dtype) : nullptr,
            needs_input_grad(1) ? grad_for_graph(g, b_shape, b_dtype) : nullptr};
  }
};
const OpSchema& AddBackward::schema_v1 = register_schema(
    {.name = "add", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

struct SubBackward : FuncOp<SubBackward, 2>, InputMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return "SubBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    TensorImplPtr gb;
    if (needs_input_grad(1)) {
      auto s = g->shape == b_shape ? g : sum_to(g, b_shape);
      gb = cast_raw(unary_apply<false, Dtypes::Float>("sub_backward", s, []<class A>() { return [](A v) { return -v; }; }), b_dtype);
    }
    return {needs_input_grad(0) ? grad_for(g, a_shape, a_dtype) : nullptr, gb};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    return {needs_input_grad(0) ? grad_for_graph(g, a_shape, a_dtype) : nullptr,
            needs_input_grad(1) ? grad_for_graph(neg(g), b_shape, b_dtype) : nullptr};
  }
};
const OpSchema& SubBackward::schema_v1 = register_schema(
    {.name = "sub", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

struct MulBackward : FuncOp<MulBackward, 2>, InputMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return "MulBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const auto &a = saved_[0], &b = saved_[1];
    return {needs_input_grad(0) ? grad_for(mul(g, b), a_shape, a_dtype) : nullptr,
            needs_input_grad(1) ? grad_for(mul(g, a), b_shape, b_dtype) : nullptr};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto &a = saved_[0], &b = saved_[1];
    return {needs_input_grad(0) ? grad_for_graph(mul(g, b), a_shape, a_dtype) : nullptr,
            needs_input_grad(1) ? grad_for_graph(mul(g, a), b_shape, b_dtype) : nullptr};
  }
};
const OpSchema& MulBackward::schema_v1 = register_schema(
    {.name = "mul", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

struct DivBackward : FuncOp<DivBackward, 2>, InputMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return "DivBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    auto p = prepare("div_backward", g, saved_[1], true);
    TensorImplPtr ga, gb;
    if (needs_input_grad(0))
      ga = grad_for(binary_apply<false, Dtypes::Float>("div_backward", p.shape, p.a, p.b,
                                 []<class A>() { return [](A x, A y) { return x / y; }; }),
                    a_shape, a_dtype);
    if (needs_input_grad(1)) {
      auto a = cast_raw(saved_[0], p.dt);
      Shape shape = broadcast_shapes(p.shape, a->shape, "div_backward");
      gb = grad_for(ternary_apply("div_backward", shape, p.a, a, p.b,
                                  []<class A>() { return [](A gg, A x, A y) { return -gg * x / (y * y); }; }),
                    b_shape, b_dtype);
    }
    return {ga, gb};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto &a = saved_[0], &b = saved_[1];
    return {needs_input_grad(0) ? grad_for_graph(div(g, b), a_shape, a_dtype) : nullptr,
            needs_input_grad(1) ? grad_for_graph(neg(div(mul(g, a), mul(b, b))), b_shape, b_dtype) : nullptr};
  }
};
const OpSchema& DivBackward::schema_v1 = register_schema(
    {.name = "div", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

struct PowBackward : FuncOp<PowBackward, 2>, InputMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return "PowBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    DType dt = promote_types(g->dtype, saved_[0]->dtype);
    auto gg = cast_raw(g, dt), a = cast_raw(saved_[0], dt), b = cast_raw(saved_[1], dt);
    Shape shape = broadcast_shapes(g->shape, broadcast_shapes(a->shape, b->shape, "pow"), "pow");
    TensorImplPtr ga, gb;
    if (needs_input_grad(0))
      ga = grad_for(ternary_apply("pow_backward", shape, gg, a, b, []<class A>() {
                      // d/da a^b = b a^(b-1); written so that b == 0 gives 0, not 0 * inf.
                      // gv (b a^(b-1)) in PyTorch's order, a^(b-1) as its number-exponent pow.
                      return [](A gv, A x, A y) {
                        return y == A(0) ? A(0) : A(gv * (y * pow_as<A>(pow_kind(double(y) - 1), x, y - A(1))));
                      };
                    }), a_shape, a_dtype);
    if (needs_input_grad(1))
      gb = grad_for(ternary_apply("pow_backward", shape, gg, a, b, []<class A>() {
                      // NOTE: d/db a^b = a^b log a; at a == 0 (b > 0) the limit is 0, not NaN.
                      return [](A gv, A x, A y) {
                        return (x == A(0) && y >= A(0)) ? A(0) : gv * A(std::pow(x, y)) * A(std::log(x));
                      };
                    }), b_shape, b_dtype);
    return {ga, gb};
  }
  // The same limits as apply: b == 0 gives 0 for d/da, a == 0 (b >= 0) gives 0 for d/db.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto &a = saved_[0], &b = saved_[1];
    DType dt = promote_types(g->dtype, a->dtype);
    auto zero = constant(0.0, dt);
    TensorImplPtr ga, gb;
    if (needs_input_grad(0) && b->shape.empty() && !b->requires_grad) {
      // A number exponent (x ** 3): PyTorch's graph, g * (b * a^(b-1)), or zeros for b == 0.
      const double e = item_as_double(b, "pow_backward");
      ga = e == 0 ? grad_for_graph(mul(g, zero), a_shape, a_dtype)
                  : grad_for_graph(mul(g, mul(pow(a, constant(e - 1, dt)), b)), a_shape, a_dtype);
    } else if (needs_input_grad(0)) {
      auto d = mul(g, mul(b, pow(a, sub(b, constant(1.0, dt)))));
      ga = grad_for_graph(where(compare(b, zero, CompareOp::Eq), zero, d), a_shape, a_dtype);
    }
    if (needs_input_grad(1)) {
      TensorImplPtr keep;  // not (a == 0 and b >= 0)
      {
        NoGradGuard no_grad;
        auto lim = mul(to(compare(a, zero, CompareOp::Eq), dt, false), to(compare(b, zero, CompareOp::Ge), dt, false));
        keep = compare(lim, zero, CompareOp::Eq);
      }
      auto safe_a = where(keep, a, constant(1.0, dt));  // log(1) = 0 where the limit is 0
      gb = grad_for_graph(where(keep, mul(g, mul(pow(a, b), log(safe_a))), zero), b_shape, b_dtype);
    }
    return {ga, gb};
  }
};
const OpSchema& PowBackward::schema_v1 = register_schema(
    {.name = "pow", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

// ---- binary ops described like the unary ones ------------------------------------------
// A differentiable binary op describes, on accumulation types: f(a, b) (compiled for every dtype
// its operands may have), the gradient of each side given the output's gradient g,
// da(g, a, b) = g df/da and db(g, a, b) = g df/db, and the second derivatives times g, daa, dab
// and dbb, for double backward (all four only for float and double). kFloat: integer and bool
// operands compute in float32 (as true division does), otherwise in the promoted dtype.
// BinaryBackward<Op> saves both operands and is the op's node; its double backward records one
// BinaryBackwardBackward<Op, Side> per gradient. Entered in the op table by LUCID_BINARY_OP.

// maximum/minimum: NaN propagates; the gradient goes to the selected operand, split evenly on
// ties (PyTorch).
template <bool IsMax>
struct ExtremumOp {
  static constexpr const char *kName = IsMax ? "maximum" : "minimum",
                              *kNode = IsMax ? "MaximumBackward" : "MinimumBackward";
  static constexpr bool kFloat = false;
  template <class A> A f(A x, A y) const { return (x != x || (IsMax ? x > y : x < y)) ? x : y; }
  template <class A> A da(A g, A x, A y) const { return x == y ? g / A(2) : ((x > y) == IsMax ? g : A(0)); }
  template <class A> A db(A g, A x, A y) const { return da(g, y, x); }
  template <class A> A daa(A, A, A) const { return A(0); }
  template <class A> A dab(A, A, A) const { return A(0); }
  template <class A> A dbb(A, A, A) const { return A(0); }
};
// atan2(a, b) = the angle of (b, a): d/da = b / r2, d/db = -a / r2 with r2 = a^2 + b^2.
struct Atan2Op {
  static constexpr const char *kName = "atan2", *kNode = "Atan2Backward";
  static constexpr bool kFloat = true;
  template <class A> A f(A a, A b) const { return std::atan2(a, b); }
  // As PyTorch: g b (1 / r2) with 1 / r2 taken as 0 at the origin (so both gradients are 0 there).
  template <class A> static A recip_r2(A a, A b) { const A r2 = a * a + b * b; return r2 == A(0) ? A(0) : A(1) / r2; }
  template <class A> A da(A g, A a, A b) const { return g * b * recip_r2(a, b); }
  template <class A> A db(A g, A a, A b) const { return g * -a * recip_r2(a, b); }
  template <class A> A daa(A g, A a, A b) const { return A(-2) * g * a * b / ((a * a + b * b) * (a * a + b * b)); }
  template <class A> A dab(A g, A a, A b) const { return g * (a * a - b * b) / ((a * a + b * b) * (a * a + b * b)); }
  template <class A> A dbb(A g, A a, A b) const { return A(2) * g * a * b / ((a * a + b * b) * (a * a + b * b)); }
};

// The gradient d of output `side` of a binary op's backward, d = da(g, a, b) or db(g, a, b) (linear
// in g), under create_graph=True: with u the gradient flowing into d,
//   d/dg = da(u, a, b) (or db),  d/da = daa(u g, a, b) (or dab),  d/db = dab(u g, a, b) (or dbb).
// Saved: g, a, b.
template <class Op, int Side>
struct BinaryBackwardBackward : FuncOp<BinaryBackwardBackward<Op, Side>, 3> {
  static const OpSchema& schema_v1;
  Op op;
  // Op::kNode + "Backward", joined at compile time (one name per op, no string per node)
  static constexpr auto kName = [] {
    constexpr std::size_t n = std::char_traits<char>::length(Op::kNode);
    std::array<char, n + sizeof("Backward")> s{};
    std::copy_n(Op::kNode, n, s.begin());
    std::copy_n("Backward", sizeof("Backward"), s.begin() + n);
    return s;
  }();
  const char* name() const override { return kName.data(); }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& u0) {
    const TensorImplPtr &g = this->saved_[0], &a0 = this->saved_[1], &b0 = this->saved_[2];
    const DType dt = g->dtype;
    auto u = cast_raw(u0, dt), a = cast_raw(a0, dt), b = cast_raw(b0, dt);
    const Op o = op;
    TensorImplPtr dg, da, db;
    if (this->needs_input_grad(0))
      dg = ternary_apply(Op::kName, g->shape, u, a, b, [o]<class A>() {
        return [o](A uv, A x, A y) { return Side == 0 ? o.da(uv, x, y) : o.db(uv, x, y); };
      });
    if (this->needs_input_grad(1) || this->needs_input_grad(2)) {
      auto ug = binary_apply<false, Dtypes::Float>(Op::kName, g->shape, u, g, []<class A>() {
        return [](A x, A y) { return x * y; };
      });
      if (this->needs_input_grad(1))
        da = grad_for(ternary_apply(Op::kName, g->shape, ug, a, b, [o]<class A>() {
                        return [o](A w, A x, A y) { return Side == 0 ? o.daa(w, x, y) : o.dab(w, x, y); };
                      }), a0->shape, a0->dtype);
      if (this->needs_input_grad(2))
        db = grad_for(ternary_apply(Op::kName, g->shape, ug, a, b, [o]<class A>() {
                        return [o](A w, A x, A y) { return Side == 0 ? o.dab(w, x, y) : o.dbb(w, x, y); };
                      }), b0->shape, b0->dtype);
    }
    return {dg, da, db};
  }
};

template <class Op>
struct BinaryBackward : FuncOp<BinaryBackward<Op>, 2>, InputMeta {
  static const OpSchema& schema_v1;
  Op op;
  const char* name() const override { return Op::kNode; }
  // The gradient of side 0 (a) or 1 (b) in the output's (broadcast) shape, in the dtype of g and
  // both operands promoted.
  template <int Side>
  TensorImplPtr side_grad(const TensorImplPtr& g, const TensorImplPtr& gg, const TensorImplPtr& a,
                          const TensorImplPtr& b) const {
    const Op o = op;
    return ternary_apply(Op::kName, g->shape, gg, a, b, [o]<class A>() {
      return [o](A gv, A x, A y) { return Side == 0 ? o.da(gv, x, y) : o.db(gv, x, y); };
    });
  }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const DType dt = promote_types(g->dtype, promote_types(this->saved_[0]->dtype, this->saved_[1]->dtype));
    auto gg = cast_raw(g, dt), a = cast_raw(this->saved_[0], dt), b = cast_raw(this->saved_[1], dt);
    return {this->needs_input_grad(0) ? grad_for(side_grad<0>(g, gg, a, b), a_shape, a_dtype) : nullptr,
            this->needs_input_grad(1) ? grad_for(side_grad<1>(g, gg, a, b), b_shape, b_dtype) : nullptr};
  }
  // create_graph: the same values, each recorded with its BinaryBackwardBackward node, then
  // summed back to the operand's shape by recorded ops.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const TensorImplPtr &a0 = this->saved_[0], &b0 = this->saved_[1];
    const DType dt = promote_types(g->dtype, promote_types(a0->dtype, b0->dtype));
    TensorImplPtr gg = cast_raw(g, dt), d[2];
    {
      NoGradGuard no_grad;
      auto a = cast_raw(a0, dt), b = cast_raw(b0, dt);
      if (this->needs_input_grad(0)) d[0] = side_grad<0>(g, gg, a, b);
      if (this->needs_input_grad(1)) d[1] = side_grad<1>(g, gg, a, b);
    }
    if (any_requires_grad({&g, &a0, &b0})) {
      if (d[0]) record_double<0>(d[0], gg);
      if (d[1]) record_double<1>(d[1], gg);
    }
    return {d[0] ? grad_for_graph(d[0], a_shape, a_dtype) : nullptr,
            d[1] ? grad_for_graph(d[1], b_shape, b_dtype) : nullptr};
  }
  template <int Side>
  void record_double(const TensorImplPtr& d, const TensorImplPtr& gg) {
    auto n = std::make_shared<BinaryBackwardBackward<Op, Side>>();
    n->op = op;
    n->set_inputs({gg, this->saved_[0], this->saved_[1]});
    n->save(0, gg);
    n->save(1, this->saved_[0]);
    n->save(2, this->saved_[1]);
    attach_node(d, std::move(n));
  }
};

// The forward: both operands broadcast and promoted, f applied, the node recorded.
template <class Op>
TensorImplPtr binary_op(const TensorImplPtr& a, const TensorImplPtr& b, const Op& op = Op{}) {
  auto p = prepare(Op::kName, a, b, Op::kFloat);
  auto out = binary_apply<false, Op::kFloat ? Dtypes::Float : Dtypes::All>(
      Op::kName, p.shape, p.a, p.b, [op]<class A>() { return [op](A x, A y) { return A(op.f(x, y)); }; });
  if (any_requires_grad({&a, &b})) {
    auto n = std::make_shared<BinaryBackward<Op>>();
    n->op = op;
    n->set(a, b);
    n->set_inputs({a, b});
    n->save(0, a);
    n->save(1, b);
    attach_node(out, std::move(n));
  }
  return out;
}

// What a binary node keeps of its operands: nothing, both, or (for products, whose gradient for
// each operand needs only the other) each one only when the other needs a gradient, so that
// `x * 3` saves nothing and a later in-place write into x leaves its backward valid, as in PyTorch.
enum class Save { None, Both, ForOther };

template <class NodeT>
void record(const TensorImplPtr& out, const TensorImplPtr& a, const TensorImplPtr& b, Save save) {
  if (!any_requires_grad({&a, &b})) return;
  auto n = std::make_shared<NodeT>();
  n->set(a, b);
  n->set_inputs({a, b});
  if (save == Save::Both || (save == Save::ForOther && b->requires_grad)) n->save(0, a);
  if (save == Save::Both || (save == Save::ForOther && a->requires_grad)) n->save(1, b);
  attach_node(out, std::move(n));
}

}  // namespace

DType result_type(const TensorImplPtr& a, const TensorImplPtr& b) {
  bool a0 = a->ndim() == 0, b0 = b->ndim() == 0;
  if (a0 != b0) {
    const auto& dim = a0 ? b : a;
    const auto& zero = a0 ? a : b;
    if (category(zero->dtype) <= category(dim->dtype)) return dim->dtype;
  }
  return promote_types(a->dtype, b->dtype);
}

TensorImplPtr add(const TensorImplPtr& a, const TensorImplPtr& b) {
  auto p = prepare("add", a, b, false);
  auto out = binary_apply("add", p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return A(x + y); }; });
  record<AddBackward>(out, a, b, Save::None);
  return out;
}

TensorImplPtr sub(const TensorImplPtr& a, const TensorImplPtr& b) {
  LUCID_CHECK_DTYPE(a->dtype != DType::Bool || b->dtype != DType::Bool,
                    "sub: subtracting two bool tensors is not supported; use logical_xor");
  auto p = prepare("sub", a, b, false);
  auto out = binary_apply("sub", p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return A(x - y); }; });
  record<SubBackward>(out, a, b, Save::None);
  return out;
}

TensorImplPtr mul(const TensorImplPtr& a, const TensorImplPtr& b) {
  auto p = prepare("mul", a, b, false);
  auto out = binary_apply("mul", p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return A(x * y); }; });
  record<MulBackward>(out, a, b, Save::ForOther);
  return out;
}

TensorImplPtr div(const TensorImplPtr& a, const TensorImplPtr& b) {
  auto p = prepare("div", a, b, true);
  auto out = binary_apply("div", p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return A(x / y); }; });
  record<DivBackward>(out, a, b, Save::Both);
  return out;
}

TensorImplPtr pow(const TensorImplPtr& a, const TensorImplPtr& b) {
  auto p = prepare("pow", a, b, false);
  // A number exponent (0-d b) takes PyTorch's special forms (pow_as); the loop unswitches on kind.
  const PowKind kind = b->shape.empty() && is_floating(p.dt) ? pow_kind(item_as_double(b, "pow")) : PowKind::General;
  auto out = binary_apply("pow", p.shape, p.a, p.b, [kind]<class A>() {
    return [kind](A x, A y) {
      if constexpr (std::is_integral_v<A>) return int_pow<A>(x, y);
      else return pow_as<A>(kind, x, y);
    };
  });
  record<PowBackward>(out, a, b, Save::Both);
  return out;
}

static const OpSchema& kCompareSchema = register_schema(
    {.name = "compare", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

TensorImplPtr compare(const TensorImplPtr& a, const TensorImplPtr& b, CompareOp op) {
  static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  const char* name = names[int(op)];
  (void)kCompareSchema;
  auto p = prepare(name, a, b, false);
  switch (op) {
    case CompareOp::Eq: return binary_apply<true>(name, p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return x == y; }; });
    case CompareOp::Ne: return binary_apply<true>(name, p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return x != y; }; });
    case CompareOp::Lt: return binary_apply<true>(name, p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return x < y; }; });
    case CompareOp::Le: return binary_apply<true>(name, p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return x <= y; }; });
    case CompareOp::Gt: return binary_apply<true>(name, p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return x > y; }; });
    case CompareOp::Ge: return binary_apply<true>(name, p.shape, p.a, p.b, []<class A>() { return [](A x, A y) { return x >= y; }; });
  }
  return nullptr;
}

// ---- in place ---------------------------------------------------------------------------

void check_inplace(const TensorImplPtr& t, const char* op) {
  if (GradMode::is_enabled()) inplace_records(t, {}, op);  // a leaf (or a view of one): PyTorch's message
  LUCID_CHECK(!(GradMode::is_enabled() && t->requires_grad), op,
              ": a tensor that requires grad cannot be modified in place while grad mode is on "
              "(use no_grad(), or detach() first)");
}

void check_no_internal_overlap(const TensorImplPtr& t) {
  // PyTorch's rule: a dim of size > 1 with stride 0 (an expanded view) writes one element many times.
  // An empty tensor writes nothing (numpy gives empty arrays zero strides).
  if (t->numel() == 0) return;
  for (size_t i = 0; i < t->shape.size(); ++i)
    LUCID_CHECK(!(t->shape[i] > 1 && t->strides[i] == 0),
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
}

void check_no_partial_overlap(const TensorImplPtr& out, const TensorImplPtr& in) {
  // PyTorch's rule, for dense operands (it does not look further either): the same elements, or
  // none. A loop that reads `in` while writing `out` would otherwise read values it already wrote.
  if (out->numel() == 0 || in->numel() == 0 || !out->is_contiguous() || !in->is_contiguous()) return;
  const char *o = static_cast<const char*>(out->raw()), *i = static_cast<const char*>(in->raw());
  const char *oe = o + out->numel() * int64_t(itemsize(out->dtype)), *ie = i + in->numel() * int64_t(itemsize(in->dtype));
  if (o == i && oe == ie && out->dtype == in->dtype) return;
  LUCID_CHECK(!(o < ie && i < oe), "unsupported operation: some elements of the input tensor and the written-to "
              "tensor refer to a single memory location. Please clone() the tensor before performing the operation.");
}

bool inplace_records(const TensorImplPtr& x, std::initializer_list<TensorImplPtr> others, const char* op) {
  if (!GradMode::is_enabled()) return false;
  (void)op;  // PyTorch's messages name no op
  LUCID_CHECK(!(x->requires_grad && x->is_leaf()), "a leaf Variable that requires grad is being used in an in-place operation.");
  LUCID_CHECK(!is_view_of_grad_leaf(x), "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  if (x->requires_grad) return true;
  for (const auto& o : others)
    if (o && o->requires_grad) return true;
  return false;
}

TensorImplPtr rebase_inplace(const TensorImplPtr& x, const TensorImplPtr& result, const char* op) {
  LUCID_CHECK_SHAPE(result->shape == x->shape, op, ": the result of shape ", shape_str(result->shape),
                    " cannot be written into the in-place target of shape ", shape_str(x->shape));
  auto r = result->dtype == x->dtype ? result : to(result, x->dtype, false);
  {
    NoGradGuard no_grad;
    copy_into(x, r);
  }
  x->bump_version();  // nodes that saved x's old value now refuse to run, as in PyTorch
  rebase_view_base(x, r);
  x->requires_grad = r->requires_grad;
  x->grad_fn = r->grad_fn;
  x->output_nr = r->output_nr;
  return x;
}

namespace {
// `recorded` computes the result out of place with autograd, for when the write must be recorded
// (inplace_records); `save_self`: that op saves a, so it gets a copy of a's current value.
template <class FFactory>
TensorImplPtr inplace(const char* name, const TensorImplPtr& a, const TensorImplPtr& b, FFactory make,
                      const std::function<TensorImplPtr(const TensorImplPtr&)>& recorded = nullptr,
                      bool save_self = false) {
  check_no_internal_overlap(a);
  check_no_partial_overlap(a, b);
  const bool records = recorded && inplace_records(a, {b}, name);
  if (!records) check_inplace(a, name);
  broadcast_shapes(a->shape, b->shape, name);
  LUCID_CHECK_SHAPE(broadcast_shapes(a->shape, b->shape, name) == a->shape, name, ": operand of shape ",
                    shape_str(b->shape), " cannot be broadcast to the in-place target of shape ",
                    shape_str(a->shape));
  LUCID_CHECK_DTYPE(is_floating(a->dtype) || !is_floating(b->dtype), name, ": result type ",
                    dtype_name(b->dtype), " cannot be cast to the in-place target's dtype ", dtype_name(a->dtype));
  if (records) return rebase_inplace(a, recorded(save_self ? clone(a) : a), name);
  auto bb = cast_raw(b, a->dtype);
  Shape bs = broadcast_strides(bb->shape, bb->strides, a->shape);
  if (is_half(a->dtype)) {  // through the float32 functor, by blocks
    auto f = make.template operator()<float>();
    kernels::half_map<2>(a->dtype, false, a->shape, a->raw(), a->strides, {a->raw(), bb->raw()}, {&a->strides, &bs},
                         [&](void* r, std::array<const float*, 2> in, int64_t m) {
                           float* o = static_cast<float*>(r);
                           for (int64_t i = 0; i < m; ++i) o[i] = f(in[0][i], in[1][i]);
                         });
  } else {
    LUCID_DISPATCH_NO_HALF(a->dtype, name, [&] {
      using T = scalar_t;
      using A = acc_t<T>;
      auto f = make.template operator()<A>();
      kernels::map2(a->shape, a->data<T>(), a->strides, a->data<T>(), a->strides, bb->data<T>(), bs,
                    [f](T x, T y) { return kernels::convert<T>(f(A(x), A(y))); });
    });
  }
  a->bump_version();
  return a;
}
}  // namespace

TensorImplPtr add_(const TensorImplPtr& a, const TensorImplPtr& b, double alpha) {
  auto recorded = [&b, alpha](const TensorImplPtr& x) {
    return add(x, alpha == 1.0 ? b : mul(b, scalar_tensor(alpha, b->dtype)));
  };
  if (alpha == 1.0) return inplace("add_", a, b, []<class A>() { return [](A x, A y) { return A(x + y); }; }, recorded);
  return inplace("add_", a, b, [alpha]<class A>() { return [alpha](A x, A y) { return A(x + A(alpha) * y); }; },
                 recorded);
}
TensorImplPtr sub_(const TensorImplPtr& a, const TensorImplPtr& b) {
  return inplace("sub_", a, b, []<class A>() { return [](A x, A y) { return A(x - y); }; },
                 [&b](const TensorImplPtr& x) { return sub(x, b); });
}
TensorImplPtr mul_(const TensorImplPtr& a, const TensorImplPtr& b) {
  return inplace("mul_", a, b, []<class A>() { return [](A x, A y) { return A(x * y); }; },
                 [&b](const TensorImplPtr& x) { return mul(x, b); }, true);
}
TensorImplPtr div_(const TensorImplPtr& a, const TensorImplPtr& b) {
  LUCID_CHECK_DTYPE(is_floating(a->dtype), "div_: in-place true division needs a floating target, got ",
                    dtype_name(a->dtype));
  return inplace("div_", a, b, []<class A>() { return [](A x, A y) { return A(x / y); }; },
                 [&b](const TensorImplPtr& x) { return div(x, b); }, true);
}
TensorImplPtr copy_(const TensorImplPtr& a, const TensorImplPtr& b) {
  check_no_internal_overlap(a);
  check_no_partial_overlap(a, b);
  const bool records = inplace_records(a, {b}, "copy_");
  if (!records) check_inplace(a, "copy_");
  LUCID_CHECK_SHAPE(broadcast_shapes(a->shape, b->shape, "copy_") == a->shape, "copy_: source of shape ",
                    shape_str(b->shape), " cannot be broadcast to the target of shape ", shape_str(a->shape));
  if (records) return rebase_inplace(a, expand(to(b, a->dtype, false), a->shape), "copy_");
  copy_into(a, b);
  a->bump_version();
  return a;
}

// ---- the op table -----------------------------------------------------------------------------
// LUCID_BINARY_OP(Op, name, policy, doc): the schema {name, 1, policy, produces_grad}, the function
// TensorImplPtr name(a, b) and its entry in the op table (ops/op_table.h: pylucid._C.name(input,
// other) and Tensor.name(other), documented by `doc`). LUCID_BINARY_SCHEMA alone serves an op
// bound by hand.
#define LUCID_BINARY_SCHEMA(Op, op_name, policy)                                                 \
  template <>                                                                                    \
  const OpSchema& BinaryBackward<Op>::schema_v1 = register_schema(                               \
      {.name = op_name, .version = 1, .amp_policy = AmpPolicy::policy, .produces_grad = true});   \
  template <>                                                                                    \
  const OpSchema& BinaryBackwardBackward<Op, 0>::schema_v1 = BinaryBackward<Op>::schema_v1;      \
  template <>                                                                                    \
  const OpSchema& BinaryBackwardBackward<Op, 1>::schema_v1 = BinaryBackward<Op>::schema_v1;
#define LUCID_BINARY_OP(Op, name, policy, doc)                                                           \
  LUCID_BINARY_SCHEMA(Op, #name, policy)                                                                 \
  TensorImplPtr name(const TensorImplPtr& a, const TensorImplPtr& b) { return binary_op<Op>(a, b); }     \
  [[maybe_unused]] static const bool registered_##name = register_op(BinaryEntry{#name, &name, doc});

LUCID_BINARY_SCHEMA(ExtremumOp<true>, "maximum", KeepInput)
LUCID_BINARY_SCHEMA(ExtremumOp<false>, "minimum", KeepInput)
TensorImplPtr maximum(const TensorImplPtr& a, const TensorImplPtr& b) { return binary_op<ExtremumOp<true>>(a, b); }
TensorImplPtr minimum(const TensorImplPtr& a, const TensorImplPtr& b) { return binary_op<ExtremumOp<false>>(a, b); }
LUCID_BINARY_OP(Atan2Op, atan2, KeepInput,
                "The angle of the point (other, input) in radians, in [-pi, pi], elementwise with broadcasting "
                "(integers promote to float32).")

}  // namespace lucid
