#include "ops/select_k.h"

#include <cmath>

#include "core/shape.h"
#include "kernels/cpu/select_k.h"
#include "ops/binary.h"
#include "ops/factory.h"
#include "ops/index.h"
#include "ops/op_utils.h"
#include "ops/reduce.h"
#include "ops/reduce_plan.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

// ---- nodes ---------------------------------------------------------------------------------

namespace {
constexpr const char* kSelectNodeName[] = {"MaxBackward0",       "MinBackward0",      "MedianBackward1",
                                           "NanmedianBackward1", "KthvalueBackward0", "ModeBackward0"};
constexpr const char* kSplitNodeName[] = {"MaxBackward1",       "MinBackward1",  "MedianBackward0",
                                          "NanmedianBackward0", "AmaxBackward0", "AminBackward0"};
}  // namespace

template <SelectKind K>
const char* SelectBackward<K>::name() const {
  return kSelectNodeName[int(K)];
}

template <SelectKind K>
std::vector<TensorImplPtr> SelectBackward<K>::apply(const TensorImplPtr& g) {
  if (in_shape_.empty()) return {to(g, in_dtype_, false)};
  auto gk = keepdim_ ? g : unsqueeze(g, dim_);
  auto ik = keepdim_ ? indices_ : unsqueeze(indices_, dim_);
  auto z = full(in_shape_, 0.0, g->dtype);
  return {to(scatter_add(z, dim_, ik, gk), in_dtype_, false)};
}

template <SplitKind K>
const char* EvenSplitBackward<K>::name() const {
  return kSplitNodeName[int(K)];
}

template <SplitKind K>
Shape EvenSplitBackward<K>::keep_shape() const {  // the result's shape with keepdim
  Shape keep = in_shape_;
  for (int64_t d : dims_) keep[size_t(d)] = 1;
  return keep;
}

// max/min/median/nanmedian of a NaN result send the gradient to the NaNs; amax/amin compare
// (x == NaN is false everywhere, so their slice gets g / 0 * 0 = NaN, as PyTorch).
template <SplitKind K>
bool EvenSplitBackward<K>::nan_result() const {
  constexpr bool nan_aware = K != SplitKind::Amax && K != SplitKind::Amin;
  const auto& out = this->saved_[1];
  return nan_aware && out->numel() == 1 && std::isnan(item_as_double(out, name()));
}

// (g / count) * mask, in that order (PyTorch's evenly_distribute_backward and
// scale_grad_by_count), so the values agree bit for bit. Three passes over x's shape.
template <SplitKind K>
std::vector<TensorImplPtr> EvenSplitBackward<K>::apply(const TensorImplPtr& g) {
  const auto& x = this->saved_[0];
  auto ok = reshape(this->saved_[1], keep_shape());
  using reduce_detail::fmap2;
  auto mask = nan_result() ? fmap2(in_shape_, x, ok, []<class A>() { return [](A v, A) { return A(v != v); }; })
                           : fmap2(in_shape_, x, ok, []<class A>() { return [](A v, A o) { return A(v == o); }; });
  auto count = sum(mask, dims_, /*keepdim=*/true);
  auto gk = cast_raw(reshape(g, keep_shape()), x->dtype);
  auto dx = ternary_apply("EvenSplitBackward", in_shape_, gk, count, mask,
                          []<class A>() { return [](A gv, A c, A m) { return gv / c * m; }; });
  return {cast_raw(dx, in_dtype_)};
}

// create_graph: the mask is a constant, only g is recorded.
template <SplitKind K>
std::vector<TensorImplPtr> EvenSplitBackward<K>::apply_graph(const TensorImplPtr& g) {
  const Shape keep = keep_shape();
  TensorImplPtr mask, count;
  {
    NoGradGuard no_grad;
    const auto& x = this->saved_[0];
    mask = to(nan_result() ? isnan(x) : compare(x, reshape(this->saved_[1], keep), CompareOp::Eq), g->dtype, false);
    count = sum(mask, dims_, /*keepdim=*/true);
  }
  return {to(mul(div(reshape(g, keep), count), mask), in_dtype_, false)};
}

#define LUCID_SELECT_SCHEMA(K, op)                                                            \
  template <>                                                                                 \
  const OpSchema& SelectBackward<SelectKind::K>::schema_v1 = register_schema(                 \
      {.name = op, .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true}); \
  template struct SelectBackward<SelectKind::K>;
