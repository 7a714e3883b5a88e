// Internal to ops/reduce.cpp: how a reduction over a dim mask is planned and run. A plan picks
// the kernel: kernels::reduce_dense on an [outer, red, inner] layout (the input itself when it is
// contiguous and its reduced dims form one block, else a copy made once), split_reduce for
// associative reducers over several runs of reduced dims (no copy), or kernels::reduce_loop on
// the strided input (small tensors). Also the dim bookkeeping (masks, keepdim shapes) and the
// float elementwise helpers the backward formulas use.
#pragma once
#include <type_traits>
#include <vector>

#include "core/tensor_impl.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/reduce.h"
#include "kernels/cpu/reduce_dense.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/cpu/reducers.h"

namespace lucid::reduce_detail {

using kernels::SumR;

// Sorted, unique, wrapped dims; empty input means all dims.
inline std::vector<bool> reduced_mask(const TensorImplPtr& x, const std::vector<int64_t>& dims, const char* op) {
  std::vector<bool> m(x->ndim(), dims.empty());
  for (auto d : dims) {
    int64_t w = wrap_dim(d, x->ndim(), op);
    if (x->ndim() == 0) continue;
    LUCID_CHECK_INDEX(!m[w], op, ": dim ", d, " appears more than once");
    m[w] = true;
  }
  return m;
}

inline kernels::ReduceGeom geom_of(const TensorImplPtr& x, const std::vector<bool>& m) {
  kernels::ReduceGeom g;
  for (int64_t i = 0; i < x->ndim(); ++i) {
    if (m[i]) g.red_shape.push_back(x->shape[i]), g.red_strides.push_back(x->strides[i]);
    else g.kept_shape.push_back(x->shape[i]), g.kept_strides.push_back(x->strides[i]);
  }
  return g;
}

inline Shape out_shape_of(const TensorImplPtr& x, const std::vector<bool>& m, bool keepdim) {
  Shape s;
  for (int64_t i = 0; i < x->ndim(); ++i) {
    if (!m[i]) s.push_back(x->shape[i]);
    else if (keepdim) s.push_back(1);
  }
  return s;
}

// The input shape with reduced dims set to 1: a reduction's result viewed this way broadcasts
// back over the input (stride 0 along the reduced dims).
inline Shape keep_shape(const Shape& in, const std::vector<bool>& m) {
  Shape s = in;
  for (size_t i = 0; i < s.size(); ++i)
    if (m[i]) s[i] = 1;
  return s;
}
inline TensorImplPtr as_keepdim(const TensorImplPtr& r, const Shape& in, const std::vector<bool>& m) {
  auto c = contiguous_raw(r);
  Shape ks = keep_shape(in, m);
  return make_view(c, ks, contiguous_strides(ks), c->offset);
}

// ---- planning: which kernel reads which tensor -------------------------------------------

// Dense plans run kernels::reduce_dense on src viewed as [outer, red, inner]; the others walk
// the strided input with kernels::reduce_loop (serial per output element).
struct Plan {
  TensorImplPtr src;
  bool dense = false;
  int64_t outer = 1, red = 1, inner = 1;
  int64_t count = 1;  // elements folded into each output
  kernels::ReduceGeom geom;
  bool split = false;  // associative reducers only: contiguous, reduced dims not one block (split_reduce)
  Shape shape;
  std::vector<bool> mask;
};

// Above this many elements a strided input is copied once so the dense kernel can run.
inline constexpr int64_t kCopyForDense = 32768;

// Whether the reduced dims form one block (size-1 dims ignored); fills outer/red/inner.
inline bool block_of(const Shape& shape, const std::vector<bool>& m, Plan& p) {
  int state = 0;  // 0: before the reduced block, 1: inside it, 2: after it
  bool block = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (m[i]) {
      block = block && state != 2;
      state = 1;
      p.red *= shape[i];
    } else if (state == 0) {
      p.outer *= shape[i];
    } else {
      state = 2;
      p.inner *= shape[i];
    }
  }
  return block;
}

// need_dense: the reducer reads per-output state or element positions (var, logsumexp, arg*).
// allow_split: the caller runs an associative reducer family (split_reduce folds several
// reduced runs one after the other instead of copying the input).
inline Plan make_plan(const TensorImplPtr& x, const std::vector<bool>& m, bool need_dense, bool allow_split = false) {
  Plan p;
  p.src = x;
  for (int64_t i = 0; i < x->ndim(); ++i)
    if (m[i]) p.count *= x->shape[i];
  bool block = block_of(x->shape, m, p);
  bool big = x->numel() >= kCopyForDense;
  if (block && (x->numel() == 0 || x->is_contiguous())) {
    p.dense = true;
  } else if (allow_split && big && x->is_contiguous()) {
    p.split = true;
    p.shape = x->shape;
    p.mask = m;
  } else if (block && (need_dense || big)) {
    p.src = contiguous_raw(x);
    p.dense = true;
  } else if (need_dense || big) {  // kept dims first, reduced dims last, copied once: rows
    Shape sh, st;
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t i = 0; i < x->ndim(); ++i)
        if (m[i] == (pass == 1)) sh.push_back(x->shape[i]), st.push_back(x->strides[i]);
    p.src = contiguous_raw(make_view(x, sh, st, x->offset));
    p.outer = 1;
    for (int64_t i = 0; i < x->ndim(); ++i)
      if (!m[i]) p.outer *= x->shape[i];
    p.red = p.count;
    p.inner = 1;
    p.dense = true;
  } else {
    p.geom = geom_of(x, m);
  }
  return p;
}

