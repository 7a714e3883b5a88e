#include "ops/sort.h"

#include <algorithm>

#include "kernels/cpu/sort.h"
#include "ops/factory.h"
#include "ops/index.h"
#include "ops/op_utils.h"
#include "ops/view.h"

namespace lucid {

namespace {

template <bool IsTopk>
struct SortBackward : FuncOp<SortBackward<IsTopk>, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape_;
  DType in_dtype_ = DType::Float32;
  int64_t dim_ = 0;
  TensorImplPtr indices_;
  const char* name() const override { return IsTopk ? "TopkBackward" : "SortBackward"; }
  // zeros(in_shape).scatter_add(dim, indices, g): recorded when grad mode is on (create_graph).
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    if (in_shape_.empty()) return {to(g, in_dtype_, false)};
    auto z = full(in_shape_, 0.0, g->dtype);
    return {to(scatter_add(z, dim_, indices_, g), in_dtype_, false)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) { return apply(g); }
  void release_saved() override {
    indices_.reset();
    FuncOp<SortBackward<IsTopk>, 1>::release_saved();
  }
};
template <>
const OpSchema& SortBackward<false>::schema_v1 = register_schema(
    {.name = "sort", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});
template <>
const OpSchema& SortBackward<true>::schema_v1 = register_schema(
    {.name = "topk", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});
const OpSchema& kArgsortSchema = register_schema(
    {.name = "argsort", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

// The row layout: x with dim moved last, contiguous, as (rows, n).
struct Rows {
  TensorImplPtr c;
  Shape moved;  // shape with dim last
  int64_t rows = 1, n = 1;
};
// x with dim d moved last, dense. float16 and bfloat16 rows come back as float32 (exact both ways:
// the same order, the same ties), so the sort and top-k kernels are not compiled for them.
Rows rows_of(const TensorImplPtr& x, int64_t d) {
  auto dense = [&](const TensorImplPtr& t) { return is_half(x->dtype) ? cast_raw(t, DType::Float32) : contiguous_raw(t); };
  Rows r;
  if (x->ndim() == 0) {
    r.c = dense(x);
    return r;
  }
  Shape sh = x->shape, st = x->strides;
  std::rotate(sh.begin() + d, sh.begin() + d + 1, sh.end());
  std::rotate(st.begin() + d, st.begin() + d + 1, st.end());
  r.c = dense(make_view(x, sh, st, x->offset));
  r.moved = sh;
  r.n = sh.back();
  r.rows = r.n ? r.c->numel() / r.n : 0;
  return r;
}
// (rows, k) results with dim last back to x's layout: a permuted view made contiguous.
TensorImplPtr from_rows(const TensorImplPtr& t, int64_t d, int64_t ndim) {
  if (ndim == 0 || d == ndim - 1) return t;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < ndim - 1; ++i) perm.push_back(i);
  perm.insert(perm.begin() + d, ndim - 1);
  Shape sh(static_cast<size_t>(ndim)), st(static_cast<size_t>(ndim));
  for (int64_t i = 0; i < ndim; ++i) sh[size_t(i)] = t->shape[size_t(perm[size_t(i)])], st[size_t(i)] = t->strides[size_t(perm[size_t(i)])];
  return contiguous_raw(make_view(t, sh, st, t->offset));
}

template <bool IsTopk>
void record(const TensorImplPtr& x, const TensorImplPtr& values, const TensorImplPtr& indices, int64_t d) {
  if (!is_floating(x->dtype) || !any_requires_grad({&x})) return;
  auto n = std::make_shared<SortBackward<IsTopk>>();
  n->in_shape_ = x->shape;
  n->in_dtype_ = x->dtype;
  n->dim_ = d;
  n->indices_ = indices;
  n->set_inputs({x});
  attach_node(values, std::move(n));
}

int64_t sort_dim(const TensorImplPtr& x, int64_t dim, const char* op) {
  return x->ndim() ? wrap_dim(dim, x->ndim(), op) : (wrap_dim(dim, 1, op), 0);
}

std::pair<TensorImplPtr, TensorImplPtr> sort_impl(const TensorImplPtr& x, int64_t dim, bool descending, bool stable,
                                                  bool want_values, const char* op) {
  const int64_t d = sort_dim(x, dim, op);
  // PyTorch's sort is stable in two more cases: a 1-d int64 input of at least 32768 elements
  // sorted ascending (its radix sort) and a dim of stride 0 (all equal; indices stay 0..n-1).
  if (x->ndim() == 1 && x->dtype == DType::Int64 && !descending && x->shape[0] >= 32768) stable = true;
  if (x->ndim() && x->strides[size_t(d)] == 0) stable = true;
  Rows r = rows_of(x, d);
  auto vals = want_values ? empty(r.c->shape, r.c->dtype) : nullptr;
  auto idx = empty(r.c->shape, DType::Int64);
  if (r.c->numel() > 0) {
    LUCID_DISPATCH_NO_HALF(r.c->dtype, op, [&] {
      using T = scalar_t;
      kernels::sort_rows<T, acc_t<T>>(r.c->data<T>(), vals ? vals->data<T>() : nullptr, idx->data<int64_t>(), r.rows,
                                      r.n, descending, stable);
    });
  }
  return {vals ? cast_raw(from_rows(vals, d, x->ndim()), x->dtype) : nullptr, from_rows(idx, d, x->ndim())};
}

}  // namespace

std::pair<TensorImplPtr, TensorImplPtr> sort(const TensorImplPtr& x, int64_t dim, bool descending, bool stable) {
  auto [v, i] = sort_impl(x, dim, descending, stable, true, "sort");
  record<false>(x, v, i, x->ndim() ? wrap_dim(dim, x->ndim(), "sort") : 0);
  return {v, i};
}

TensorImplPtr argsort(const TensorImplPtr& x, int64_t dim, bool descending, bool stable) {
  (void)kArgsortSchema;
  return sort_impl(x, dim, descending, stable, false, "argsort").second;
}

std::pair<TensorImplPtr, TensorImplPtr> topk(const TensorImplPtr& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  const int64_t d = sort_dim(x, dim, "topk");
  const int64_t size = x->ndim() ? x->shape[d] : 1;
  LUCID_CHECK_SHAPE(k >= 0 && k <= size, "topk: k (", k, ") is out of range for dimension ", dim, " of size ", size,
                    " (input shape ", shape_str(x->shape), ")");
  if (x->ndim() == 0) k = 1;  // PyTorch: a 0-d input gives its element for k = 0 too
  Rows r = rows_of(x, d);
  Shape out_shape = r.moved;
  if (!out_shape.empty()) out_shape.back() = k;
  auto vals = empty(out_shape, r.c->dtype), idx = empty(out_shape, DType::Int64);
  if (vals->numel() > 0) {
    LUCID_DISPATCH_NO_HALF(r.c->dtype, "topk", [&] {
      using T = scalar_t;
      kernels::topk_rows<T, acc_t<T>>(r.c->data<T>(), vals->data<T>(), idx->data<int64_t>(), r.rows, r.n, k, largest, sorted);
    });
  }
  auto v = cast_raw(from_rows(vals, d, x->ndim()), x->dtype), i = from_rows(idx, d, x->ndim());
  record<true>(x, v, i, d);
  return {v, i};
}

}  // namespace lucid