LUCID_SELECT_SCHEMA(MedianDim, "median")
LUCID_SELECT_SCHEMA(NanmedianDim, "nanmedian")
LUCID_SELECT_SCHEMA(Kthvalue, "kthvalue")
LUCID_SELECT_SCHEMA(Mode, "mode")
#undef LUCID_SELECT_SCHEMA
// max/min/amax/amin share the schemas "max"/"min"/"amax"/"amin" registered by ops/reduce.cpp,
// which defines these six schema_v1.
template struct SelectBackward<SelectKind::MaxDim>;
template struct SelectBackward<SelectKind::MinDim>;
template struct EvenSplitBackward<SplitKind::Max>;
template struct EvenSplitBackward<SplitKind::Min>;
template struct EvenSplitBackward<SplitKind::Amax>;
template struct EvenSplitBackward<SplitKind::Amin>;
template <>
const OpSchema& EvenSplitBackward<SplitKind::Median>::schema_v1 = SelectBackward<SelectKind::MedianDim>::schema_v1;
template <>
const OpSchema& EvenSplitBackward<SplitKind::Nanmedian>::schema_v1 =
    SelectBackward<SelectKind::NanmedianDim>::schema_v1;
template struct EvenSplitBackward<SplitKind::Median>;
template struct EvenSplitBackward<SplitKind::Nanmedian>;

namespace {
template <SelectKind K>
NodePtr make_select(const TensorImplPtr& x, const TensorImplPtr& indices, int64_t dim, bool keepdim) {
  auto n = std::make_shared<SelectBackward<K>>();
  n->in_shape_ = x->shape;
  n->in_dtype_ = x->dtype;
  n->dim_ = dim;
  n->keepdim_ = keepdim;
  n->indices_ = indices;
  n->set_inputs({x});
  return n;
}
template <SplitKind K>
NodePtr make_split(const TensorImplPtr& x, const TensorImplPtr& xs, const TensorImplPtr& out,
                   std::vector<int64_t> dims) {
  auto n = std::make_shared<EvenSplitBackward<K>>();
  n->in_dtype_ = x->dtype;
  n->in_shape_ = x->shape;
  n->dims_ = std::move(dims);
  n->next_edges = {gradient_edge(x)};
  n->save(0, xs);
  n->save_output(1, out);
  return n;
}
}  // namespace

void record_select(SelectKind kind, const TensorImplPtr& x, const TensorImplPtr& values, const TensorImplPtr& indices,
                   int64_t dim, bool keepdim) {
  if (!is_floating(x->dtype) || !any_requires_grad({&x})) return;
  NodePtr n;
  switch (kind) {
    case SelectKind::MaxDim: n = make_select<SelectKind::MaxDim>(x, indices, dim, keepdim); break;
    case SelectKind::MinDim: n = make_select<SelectKind::MinDim>(x, indices, dim, keepdim); break;
    case SelectKind::MedianDim: n = make_select<SelectKind::MedianDim>(x, indices, dim, keepdim); break;
    case SelectKind::NanmedianDim: n = make_select<SelectKind::NanmedianDim>(x, indices, dim, keepdim); break;
    case SelectKind::Kthvalue: n = make_select<SelectKind::Kthvalue>(x, indices, dim, keepdim); break;
    case SelectKind::Mode: n = make_select<SelectKind::Mode>(x, indices, dim, keepdim); break;
  }
  attach_node(values, std::move(n));
}

void record_even_split(SplitKind kind, const TensorImplPtr& x, const TensorImplPtr& xs, const TensorImplPtr& out,
                       std::vector<int64_t> dims) {
  if (!is_floating(x->dtype) || !any_requires_grad({&x})) return;
  if (dims.empty())
    for (int64_t d = 0; d < x->ndim(); ++d) dims.push_back(d);
  NodePtr n;
  switch (kind) {
    case SplitKind::Max: n = make_split<SplitKind::Max>(x, xs, out, std::move(dims)); break;
    case SplitKind::Min: n = make_split<SplitKind::Min>(x, xs, out, std::move(dims)); break;
    case SplitKind::Median: n = make_split<SplitKind::Median>(x, xs, out, std::move(dims)); break;
    case SplitKind::Nanmedian: n = make_split<SplitKind::Nanmedian>(x, xs, out, std::move(dims)); break;
    case SplitKind::Amax: n = make_split<SplitKind::Amax>(x, xs, out, std::move(dims)); break;
    case SplitKind::Amin: n = make_split<SplitKind::Amin>(x, xs, out, std::move(dims)); break;
  }
  attach_node(out, std::move(n));
}

// ---- ops -----------------------------------------------------------------------------------

