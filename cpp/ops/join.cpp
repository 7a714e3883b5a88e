#include "ops/join.h"

#include "ops/binary.h"
#include "ops/factory.h"
#include "ops/grad_graph.h"
#include "ops/op_utils.h"
#include "ops/view.h"

namespace lucid {

namespace {

// out = c ? a : b, with c (bool), a and b (out's dtype) broadcast to out's shape. out may be b
// itself (in-place masked_fill_): each element is read before it is written.
void where_into(const TensorImplPtr& out, const TensorImplPtr& c, const TensorImplPtr& a, const TensorImplPtr& b,
                const char* op) {
  Shape cs = broadcast_strides(c->shape, c->strides, out->shape);
  Shape as = broadcast_strides(a->shape, a->strides, out->shape);
  Shape bs = broadcast_strides(b->shape, b->strides, out->shape);
  // The condition is read as bytes (a bool is one byte holding 0 or 1): GCC vectorises a select
  // on a uint8_t but not on a bool.
  const uint8_t* cond = reinterpret_cast<const uint8_t*>(c->data<bool>());
  LUCID_DISPATCH(out->dtype, op, [&] {
    using T = scalar_t;
    if (a->numel() == 1) {  // masked_fill's pattern: one value where c holds (a dense blend)
      const T v = *a->data<T>();
      kernels::map2(out->shape, out->data<T>(), out->strides, cond, cs, b->data<T>(), bs,
                    [v](uint8_t m, T y) { return m ? v : y; });
      return;
    }
    kernels::map3(out->shape, out->data<T>(), out->strides, cond, cs, a->data<T>(), as, b->data<T>(), bs,
                  [](uint8_t m, T x, T y) { return m ? x : y; });
  });
}

TensorImplPtr where_raw(const TensorImplPtr& c, const TensorImplPtr& a, const TensorImplPtr& b, const Shape& shape,
                        const char* op) {
  auto out = empty(shape, a->dtype);
  where_into(out, c, a, b, op);
  return out;
}

bool any_requires_grad_list(const std::vector<TensorImplPtr>& ts) {
  if (!GradMode::is_enabled()) return false;
  for (auto& t : ts)
    if (t->requires_grad) return true;
  return false;
}

// ---- cat / stack ------------------------------------------------------------------------

// The grad of input i is the slice [start_i, start_i + size_i) of the grad along dim_.
struct CatBackward final : FuncOp<CatBackward, 0> {
  static const OpSchema& schema_v1;
  int64_t dim_ = 0;
  std::vector<Shape> shapes_;
  std::vector<int64_t> starts_;  // -1: a skipped 1-d empty input
  std::vector<DType> dtypes_;
  const char* name() const override { return "CatBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    std::vector<TensorImplPtr> out(shapes_.size());
    for (size_t i = 0; i < shapes_.size(); ++i) {
      if (!needs_input_grad(i)) continue;
      if (starts_[i] < 0) {
        out[i] = empty(shapes_[i], dtypes_[i]);
        continue;
      }
      auto v = make_view(g, shapes_[i], g->strides, g->offset + starts_[i] * g->strides[dim_]);
      out[i] = cast_raw(v, dtypes_[i]);
    }
    return out;
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    std::vector<TensorImplPtr> out(shapes_.size());
    for (size_t i = 0; i < shapes_.size(); ++i) {
      if (!needs_input_grad(i)) continue;
      if (starts_[i] < 0) out[i] = full(shapes_[i], 0.0, dtypes_[i]);
      else out[i] = to(narrow(g, dim_, starts_[i], shapes_[i][dim_]), dtypes_[i], false);
    }
    return out;
  }
};
const OpSchema& CatBackward::schema_v1 = register_schema(
    {.name = "cat", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

// The grad of input i is the grad selected at i along dim_.
struct StackBackward final : FuncOp<StackBackward, 0> {
  static const OpSchema& schema_v1;
  int64_t dim_ = 0;
  std::vector<DType> dtypes_;
  const char* name() const override { return "StackBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    std::vector<TensorImplPtr> out(dtypes_.size());
    Shape shape = g->shape, strides = g->strides;
    shape.erase(shape.begin() + dim_);
    strides.erase(strides.begin() + dim_);
    for (size_t i = 0; i < dtypes_.size(); ++i)
      if (needs_input_grad(i))
        out[i] = cast_raw(make_view(g, shape, strides, g->offset + int64_t(i) * g->strides[dim_]), dtypes_[i]);
    return out;
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    std::vector<TensorImplPtr> out(dtypes_.size());
    for (size_t i = 0; i < dtypes_.size(); ++i)
      if (needs_input_grad(i)) out[i] = to(select(g, dim_, int64_t(i)), dtypes_[i], false);
    return out;
  }
};
const OpSchema& StackBackward::schema_v1 = register_schema(
    {.name = "stack", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

// ---- where / tril / triu / masked_fill ----------------------------------------------------

struct WhereBackward final : FuncOp<WhereBackward, 3> {
  static const OpSchema& schema_v1;
  Shape a_shape_, b_shape_;
  DType a_dtype_ = kDefaultFloat, b_dtype_ = kDefaultFloat;
  const char* name() const override { return "WhereBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const auto& c = saved_[0];
    auto zero = scalar_tensor(0.0, g->dtype);
    TensorImplPtr ga, gb;
    if (needs_input_grad(1)) ga = grad_for(where_raw(c, g, zero, g->shape, "where_backward"), a_shape_, a_dtype_);
    if (needs_input_grad(2)) gb = grad_for(where_raw(c, zero, g, g->shape, "where_backward"), b_shape_, b_dtype_);
    return {nullptr, ga, gb};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto& c = saved_[0];
    auto zero = scalar_tensor(0.0, g->dtype);
    TensorImplPtr ga, gb;
    if (needs_input_grad(1)) ga = grad_for_graph(where(c, g, zero), a_shape_, a_dtype_);
    if (needs_input_grad(2)) gb = grad_for_graph(where(c, zero, g), b_shape_, b_dtype_);
    return {nullptr, ga, gb};
  }
};
const OpSchema& WhereBackward::schema_v1 = register_schema(
    {.name = "where", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

// Keeps the elements with j - i <= k (lower) or j - i >= k (upper) in the last two dims.
TensorImplPtr tri_raw(const TensorImplPtr& x, int64_t k, bool lower) {
  const char* op = lower ? "tril" : "triu";
  LUCID_CHECK_SHAPE(x->ndim() >= 2, op, ": input must have at least 2 dims, got shape ", shape_str(x->shape));
  const int64_t rows = x->shape[x->ndim() - 2], cols = x->shape[x->ndim() - 1];
  auto mask = empty({rows, cols}, DType::Bool);
  bool* m = mask->data<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m[i * cols + j] = lower ? j - i <= k : j - i >= k;
  return where_raw(mask, x, scalar_tensor(0.0, x->dtype), x->shape, op);
}

template <bool Lower>
struct TriBackward final : FuncOp<TriBackward<Lower>, 1> {
  static const OpSchema& schema_v1;
  int64_t diagonal_ = 0;
  const char* name() const override { return Lower ? "TrilBackward" : "TriuBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) { return {tri_raw(g, diagonal_, Lower)}; }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    return {Lower ? tril(g, diagonal_) : triu(g, diagonal_)};
  }
};
template <> const OpSchema& TriBackward<true>::schema_v1 = register_schema(
    {.name = "tril", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});
template <> const OpSchema& TriBackward<false>::schema_v1 = register_schema(
    {.name = "triu", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

template <bool Lower>
TensorImplPtr tri(const TensorImplPtr& x, int64_t diagonal) {
  auto out = tri_raw(x, diagonal, Lower);
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<TriBackward<Lower>>();
    n->diagonal_ = diagonal;
    n->set_inputs({x});
    attach_node(out, std::move(n));
  }
  return out;
}

struct MaskedFillBackward final : FuncOp<MaskedFillBackward, 3> {
  static const OpSchema& schema_v1;
  Shape x_shape_;
  DType x_dtype_ = kDefaultFloat, value_dtype_ = kDefaultFloat;
  const char* name() const override { return "MaskedFillBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const auto& mask = saved_[1];
    auto zero = scalar_tensor(0.0, g->dtype);
    TensorImplPtr gx, gv;
    if (needs_input_grad(0)) gx = grad_for(where_raw(mask, zero, g, g->shape, "masked_fill_backward"), x_shape_, x_dtype_);
    if (needs_input_grad(2))
      gv = cast_raw(sum(where_raw(mask, g, zero, g->shape, "masked_fill_backward"), {}, /*keepdim=*/false), value_dtype_);
    return {gx, nullptr, gv};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto& mask = saved_[1];
    auto zero = scalar_tensor(0.0, g->dtype);
    TensorImplPtr gx, gv;
    if (needs_input_grad(0)) gx = grad_for_graph(where(mask, zero, g), x_shape_, x_dtype_);
    if (needs_input_grad(2)) gv = to(sum(where(mask, g, zero), {}, /*keepdim=*/false), value_dtype_, false);
    return {gx, nullptr, gv};
  }
};
const OpSchema& MaskedFillBackward::schema_v1 = register_schema(
    {.name = "masked_fill", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

void check_mask_value(const TensorImplPtr& mask, const TensorImplPtr& value, const char* op) {
  LUCID_CHECK_DTYPE(mask->dtype == DType::Bool, op, ": mask must be a bool tensor, got ", dtype_name(mask->dtype));
  LUCID_CHECK_SHAPE(value->ndim() == 0, op, ": value must be a number or a 0-d tensor, got a tensor of shape ",
                    shape_str(value->shape));
}

}  // namespace

TensorImplPtr cat(const std::vector<TensorImplPtr>& ts, int64_t dim) {
  LUCID_CHECK_SHAPE(!ts.empty(), "cat: expected a non-empty list of tensors");  // PyTorch's ValueError
  auto legacy_empty = [](const TensorImplPtr& t) { return t->ndim() == 1 && t->shape[0] == 0; };
  const TensorImplPtr* ref = &ts[0];
  DType dt = ts[0]->dtype;
  for (size_t i = 0; i < ts.size(); ++i) {
    LUCID_CHECK_SHAPE(ts[i]->ndim() > 0, "cat: a 0-d tensor (at position ", i, ") cannot be concatenated");
    dt = promote_types(dt, ts[i]->dtype);
    if (legacy_empty(*ref) && !legacy_empty(ts[i])) ref = &ts[i];
  }
  const int64_t d = wrap_dim(dim, (*ref)->ndim(), "cat");
  const bool skip_empty = !legacy_empty(*ref);
  Shape shape = (*ref)->shape;
  shape[d] = 0;
  std::vector<int64_t> starts(ts.size(), -1);
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& t = ts[i];
    if (skip_empty && legacy_empty(t)) continue;
    LUCID_CHECK_SHAPE(t->ndim() == (*ref)->ndim(), "cat: tensors must have the same number of dims, got shape ",
                      shape_str((*ref)->shape), " and shape ", shape_str(t->shape), " (at position ", i, ")");
    for (int64_t k = 0; k < t->ndim(); ++k)
      LUCID_CHECK_SHAPE(k == d || t->shape[k] == (*ref)->shape[k], "cat: sizes of tensors must match except in dim ", d,
                        ", got shape ", shape_str((*ref)->shape), " and shape ", shape_str(t->shape), " (at position ", i, ")");
    starts[i] = shape[d];
    shape[d] += t->shape[d];
  }
  auto out = empty(shape, dt);
  for (size_t i = 0; i < ts.size(); ++i) {
    if (starts[i] < 0) continue;
    copy_into(make_view(out, ts[i]->shape, out->strides, starts[i] * out->strides[d]), ts[i]);
  }
  if (any_requires_grad_list(ts) && is_floating(dt)) {
    auto n = std::make_shared<CatBackward>();
    n->dim_ = d;
    n->starts_ = starts;
    for (auto& t : ts) {
      n->shapes_.push_back(t->shape);
      n->dtypes_.push_back(t->dtype);
      n->next_edges.push_back(gradient_edge(t));
    }
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr stack(const std::vector<TensorImplPtr>& ts, int64_t dim) {
  LUCID_CHECK(!ts.empty(), "stack: expected a non-empty list of tensors");
  const Shape& s0 = ts[0]->shape;
  DType dt = ts[0]->dtype;
  for (size_t i = 1; i < ts.size(); ++i) {
    LUCID_CHECK_SHAPE(ts[i]->shape == s0, "stack: expects every tensor to have the same shape, got ", shape_str(s0),
                      " at entry 0 and ", shape_str(ts[i]->shape), " at entry ", i);
    dt = promote_types(dt, ts[i]->dtype);
  }
  const int64_t d = wrap_dim(dim, int64_t(s0.size()) + 1, "stack");
  Shape shape = s0;
  shape.insert(shape.begin() + d, int64_t(ts.size()));
  auto out = empty(shape, dt);
  Shape strides = out->strides;
  strides.erase(strides.begin() + d);
  for (size_t i = 0; i < ts.size(); ++i) copy_into(make_view(out, s0, strides, int64_t(i) * out->strides[d]), ts[i]);
  if (any_requires_grad_list(ts) && is_floating(dt)) {
    auto n = std::make_shared<StackBackward>();
    n->dim_ = d;
    for (auto& t : ts) {
      n->dtypes_.push_back(t->dtype);
      n->next_edges.push_back(gradient_edge(t));
    }
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr where(const TensorImplPtr& cond, const TensorImplPtr& a, const TensorImplPtr& b) {
  LUCID_CHECK_DTYPE(cond->dtype == DType::Bool, "where: condition must be a bool tensor, got ", dtype_name(cond->dtype));
  DType dt = result_type(a, b);
  Shape shape = broadcast_shapes(cond->shape, broadcast_shapes(a->shape, b->shape, "where"), "where");
  auto out = empty_elementwise(shape, dt, {cond.get(), a.get(), b.get()});  // NOTE [elementwise output layout]
  where_into(out, cond, cast_raw(a, dt), cast_raw(b, dt), "where");
  if (any_requires_grad({&a, &b}) && is_floating(dt)) {
    auto n = std::make_shared<WhereBackward>();
    n->a_shape_ = a->shape, n->b_shape_ = b->shape, n->a_dtype_ = a->dtype, n->b_dtype_ = b->dtype;
    n->set_inputs({cond, a, b});
    n->save(0, cond);
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr tril(const TensorImplPtr& x, int64_t diagonal) { return tri<true>(x, diagonal); }
TensorImplPtr triu(const TensorImplPtr& x, int64_t diagonal) { return tri<false>(x, diagonal); }

TensorImplPtr masked_fill(const TensorImplPtr& x, const TensorImplPtr& mask, const TensorImplPtr& value) {
  check_mask_value(mask, value, "masked_fill");
  Shape shape = broadcast_shapes(x->shape, mask->shape, "masked_fill");
  auto out = where_raw(mask, cast_raw(value, x->dtype), x, shape, "masked_fill");
  if (any_requires_grad({&x, &value}) && is_floating(x->dtype)) {
    auto n = std::make_shared<MaskedFillBackward>();
    n->x_shape_ = x->shape, n->x_dtype_ = x->dtype, n->value_dtype_ = value->dtype;
    n->set_inputs({x, mask, value});
    n->save(1, mask);
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr masked_fill_(const TensorImplPtr& x, const TensorImplPtr& mask, const TensorImplPtr& value) {
  const char* op = "masked_fill_";
  check_mask_value(mask, value, op);
  LUCID_CHECK_SHAPE(broadcast_shapes(x->shape, mask->shape, op) == x->shape, op, ": mask of shape ",
                    shape_str(mask->shape), " cannot be broadcast to the tensor of shape ", shape_str(x->shape));
  if (inplace_records(x, {value}, op)) return rebase_inplace(x, masked_fill(x, mask, value), op);
  // A mask that shares x's memory (x.masked_fill_(x, ...)) is read in full before any write.
  auto m = mask;
  if (mask->storage == x->storage) {
    m = empty(mask->shape, DType::Bool);
    copy_into(m, mask);
  }
  where_into(x, m, cast_raw(value, x->dtype), x, op);
  x->bump_version();
  return x;
}

}  // namespace lucid
