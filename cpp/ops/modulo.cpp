#include "ops/modulo.h"

#include <cmath>
#include <limits>

#include "ops/binary.h"
#include "ops/grad_graph.h"
#include "ops/op_utils.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

namespace {

enum class Mode { Remainder, Fmod, FloorDivide };
constexpr const char* kNames[] = {"remainder", "fmod", "floor_divide"};

// One element. Floating formulas are PyTorch's CPU kernels (fmod first, then fix the sign), which
// keep remainder(-0.0, b) = -0.0 and remainder(x, inf) = x or inf like numpy.
template <Mode M, class A>
A apply_one(A a, A b) {
  if constexpr (std::is_integral_v<A>) {
    if constexpr (std::is_same_v<A, bool>) {
      return M == Mode::FloorDivide ? a : A(0);  // b is true (1): a // 1 = a, a % 1 = 0
    } else {
      // NOTE: INT64_MIN / -1 traps; the exact result wraps to INT64_MIN (remainder 0).
      if (b == A(-1)) return M == Mode::FloorDivide ? A(uint64_t(0) - uint64_t(a)) : A(0);
      A q = a / b, r = a % b;
      if constexpr (M == Mode::Fmod) return r;
      const bool fix = r != 0 && ((r < 0) != (b < 0));
      if constexpr (M == Mode::Remainder) return fix ? A(r + b) : r;
      return fix ? A(q - 1) : q;
    }
  } else {
    const A mod = std::fmod(a, b);
    if constexpr (M == Mode::Fmod) return mod;
    const bool fix = mod != A(0) && ((b < A(0)) != (mod < A(0)));
    if constexpr (M == Mode::Remainder) return fix ? A(mod + b) : mod;
    if (b == A(0)) return a / b;
    A div = (a - mod) / b;
    if (fix) div -= A(1);
    if (div == A(0)) return std::copysign(A(0), a / b);
    A fl = std::floor(div);
    if (div - fl > A(0.5)) fl += A(1);
    return fl;
  }
}

TensorImplPtr run(Mode m, const TensorImplPtr& a, const TensorImplPtr& b, const Shape& shape) {
  const char* name = kNames[int(m)];
  switch (m) {
    case Mode::Remainder:
      return binary_apply(name, shape, a, b, []<class A>() { return [](A x, A y) { return apply_one<Mode::Remainder>(x, y); }; });
    case Mode::Fmod:
      return binary_apply(name, shape, a, b, []<class A>() { return [](A x, A y) { return apply_one<Mode::Fmod>(x, y); }; });
    case Mode::FloorDivide:
      return binary_apply(name, shape, a, b, []<class A>() { return [](A x, A y) { return apply_one<Mode::FloorDivide>(x, y); }; });
  }
  return nullptr;
}

// floor(a / b) (remainder) or trunc(a / b) (fmod) in float dtype dt, not recorded.
TensorImplPtr quotient(bool floor_q, const TensorImplPtr& a, const TensorImplPtr& b, DType dt) {
  NoGradGuard no_grad;
  auto q = div(cast_raw(a, dt), cast_raw(b, dt));
  return floor_q ? floor(q) : trunc(q);
}

template <bool IsRemainder>
struct ModuloBackward : FuncOp<ModuloBackward<IsRemainder>, 2> {
  static const OpSchema& schema_v1;
  Shape a_shape, b_shape;
  DType a_dtype = DType::Float32, b_dtype = DType::Float32;
  const char* name() const override { return IsRemainder ? "RemainderBackward" : "FmodBackward"; }
  std::vector<TensorImplPtr> grads(const TensorImplPtr& g, bool graph) {
    auto tail = [&](const TensorImplPtr& t, const Shape& s, DType d) {
      return graph ? grad_for_graph(t, s, d) : grad_for(t, s, d);
    };
    TensorImplPtr ga, gb;
    if (this->needs_input_grad(0)) ga = tail(g, a_shape, a_dtype);
    if (this->needs_input_grad(1)) {
      auto q = quotient(IsRemainder, this->saved_[0], this->saved_[1], g->dtype);
      gb = tail(neg(mul(g, q)), b_shape, b_dtype);
    }
    return {ga, gb};
  }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) { return grads(g, false); }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) { return grads(g, true); }
};
template <>
const OpSchema& ModuloBackward<true>::schema_v1 = register_schema(
    {.name = "remainder", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});
template <>
const OpSchema& ModuloBackward<false>::schema_v1 = register_schema(
    {.name = "fmod", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});
const OpSchema& kFloorDivideSchema = register_schema(
    {.name = "floor_divide", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

TensorImplPtr modulo(Mode m, const TensorImplPtr& a, const TensorImplPtr& b) {
  const char* name = kNames[int(m)];
  Shape shape = broadcast_shapes(a->shape, b->shape, name);
  DType dt = result_type(a, b);
  LUCID_CHECK_DTYPE(dt != DType::Bool, name, ": not supported for bool tensors");
  auto ac = cast_raw(a, dt), bc = cast_raw(b, dt);
  if (!is_floating(dt)) {
    NoGradGuard no_grad;
    auto zero = unary_apply<true>(name, bc, []<class A>() { return [](A v) { return v == A(0); }; });
    bool any = false;
    const bool* z = zero->data<bool>();
    for (int64_t i = 0; i < zero->numel(); ++i) any |= z[i];
    LUCID_CHECK(!any, name, ": integer division by zero (ZeroDivisionError)");
  }
  auto out = run(m, ac, bc, shape);
  if (m != Mode::FloorDivide && is_floating(dt) && any_requires_grad({&a, &b})) {
    auto attach = [&]<bool R>() {
      auto n = std::make_shared<ModuloBackward<R>>();
      n->a_shape = a->shape, n->b_shape = b->shape, n->a_dtype = a->dtype, n->b_dtype = b->dtype;
      n->set_inputs({a, b});
      n->save(0, a);
      n->save(1, b);
      attach_node(out, std::move(n));
    };
    if (m == Mode::Remainder) attach.template operator()<true>();
    else attach.template operator()<false>();
  }
  return out;
}

}  // namespace

TensorImplPtr remainder(const TensorImplPtr& a, const TensorImplPtr& b) { return modulo(Mode::Remainder, a, b); }
TensorImplPtr fmod(const TensorImplPtr& a, const TensorImplPtr& b) { return modulo(Mode::Fmod, a, b); }
TensorImplPtr floor_divide(const TensorImplPtr& a, const TensorImplPtr& b) {
  (void)kFloorDivideSchema;
  return modulo(Mode::FloorDivide, a, b);
}

}  // namespace lucid