namespace {

// Runs a row kernel over x with `d` moved last: values and indices of shape x.shape minus d
// (with d kept as size 1 under keepdim). A 0-d x is one row of one element.
template <class F>
std::pair<TensorImplPtr, TensorImplPtr> per_row(const TensorImplPtr& x, int64_t d, bool keepdim, const char* op,
                                                F&& kernel) {
  NoGradGuard no_grad;
  const int64_t n = x->ndim() ? x->shape[size_t(d)] : 1;
  LUCID_CHECK_INDEX(n > 0, op, "(): Expected reduction dim ", d, " to have non-zero size.");
  auto moved = x->ndim() ? movedim(x, {d}, {x->ndim() - 1}) : reshape(x, {1});
  // float16 and bfloat16 select as float32 (exact both ways: the same order and ties), so the
  // kernels are not compiled for them; the cast is the dense copy
  auto rows = is_half(x->dtype) ? cast_raw(moved, DType::Float32) : contiguous(moved);
  Shape out_shape = x->shape;
  if (!out_shape.empty()) out_shape.erase(out_shape.begin() + d);
  auto vals = empty(out_shape, rows->dtype), idx = empty(out_shape, DType::Int64);
  const int64_t r = vals->numel();
  if (r > 0) {
    LUCID_DISPATCH_NO_HALF(rows->dtype, op, [&] {
      using T = scalar_t;
      kernel.template operator()<T, acc_t<T>>(rows->data<T>(), vals->data<T>(), idx->data<int64_t>(), r, n);
    });
  }
  vals = cast_raw(vals, x->dtype);
  if (keepdim && x->ndim()) vals = unsqueeze(vals, d), idx = unsqueeze(idx, d);
  return {vals, idx};
}

int64_t select_dim(const TensorImplPtr& x, int64_t dim, const char* op) {
  return wrap_dim(dim, x->ndim() ? x->ndim() : 1, op) * (x->ndim() ? 1 : 0);
}

void no_bool(const TensorImplPtr& x, const char* op) {
  LUCID_CHECK_DTYPE(x->dtype != DType::Bool, op, ": bool input is not supported");
}

}  // namespace

std::pair<TensorImplPtr, TensorImplPtr> kthvalue(const TensorImplPtr& x, int64_t k, int64_t dim, bool keepdim) {
  no_bool(x, "kthvalue");
  const int64_t d = select_dim(x, dim, "kthvalue");
  const int64_t n = x->ndim() ? x->shape[size_t(d)] : 1;
  if (n > 0)
    LUCID_CHECK_SHAPE(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ", d);
  auto [v, i] = per_row(x, d, keepdim, "kthvalue", [&]<class T, class A>(const T* p, T* vo, int64_t* io, int64_t r,
                                                                          int64_t len) {
    kernels::kthvalue_rows<T, A>(p, vo, io, r, len, k);
  });
  record_select(SelectKind::Kthvalue, x, v, i, d, keepdim);
  return {v, i};
}

std::pair<TensorImplPtr, TensorImplPtr> median(const TensorImplPtr& x, int64_t dim, bool keepdim, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  no_bool(x, op);
  const int64_t d = select_dim(x, dim, op);
  auto [v, i] = per_row(x, d, keepdim, op, [&]<class T, class A>(const T* p, T* vo, int64_t* io, int64_t r,
                                                                  int64_t len) {
    kernels::median_rows<T, A>(p, vo, io, r, len, ignore_nan);
  });
  record_select(ignore_nan ? SelectKind::NanmedianDim : SelectKind::MedianDim, x, v, i, d, keepdim);
  return {v, i};
}

TensorImplPtr median(const TensorImplPtr& x, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  no_bool(x, op);
  TensorImplPtr out;
  if (x->numel() == 0) {
    out = full({}, is_floating(x->dtype) ? std::nan("") : 0.0, x->dtype);
  } else {
    NoGradGuard no_grad;
    auto flat = reshape(x, {x->numel()});
    out = reshape(median(flat, 0, false, ignore_nan).first, {});
  }
  record_even_split(ignore_nan ? SplitKind::Nanmedian : SplitKind::Median, x, x, out);
  return out;
}

std::pair<TensorImplPtr, TensorImplPtr> mode(const TensorImplPtr& x, int64_t dim, bool keepdim) {
  no_bool(x, "mode");
  const int64_t d = select_dim(x, dim, "mode");
  auto [v, i] = per_row(x, d, keepdim, "mode", [&]<class T, class A>(const T* p, T* vo, int64_t* io, int64_t r,
                                                                      int64_t len) {
    kernels::mode_rows<T, A>(p, vo, io, r, len);
  });
  record_select(SelectKind::Mode, x, v, i, d, keepdim);
  return {v, i};
}

}  // namespace lucid
