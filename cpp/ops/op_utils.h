// Helpers shared by the op files: elementwise application over broadcast operands in one
// compute dtype, and the "grad for this input" tail (sum back to its shape, cast to its dtype).
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/half_map.h"
#include "ops/reduce.h"

namespace lucid {

// One instantiation per input dtype: the output is either the input dtype or bool. float16 and
// bfloat16 inputs run the float32 instantiation by blocks (kernels/cpu/half_map.h).
template <bool ToBool, class T> using out_t = std::conditional_t<ToBool, bool, T>;

// The dtypes an apply helper is compiled for. Gradient formulas only ever see floating tensors,
// so they are instantiated for float32 and float64 alone (ternary_apply always is); an op that
// refuses bool before it gets here (the integer-keeping unary ops) needs no bool copy (NoBool).
enum class Dtypes { All, NoBool, Float };
#define LUCID_APPLY_DISPATCH(D, dtype, opname, ...)                                          \
  if constexpr (D == Dtypes::All) {                                                        \
    LUCID_DISPATCH_NO_HALF(dtype, opname, __VA_ARGS__)                                     \
  } else if constexpr (D == Dtypes::NoBool) {                                              \
    LUCID_DISPATCH_NUMERIC_NO_HALF(dtype, opname, __VA_ARGS__)                             \
  } else {                                                                                 \
    LUCID_DISPATCH_FLOAT_NO_HALF(dtype, opname, __VA_ARGS__)                               \
  }

// out[i] = f(a[i]) over a's shape; f maps acc_t values. Output in a's dtype (or bool).
template <bool ToBool = false, Dtypes D = Dtypes::All, class FFactory>
TensorImplPtr unary_apply(const char* name, const TensorImplPtr& a, FFactory make) {
  auto out = empty(a->shape, ToBool ? DType::Bool : a->dtype);
  auto fn = [&]<class T>() {
    auto f = make.template operator()<acc_t<T>>();
    return [f](T x) { return kernels::convert<out_t<ToBool, T>>(f(acc_t<T>(x))); };
  };
  if (is_half(a->dtype)) {
    auto g = fn.template operator()<float>();
    kernels::half_map<1>(a->dtype, ToBool, a->shape, out->raw(), out->strides, {a->raw()}, {&a->strides},
                         [&](void* o, std::array<const float*, 1> in, int64_t m) {
                           kernels::map1_flat(m, static_cast<out_t<ToBool, float>*>(o), in[0], g);
                         });
    return out;
  }
  LUCID_APPLY_DISPATCH(D, a->dtype, name, [&] {
    using T = scalar_t;
    using O = out_t<ToBool, T>;
    auto g = fn.template operator()<T>();
    if (a->is_contiguous())
      kernels::map1_flat(out->numel(), out->data<O>(), a->data<T>(), g);
    else
      kernels::map1(a->shape, out->data<O>(), out->strides, a->data<T>(), a->strides, g);
  });
  return out;
}

// out = f(a, b) with a, b broadcast to `shape` and both in a's dtype; output in that dtype
// (or bool).
template <bool ToBool = false, Dtypes D = Dtypes::All, class FFactory>
TensorImplPtr binary_apply(const char* name, const Shape& shape, const TensorImplPtr& a,
                           const TensorImplPtr& b, FFactory make) {
  // Contiguous operands of the output's shape (the per-op fast path): a row-major output, flat loops.
  bool flat = a->shape == shape && b->shape == shape && a->is_contiguous() && b->is_contiguous();
  auto out = flat ? empty(shape, ToBool ? DType::Bool : a->dtype)
                  : empty_elementwise(shape, ToBool ? DType::Bool : a->dtype, {a.get(), b.get()});
  flat = flat ||
         (a->shape == shape && b->shape == shape && same_dense_layout(*a, *out) && same_dense_layout(*b, *out));
  auto fn = [&]<class T>() {
    auto f = make.template operator()<acc_t<T>>();
    return [f](T x, T y) { return kernels::convert<out_t<ToBool, T>>(f(acc_t<T>(x), acc_t<T>(y))); };
  };
  if (is_half(a->dtype)) {
    auto g = fn.template operator()<float>();
    Shape as = broadcast_strides(a->shape, a->strides, shape);
    Shape bs = broadcast_strides(b->shape, b->strides, shape);
    kernels::half_map<2>(a->dtype, ToBool, shape, out->raw(), out->strides, {a->raw(), b->raw()}, {&as, &bs},
                         [&](void* o, std::array<const float*, 2> in, int64_t m) {
                           kernels::map2_flat(m, static_cast<out_t<ToBool, float>*>(o), in[0], in[1], g);
                         });
    return out;
  }
  LUCID_APPLY_DISPATCH(D, a->dtype, name, [&] {
    using T = scalar_t;
    using O = out_t<ToBool, T>;
    auto g = fn.template operator()<T>();
    if (flat) {
      kernels::map2_flat(out->numel(), out->data<O>(), a->data<T>(), b->data<T>(), g);
    } else {
      Shape as = broadcast_strides(a->shape, a->strides, shape);
      Shape bs = broadcast_strides(b->shape, b->strides, shape);
      kernels::map2(shape, out->data<O>(), out->strides, a->data<T>(), as, b->data<T>(), bs, g);
    }
  });
  return out;
}

// out = f(a, b, c) with all three in dtype of `a`, broadcast to `shape`; output in a's dtype.
// Used by gradient formulas only: floating dtypes.
template <class FFactory>
TensorImplPtr ternary_apply(const char* name, const Shape& shape, const TensorImplPtr& a,
                            const TensorImplPtr& b, const TensorImplPtr& c, FFactory make) {
  auto out = empty(shape, a->dtype);
  Shape as = broadcast_strides(a->shape, a->strides, shape);
  Shape bs = broadcast_strides(b->shape, b->strides, shape);
  Shape cs = broadcast_strides(c->shape, c->strides, shape);
  if (is_half(a->dtype)) {
    auto f = make.template operator()<float>();
    kernels::half_map<3>(a->dtype, false, shape, out->raw(), out->strides, {a->raw(), b->raw(), c->raw()},
                         {&as, &bs, &cs}, [&](void* o, std::array<const float*, 3> in, int64_t m) {
                           float* r = static_cast<float*>(o);
                           for (int64_t i = 0; i < m; ++i) r[i] = f(in[0][i], in[1][i], in[2][i]);
                         });
    return out;
  }
  LUCID_DISPATCH_FLOAT_NO_HALF(a->dtype, name, [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    auto f = make.template operator()<A>();
    kernels::map3(shape, out->data<T>(), out->strides, a->data<T>(), as, b->data<T>(), bs,
                  c->data<T>(), cs, [f](T x, T y, T z) { return T(f(A(x), A(y), A(z))); });
  });
  return out;
}
// The elementwise op pattern of ops/unary.cpp and ops/activation.cpp. Op provides
// f(x) and df(g, s) templated on the accumulation type (acc_t), s being the saved input or output.
// Forward: out[i] = op.f(x[i]) in x's dtype, the compute dtype (`out` may alias x); floating
// dtypes, plus int64 and bool when D is Dtypes::All.
// An Op whose float body is branch-free vector math (static constexpr bool kVectorMath = true)
// runs its float32 loops through the AVX-512 / AVX2 copies (kernels::map1_flat_wide).
template <class Op>
constexpr bool vector_math() {
  if constexpr (requires { Op::kVectorMath; }) return Op::kVectorMath;
  else return false;
}
template <class Op, class O, class A, class F>
void flat1(int64_t n, O* out, const A* a, const F& f) {
  if constexpr (vector_math<Op>() && std::is_same_v<A, float>) kernels::map1_flat_wide(n, out, a, f);
  else kernels::map1_flat(n, out, a, f);
}
template <class Op, class O, class A, class B, class F>
void flat2(int64_t n, O* out, const A* a, const B* b, const F& f) {
  if constexpr (vector_math<Op>() && std::is_same_v<A, float>) kernels::map2_flat_wide(n, out, a, b, f);
  else kernels::map2_flat(n, out, a, b, f);
}

template <Dtypes D, class Op>
void elementwise_forward(const char* name, const TensorImplPtr& x, const TensorImplPtr& out, const Op& op) {
  auto fn = [op]<class T>() {
    return [op](T v) { return kernels::convert<T>(op.template f<acc_t<T>>(acc_t<T>(v))); };
  };
  if (is_half(x->dtype)) {  // through the float32 instantiation, by blocks
    auto f = fn.template operator()<float>();
    kernels::half_map<1>(x->dtype, false, x->shape, out->raw(), out->strides, {x->raw()}, {&x->strides},
                         [&](void* r, std::array<const float*, 1> in, int64_t m) {
                           flat1<Op>(m, static_cast<float*>(r), in[0], f);
                         });
    return;
  }
  LUCID_APPLY_DISPATCH(D, x->dtype, name, [&] {
    using T = scalar_t;
    auto f = fn.template operator()<T>();
    if (same_dense_layout(*x, *out))
      flat1<Op>(x->numel(), out->template data<T>(), x->template data<T>(), f);
    else
      kernels::map1(x->shape, out->template data<T>(), out->strides, x->template data<T>(), x->strides, f);
  });
}

// Backward: op.df(g[i], s[i]) in g's dtype (floating; the caller casts g to s's dtype). Without a
// saved tensor (s null) df is called with g in its place.
template <class Op>
TensorImplPtr elementwise_backward(const char* name, const TensorImplPtr& g, const TensorImplPtr& s, const Op& op) {
  auto out = empty(g->shape, g->dtype);
  const TensorImplPtr& sv = s ? s : g;
  auto fn = [op]<class T>() {
    return [op](T gv, T v) { return T(op.template df<acc_t<T>>(acc_t<T>(gv), acc_t<T>(v))); };
  };
  if (is_half(g->dtype)) {  // through the float32 instantiation, by blocks
    auto df = fn.template operator()<float>();
    kernels::half_map<2>(g->dtype, false, g->shape, out->raw(), out->strides, {g->raw(), sv->raw()},
                         {&g->strides, &sv->strides}, [&](void* r, std::array<const float*, 2> in, int64_t m) {
                           flat2<Op>(m, static_cast<float*>(r), in[0], in[1], df);
                         });
    return out;
  }
  LUCID_DISPATCH_FLOAT_NO_HALF(g->dtype, name, [&] {
    using T = scalar_t;
    auto df = fn.template operator()<T>();
    if (g->is_contiguous() && sv->is_contiguous())
      flat2<Op>(out->numel(), out->template data<T>(), g->template data<T>(), sv->template data<T>(), df);
    else
      kernels::map2(g->shape, out->template data<T>(), out->strides, g->template data<T>(), g->strides,
                    sv->template data<T>(), sv->strides, df);
  });
  return out;
}
#undef LUCID_APPLY_DISPATCH

// The gradient handed to an input: summed over broadcast dims and cast to the input's dtype.
inline TensorImplPtr grad_for(const TensorImplPtr& g, const Shape& shape, DType dtype) {
  return cast_raw(g->shape == shape ? g : sum_to(g, shape), dtype);
}

// The first half of a mean/variance norm's fused backward (batch, group and layer norm):
// grad_out checked against the saved input x, the operands made contiguous in the compute dtype
// `cd`, and the gradients that are needed allocated (dx in cd; dw, db in its accumulation dtype).
struct NormBackwardArgs {
  TensorImplPtr xc, wc, go;  // wc null without a weight
  TensorImplPtr dx, dw, db;  // null where not needed
  bool none() const { return !dx && !dw && !db; }
};
inline NormBackwardArgs norm_backward_args(const char* node, const TensorImplPtr& grad_out, const TensorImplPtr& x,
                                           const TensorImplPtr& w, DType cd, bool need_dx, bool need_dw,
                                           bool need_db, const Shape& w_shape, const Shape& b_shape) {
  LUCID_CHECK_DTYPE(grad_out != nullptr, node, ": grad_out is None");
  LUCID_CHECK_SHAPE(grad_out->shape == x->shape, node, ": grad_out shape ", shape_str(grad_out->shape),
                    " does not match the output shape ", shape_str(x->shape));
  LUCID_CHECK_DTYPE(is_floating(grad_out->dtype), node, ": expected a floating grad_out, got ",
                    dtype_name(grad_out->dtype));
  NormBackwardArgs a;
  if (!need_dx && !need_dw && !need_db) return a;
  const DType ad = acc_dtype(cd);
  a.xc = contiguous_raw(cast_raw(x, cd));
  a.wc = w ? contiguous_raw(cast_raw(w, cd)) : nullptr;
  a.go = contiguous_raw(cast_raw(grad_out, cd));
  a.dx = need_dx ? empty(x->shape, cd) : nullptr;
  a.dw = need_dw ? empty(w_shape, ad) : nullptr;
  a.db = need_db ? empty(b_shape, ad) : nullptr;
  return a;
}

}  // namespace lucid