template <class R>
void run(const Plan& p, const R& r, typename R::Out* out);

// A reduction over a contiguous tensor whose reduced dims are not one block, for associative
// reducers: the last run of reduced dims is folded first (dense, into the reducer's accumulation
// type, so float32 sums still accumulate in double), then the smaller result the same way. No
// copy of the input. make.operator()<In, Out>(last) builds the reducer of each stage (a mean
// divides only in the last).
template <class T, class O, class Make>
void split_reduce(const T* x, const Shape& shape, const std::vector<bool>& mask, O* out, const Make& make) {
  using A = typename decltype(make.template operator()<T, O>(true))::Acc;
  Shape s;
  std::vector<bool> m;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1) s.push_back(shape[i]), m.push_back(mask[i]);
  Plan q;
  if (block_of(s, m, q)) {
    kernels::reduce_dense(make.template operator()<T, O>(true), x, out, q.outer, q.red, q.inner);
    return;
  }
  size_t b = m.size();
  while (!m[b - 1]) --b;
  size_t a = b;
  while (a > 0 && m[a - 1]) --a;
  int64_t outer = 1, red = 1, inner = 1;
  for (size_t i = 0; i < s.size(); ++i) (i < a ? outer : i < b ? red : inner) *= s[i];
  std::vector<A> tmp(size_t(outer * inner));
  kernels::reduce_dense(make.template operator()<T, A>(false), x, tmp.data(), outer, red, inner);
  Shape s2(s.begin(), s.begin() + a);
  std::vector<bool> m2(m.begin(), m.begin() + a);
  s2.push_back(inner);
  m2.push_back(false);
  split_reduce<A, O>(tmp.data(), s2, m2, out, make);
}

// Runs the reducer family `make` (see split_reduce) on a plan.
template <class T, class O, class Make>
void run_family(const Plan& p, O* out, const Make& make) {
  if (p.split) split_reduce<T, O>(p.src->template data<T>(), p.shape, p.mask, out, make);
  else run(p, make.template operator()<T, O>(true), out);
}

// Sums (div = 1) and means (div = count).
template <class T, class O>
void run_sum(const Plan& p, O* out, double div) {
  if constexpr (std::is_same_v<T, float> && std::is_same_v<O, float>) {
    if (p.dense && p.inner == 1) return kernels::sum_rows_f32(p.src->template data<float>(), out, p.outer, p.red, div);
    if (p.dense) return kernels::sum_cols_f32(p.src->template data<float>(), out, p.outer, p.red, p.inner, div);
  }
  run_family<T>(p, out, [div]<class In, class Out>(bool last) {
    SumR<In, Out> r;
    r.div = typename SumR<In, Out>::Acc(last ? div : 1.0);
    return r;
  });
}

template <class R>
void run(const Plan& p, const R& r, typename R::Out* out) {
  using In = typename R::In;
  using Acc = typename R::Acc;
  const In* x = p.src->template data<In>();
  if (p.dense) {
    kernels::reduce_dense(r, x, out, p.outer, p.red, p.inner);
    return;
  }
  kernels::reduce_loop(
      p.geom, x, out, r.init(0), [&r](Acc& a, In v) { r.visit(a, v, 0); },
      [&r](const Acc& a) { return r.finish(a, 0); });
}

// ---- float elementwise helpers for the backward formulas ---------------------------------

// out = f(a, b[, c]) over `shape`, operands broadcast and converted to a's floating dtype.
template <class FFactory>
TensorImplPtr fmap2(const Shape& shape, const TensorImplPtr& a, const TensorImplPtr& b0, FFactory make) {
  auto b = cast_raw(b0, a->dtype);
  auto out = empty(shape, a->dtype);
  Shape as = broadcast_strides(a->shape, a->strides, shape), bs = broadcast_strides(b->shape, b->strides, shape);
  LUCID_DISPATCH_FLOAT(a->dtype, "reduce_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    auto f = make.template operator()<A>();
    kernels::map2(shape, out->template data<T>(), out->strides, a->template data<T>(), as, b->template data<T>(), bs,
                  [f](T x, T y) { return T(f(A(x), A(y))); });
  });
  return out;
}
template <class FFactory>
TensorImplPtr fmap3(const Shape& shape, const TensorImplPtr& a, const TensorImplPtr& b0,
                    const TensorImplPtr& c0, FFactory make) {
  auto b = cast_raw(b0, a->dtype), c = cast_raw(c0, a->dtype);
  auto out = empty(shape, a->dtype);
  Shape as = broadcast_strides(a->shape, a->strides, shape), bs = broadcast_strides(b->shape, b->strides, shape),
        cs = broadcast_strides(c->shape, c->strides, shape);
  LUCID_DISPATCH_FLOAT(a->dtype, "reduce_backward", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    auto f = make.template operator()<A>();
    kernels::map3(shape, out->template data<T>(), out->strides, a->template data<T>(), as, b->template data<T>(), bs, c->template data<T>(), cs,
                  [f](T x, T y, T z) { return T(f(A(x), A(y), A(z))); });
  });
  return out;
}

}  // namespace lucid::reduce_detail
