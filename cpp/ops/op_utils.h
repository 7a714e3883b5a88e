// Helpers shared by the op files: elementwise application over broadcast operands in one
// compute dtype, and the "grad for this input" tail (sum back to its shape, cast to its dtype).
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"
#include "kernels/cpu/elementwise.h"
#include "ops/reduce.h"

namespace lucid {

// One instantiation per input dtype: the output is either the input dtype or bool.
template <bool ToBool, class T> using out_t = std::conditional_t<ToBool, bool, T>;

// out[i] = f(a[i]) over a's shape; f maps acc_t values. Output in a's dtype (or bool).
template <bool ToBool = false, class FFactory>
TensorImplPtr unary_apply(const char* name, const TensorImplPtr& a, FFactory make) {
  auto out = empty(a->shape, ToBool ? DType::Bool : a->dtype);
  LUCID_DISPATCH(a->dtype, name, [&] {
    using T = scalar_t;
    using O = out_t<ToBool, T>;
    auto f = make.template operator()<acc_t<T>>();
    auto g = [f](T x) { return kernels::convert<O>(f(acc_t<T>(x))); };
    if (a->is_contiguous())
      kernels::map1_flat(out->numel(), out->data<O>(), a->data<T>(), g);
    else
      kernels::map1(a->shape, out->data<O>(), out->strides, a->data<T>(), a->strides, g);
  });
  return out;
}

// out = f(a, b) with a, b broadcast to `shape` and both in a's dtype; output in that dtype
// (or bool).
template <bool ToBool = false, class FFactory>
TensorImplPtr binary_apply(const char* name, const Shape& shape, const TensorImplPtr& a,
                           const TensorImplPtr& b, FFactory make) {
  auto out = empty(shape, ToBool ? DType::Bool : a->dtype);
  const bool flat = a->shape == shape && b->shape == shape && a->is_contiguous() && b->is_contiguous();
  LUCID_DISPATCH(a->dtype, name, [&] {
    using T = scalar_t;
    using O = out_t<ToBool, T>;
    auto f = make.template operator()<acc_t<T>>();
    auto g = [f](T x, T y) { return kernels::convert<O>(f(acc_t<T>(x), acc_t<T>(y))); };
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
template <class FFactory>
TensorImplPtr ternary_apply(const char* name, const Shape& shape, const TensorImplPtr& a,
                            const TensorImplPtr& b, const TensorImplPtr& c, FFactory make) {
  auto out = empty(shape, a->dtype);
  Shape as = broadcast_strides(a->shape, a->strides, shape);
  Shape bs = broadcast_strides(b->shape, b->strides, shape);
  Shape cs = broadcast_strides(c->shape, c->strides, shape);
  LUCID_DISPATCH(a->dtype, name, [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    auto f = make.template operator()<A>();
    kernels::map3(shape, out->data<T>(), out->strides, a->data<T>(), as, b->data<T>(), bs,
                  c->data<T>(), cs, [f](T x, T y, T z) { return T(f(A(x), A(y), A(z))); });
  });
  return out;
}

// The gradient handed to an input: summed over broadcast dims and cast to the input's dtype.
inline TensorImplPtr grad_for(const TensorImplPtr& g, const Shape& shape, DType dtype) {
  return cast_raw(g->shape == shape ? g : sum_to(g, shape), dtype);
}

}  // namespace lucid
