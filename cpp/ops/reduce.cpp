#include "ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "autograd/tensor_grad.h"
#include "core/autocast.h"
#include "core/threads.h"
#include "kernels/cpu/reduce_rows.h"
#include "kernels/cpu/reducers.h"
#include "ops/binary.h"
#include "ops/grad_graph.h"
#include "ops/join.h"
#include "ops/op_utils.h"
#include "ops/reduce_plan.h"
#include "ops/select_k.h"
#include "ops/unary.h"
#include "ops/view.h"

namespace lucid {

using kernels::ArgR;
using kernels::ExtR;
using kernels::LseR;
using kernels::NormKind;
using kernels::NormR;
using kernels::ProdR;
using kernels::SumAcc;
using kernels::SumR;
using kernels::VarR;
using namespace reduce_detail;

namespace {

DType float_compute(const OpSchema& s, const TensorImplPtr& x, const char* op) {
  LUCID_CHECK_DTYPE(is_floating(x->dtype), op, ": expected a floating input, got ", dtype_name(x->dtype),
                    " (convert with .float() first)");
  return compute_dtype(s, x->dtype);
}

// What every reduction node keeps to send the gradient back: the input's shape, dtype and mask.
struct ReduceMeta {
  Shape in_shape;
  DType in_dtype;
  std::vector<bool> mask;
  void set(const TensorImplPtr& x, const std::vector<bool>& m) { in_shape = x->shape, in_dtype = x->dtype, mask = m; }
  // The incoming gradient in the compute dtype, viewed with keepdim (broadcasts over x).
  TensorImplPtr keep(const TensorImplPtr& g, DType dt) const { return as_keepdim(cast_raw(g, dt), in_shape, mask); }
  // create_graph: a reduced tensor (g or the output) with keepdim, broadcast to x's shape, recorded.
  TensorImplPtr back_graph(const TensorImplPtr& t, DType dt) const {
    return expand(reshape(to(t, dt, false), keep_shape(in_shape, mask)), in_shape);
  }
  std::vector<int64_t> dims() const {
    std::vector<int64_t> d;
    for (size_t i = 0; i < mask.size(); ++i)
      if (mask[i]) d.push_back(int64_t(i));
    return d;
  }
};

// Runs body(xk, out): a reduction kernel over xk into `out`, a fresh tensor of `shape` and dtype
// `od`. float16 and bfloat16 inputs are widened to float32 (exactly) and the result rounded back
// to `od`, so no reduction kernel is compiled for the half types.
template <class F>
TensorImplPtr reduce_via32(const TensorImplPtr& x, const Shape& shape, DType od, F&& body) {
  const bool h = is_half(x->dtype);
  auto xk = h ? cast_raw(x, DType::Float32) : x;
  auto out = empty(shape, h ? DType::Float32 : od);
  body(xk, out);
  return h ? cast_raw(out, od) : out;
}

TensorImplPtr sum_raw(const TensorImplPtr& x, const std::vector<bool>& m, bool keepdim) {
  DType od = is_floating(x->dtype) ? x->dtype : DType::Int64;
  return reduce_via32(x, out_shape_of(x, m, keepdim), od, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan p = make_plan(xk, m, /*need_dense=*/false, /*allow_split=*/true);
    LUCID_DISPATCH_NO_HALF(xk->dtype, "sum", [&] {
      using T = scalar_t;
      using O = std::conditional_t<std::is_floating_point_v<acc_t<T>>, T, int64_t>;
      run_sum<T>(p, out->template data<O>(), 1.0);
    });
  });
}

// The gradient of a reduction, viewed in the input's shape (stride 0 along reduced dims).
TensorImplPtr expand_back(const TensorImplPtr& g, const Shape& in_shape, const std::vector<bool>& m) {
  auto k = as_keepdim(g, in_shape, m);
  return make_view(k, in_shape, broadcast_strides(k->shape, k->strides, in_shape), k->offset);
}

struct SumBackward : FuncOp<SumBackward, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape;
  DType in_dtype;
  std::vector<bool> mask;
  const char* name() const override { return "SumBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    return {cast_raw(expand_back(g, in_shape, mask), in_dtype)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    return {to(expand(reshape(g, keep_shape(in_shape, mask)), in_shape), in_dtype, false)};
  }
};
const OpSchema& SumBackward::schema_v1 = register_schema(
    {.name = "sum", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

TensorImplPtr sum_impl(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim, DType dt) {
  auto m = reduced_mask(x, dims, "sum");
  auto out = sum_raw(cast_raw(x, dt), m, keepdim);
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<SumBackward>();
    n->in_shape = x->shape;
    n->in_dtype = x->dtype;
    n->mask = m;
    n->set_inputs({x});
    attach_node(out, std::move(n));
  }
  return out;
}

}  // namespace

TensorImplPtr sum(const TensorImplPtr& x, std::vector<int64_t> dims, bool keepdim) {
  return sum_impl(x, dims, keepdim, compute_dtype(SumBackward::schema_v1, x->dtype));
}

TensorImplPtr sum(const TensorImplPtr& x, std::vector<int64_t> dims, bool keepdim, DType dtype) {
  return sum_impl(x, dims, keepdim, dtype);
}

TensorImplPtr sum_to(const TensorImplPtr& g, const Shape& shape) {
  if (g->shape == shape) return g;
  // Leading dims g has beyond `shape` are summed away; dims where shape has 1 are summed
  // with keepdim.
  size_t lead = g->shape.size() - shape.size();
  std::vector<bool> m(g->shape.size(), false);
  for (size_t i = 0; i < g->shape.size(); ++i)
    m[i] = i < lead || (shape[i - lead] == 1 && g->shape[i] != 1);
  auto r = sum_raw(g, m, /*keepdim=*/true);
  return make_view(r, shape, contiguous_strides(shape), 0);
}

// ---- mean, var, std -----------------------------------------------------------------------

namespace {

struct MeanBackward : FuncOp<MeanBackward, 1>, ReduceMeta {
  static const OpSchema& schema_v1;
  int64_t count = 1;
  const char* name() const override { return "MeanBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    auto gk = keep(g, g->dtype);
    auto c = scalar_tensor(double(count), gk->dtype);
    return {cast_raw(fmap2(in_shape, gk, c, []<class A>() { return [](A x, A n) { return x / n; }; }), in_dtype)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    return {to(div(back_graph(g, g->dtype), scalar_tensor(double(count), g->dtype)), in_dtype, false)};
  }
};
const OpSchema& MeanBackward::schema_v1 = register_schema(
    {.name = "mean", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

// The mean over the masked dims of a floating tensor, with keepdim (no autograd).
TensorImplPtr mean_raw(const TensorImplPtr& x, const std::vector<bool>& m) {
  return reduce_via32(x, keep_shape(x->shape, m), x->dtype, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan p = make_plan(xk, m, false, /*allow_split=*/true);
    LUCID_DISPATCH_FLOAT_NO_HALF(xk->dtype, "mean", [&] {
      using T = scalar_t;
      run_sum<T>(p, out->template data<T>(), double(p.count));
    });
  });
}

// var (Sqrt = false) and std (Sqrt = true): d var / dx = 2 (x - mean) / div,
// d std / dx = (x - mean) / (div * std), taken as 0 where std == 0 (as PyTorch).
template <bool Sqrt>
struct VarBackward : FuncOp<VarBackward<Sqrt>, 2>, ReduceMeta {
  static const OpSchema& schema_v1;
  double div = 1;
  const char* name() const override { return Sqrt ? "StdBackward" : "VarBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const auto& x = this->saved_[0];
    auto gk = keep(g, x->dtype);
    auto d = scalar_tensor(div, x->dtype);
    TensorImplPtr h;
    if constexpr (Sqrt) {
      auto sk = as_keepdim(this->saved_[1], in_shape, mask);
      h = fmap3(gk->shape, gk, sk, d, []<class A>() { return [](A gv, A s, A dv) { return s == A(0) ? A(0) : gv / (dv * s); }; });
    } else {
      h = fmap2(gk->shape, gk, d, []<class A>() { return [](A gv, A dv) { return A(2) * gv / dv; }; });
    }
    auto mu = mean_raw(x, mask);
    return {cast_raw(fmap3(in_shape, x, mu, h, []<class A>() { return [](A v, A m, A hh) { return (v - m) * hh; }; }), in_dtype)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto& x = this->saved_[0];
    const DType dt = x->dtype;
    auto centred = sub(x, mean(x, this->dims(), /*keepdim=*/true));
    TensorImplPtr h;
    if constexpr (Sqrt) {
      auto sd = this->back_graph(this->saved_output(1), dt);
      TensorImplPtr zero_sd;
      {
        NoGradGuard no_grad;
        zero_sd = compare(sd, scalar_tensor(0.0, dt), CompareOp::Eq);
      }
      h = lucid::div(this->back_graph(g, dt), mul(scalar_tensor(div, dt), sd));
      h = where(zero_sd, scalar_tensor(0.0, dt), h);
    } else {
      h = mul(this->back_graph(g, dt), scalar_tensor(2.0 / div, dt));
    }
    return {to(mul(centred, h), in_dtype, false)};
  }
};
template <>
const OpSchema& VarBackward<false>::schema_v1 = register_schema(
    {.name = "var", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& VarBackward<true>::schema_v1 = register_schema(
    {.name = "std", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

template <bool Sqrt>
TensorImplPtr var_impl(const TensorImplPtr& x, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  const char* name = Sqrt ? "std" : "var";
  auto m = reduced_mask(x, dims, name);
  DType dt = float_compute(VarBackward<Sqrt>::schema_v1, x, name);
  auto xc = cast_raw(x, dt);
  double div = 0;
  auto out = reduce_via32(xc, out_shape_of(x, m, keepdim), dt, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan p = make_plan(xk, m, /*need_dense=*/true);
    div = std::max(0.0, double(p.count) - correction);
    LUCID_DISPATCH_FLOAT_NO_HALF(xk->dtype, name, [&] {
      using T = scalar_t;
      using A = typename VarR<T>::A;
      std::vector<A> mu(size_t(p.outer * p.inner));
      SumR<T, A> sr;
      sr.div = A(p.count);
      kernels::reduce_dense(sr, p.src->template data<T>(), mu.data(), p.outer, p.red, p.inner);
      VarR<T> vr{mu.data(), A(p.count), A(div), Sqrt};
      kernels::reduce_dense(vr, p.src->template data<T>(), out->template data<T>(), p.outer, p.red, p.inner);
    });
  });
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<VarBackward<Sqrt>>();
    n->set(x, m);
    n->div = div;
    n->next_edges = {gradient_edge(x)};
    n->save(0, xc);
    if (Sqrt) n->save_output(1, out);
    attach_node(out, std::move(n));
  }
  return out;
}

}  // namespace

TensorImplPtr mean(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim) {
  auto m = reduced_mask(x, dims, "mean");
  DType dt = float_compute(MeanBackward::schema_v1, x, "mean");
  auto xc = cast_raw(x, dt);
  int64_t count = 1;
  auto out = reduce_via32(xc, out_shape_of(x, m, keepdim), dt, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan p = make_plan(xk, m, false, /*allow_split=*/true);
    count = p.count;
    LUCID_DISPATCH_FLOAT_NO_HALF(xk->dtype, "mean", [&] {
      using T = scalar_t;
      run_sum<T>(p, out->template data<T>(), double(p.count));
    });
  });
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<MeanBackward>();
    n->set(x, m);
    n->count = count;
    n->set_inputs({x});
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr var(const TensorImplPtr& x, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  return var_impl<false>(x, dims, correction, keepdim);
}
TensorImplPtr std_dev(const TensorImplPtr& x, const std::vector<int64_t>& dims, double correction, bool keepdim) {
  return var_impl<true>(x, dims, correction, keepdim);
}

// ---- extrema ----------------------------------------------------------------------------

namespace {

enum ExtKind { kAmax, kAmin, kMax, kMin };
constexpr const char* kExtName[] = {"amax", "amin", "max", "min"};
constexpr bool ext_is_max(int k) { return k == kAmax || k == kMax; }

}  // namespace

// The nodes live in ops/select_k.h: amax/amin and max()/min() split the gradient evenly among the
// elements equal to the result (EvenSplitBackward); max(dim)/min(dim) send it to the index.
template <>
const OpSchema& EvenSplitBackward<SplitKind::Amax>::schema_v1 = register_schema(
    {.name = "amax", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& EvenSplitBackward<SplitKind::Amin>::schema_v1 = register_schema(
    {.name = "amin", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& EvenSplitBackward<SplitKind::Max>::schema_v1 = register_schema(
    {.name = "max", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& EvenSplitBackward<SplitKind::Min>::schema_v1 = register_schema(
    {.name = "min", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});
template <>
const OpSchema& SelectBackward<SelectKind::MaxDim>::schema_v1 = EvenSplitBackward<SplitKind::Max>::schema_v1;
template <>
const OpSchema& SelectBackward<SelectKind::MinDim>::schema_v1 = EvenSplitBackward<SplitKind::Min>::schema_v1;

namespace {

constexpr SplitKind kExtSplit[] = {SplitKind::Amax, SplitKind::Amin, SplitKind::Max, SplitKind::Min};
const OpSchema& ext_schema(int kind) {
  static const OpSchema* const s[] = {
      &EvenSplitBackward<SplitKind::Amax>::schema_v1, &EvenSplitBackward<SplitKind::Amin>::schema_v1,
      &EvenSplitBackward<SplitKind::Max>::schema_v1, &EvenSplitBackward<SplitKind::Min>::schema_v1};
  return *s[kind];
}

const OpSchema& kArgmaxSchema = register_schema(
    {.name = "argmax", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = false});
const OpSchema& kArgminSchema = register_schema(
    {.name = "argmin", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = false});

// An extremum has no identity: reducing a zero-size dim is an error (as PyTorch).
void check_nonempty(const TensorImplPtr& x, const std::vector<bool>& m, const char* op) {
  for (int64_t i = 0; i < x->ndim(); ++i)
    LUCID_CHECK_INDEX(!(m[i] && x->shape[i] == 0), op, ": cannot reduce over dim ", i, " of size 0 (input shape ",
                      shape_str(x->shape), "): the operation has no identity");
}

template <int Kind>
void record_ext(const TensorImplPtr& out, const TensorImplPtr& x, const TensorImplPtr& xc, const std::vector<bool>& m) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i]) dims.push_back(int64_t(i));
  record_even_split(kExtSplit[Kind], x, xc, out, dims);
}

template <int Kind>
TensorImplPtr ext_values(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim) {
  const char* name = kExtName[Kind];
  auto m = reduced_mask(x, dims, name);
  check_nonempty(x, m, name);
  auto xc = cast_raw(x, compute_dtype(ext_schema(Kind), x->dtype));
  auto out = reduce_via32(xc, out_shape_of(x, m, keepdim), xc->dtype, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan p = make_plan(xk, m, false, /*allow_split=*/true);
    LUCID_DISPATCH_NO_HALF(xk->dtype, name, [&] {
      using T = scalar_t;
      run_family<T>(p, out->template data<T>(),
                    []<class In, class Out>(bool) { return ExtR<In, ext_is_max(Kind), Out>{}; });
    });
  });
  record_ext<Kind>(out, x, xc, m);
  return out;
}

// Index (and optionally value) of the extremum over one dim, or over the flattened tensor.
template <bool IsMax>
TensorImplPtr arg_impl(const TensorImplPtr& xc, const std::vector<bool>& m, bool keepdim, const TensorImplPtr& vals) {
  if (is_half(xc->dtype)) {  // through float32 (exact), as reduce_via32
    auto vk = vals ? empty(vals->shape, DType::Float32) : nullptr;
    auto idx = arg_impl<IsMax>(cast_raw(xc, DType::Float32), m, keepdim, vk);
    if (vals) copy_into(vals, vk);
    return idx;
  }
  Plan p = make_plan(xc, m, /*need_dense=*/true);
  auto idx = empty(out_shape_of(xc, m, keepdim), DType::Int64);
  LUCID_DISPATCH_NO_HALF(xc->dtype, IsMax ? "argmax" : "argmin", [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, float>) {
      if (p.dense && p.inner == 1 && p.red > 0) {
        kernels::arg_rows_f32<IsMax>(p.src->template data<float>(), p.outer, p.red, idx->data<int64_t>(),
                            vals ? vals->template data<float>() : nullptr);
        return;
      }
    }
    ArgR<T, IsMax> r;
    r.vals = vals ? vals->template data<T>() : nullptr;
    kernels::reduce_dense(r, p.src->template data<T>(), idx->data<int64_t>(), p.outer, p.red, p.inner);
  });
  return idx;
}

template <int Kind>
std::pair<TensorImplPtr, TensorImplPtr> ext_dim(const TensorImplPtr& x, int64_t dim, bool keepdim) {
  const char* name = kExtName[Kind];
  auto m = reduced_mask(x, {dim}, name);
  check_nonempty(x, m, name);
  auto xc = cast_raw(x, compute_dtype(ext_schema(Kind), x->dtype));
  auto vals = empty(out_shape_of(x, m, keepdim), xc->dtype);
  auto idx = arg_impl<ext_is_max(Kind)>(xc, m, keepdim, vals);
  const int64_t d = x->ndim() ? wrap_dim(dim, x->ndim(), name) : 0;
  record_select(Kind == kMax ? SelectKind::MaxDim : SelectKind::MinDim, x, vals, idx, d, keepdim);
  return {vals, idx};
}

template <bool IsMax>
TensorImplPtr argext(const TensorImplPtr& x, std::optional<int64_t> dim, bool keepdim) {
  const char* name = IsMax ? "argmax" : "argmin";
  auto m = dim ? reduced_mask(x, {*dim}, name) : reduced_mask(x, {}, name);
  check_nonempty(x, m, name);
  return arg_impl<IsMax>(x, m, keepdim, nullptr);
}

}  // namespace

TensorImplPtr amax(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim) {
  return ext_values<kAmax>(x, dims, keepdim);
}
TensorImplPtr amin(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim) {
  return ext_values<kAmin>(x, dims, keepdim);
}
TensorImplPtr max(const TensorImplPtr& x) { return ext_values<kMax>(x, {}, false); }
TensorImplPtr min(const TensorImplPtr& x) { return ext_values<kMin>(x, {}, false); }
std::pair<TensorImplPtr, TensorImplPtr> max(const TensorImplPtr& x, int64_t dim, bool keepdim) {
  return ext_dim<kMax>(x, dim, keepdim);
}
std::pair<TensorImplPtr, TensorImplPtr> min(const TensorImplPtr& x, int64_t dim, bool keepdim) {
  return ext_dim<kMin>(x, dim, keepdim);
}
TensorImplPtr argmax(const TensorImplPtr& x, std::optional<int64_t> dim, bool keepdim) {
  (void)kArgmaxSchema;
  return argext<true>(x, dim, keepdim);
}
TensorImplPtr argmin(const TensorImplPtr& x, std::optional<int64_t> dim, bool keepdim) {
  (void)kArgminSchema;
  return argext<false>(x, dim, keepdim);
}

// ---- logsumexp, prod, norm ----------------------------------------------------------------

namespace {

// d/dx logsumexp = softmax = exp(x - out).
struct LogsumexpBackward : FuncOp<LogsumexpBackward, 2>, ReduceMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return "LogsumexpBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const auto& x = saved_[0];
    auto ok = as_keepdim(saved_[1], in_shape, mask);
    return {cast_raw(fmap3(in_shape, x, ok, keep(g, x->dtype),
                           []<class A>() { return [](A v, A o, A gv) { return gv * std::exp(v - o); }; }),
                     in_dtype)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto& x = saved_[0];
    auto sm = exp(sub(x, back_graph(saved_output(1), x->dtype)));
    return {to(mul(back_graph(g, x->dtype), sm), in_dtype, false)};
  }
};
const OpSchema& LogsumexpBackward::schema_v1 = register_schema(
    {.name = "logsumexp", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

// dx_i = g * prod_{j != i} x_j, from prefix and suffix products (exact with zeros).
struct ProdBackward : FuncOp<ProdBackward, 1>, ReduceMeta {
  static const OpSchema& schema_v1;
  const char* name() const override { return "ProdBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const auto& x = saved_[0];
    // Rows of the reduced elements: kept dims first, reduced last (the permuted copy).
    Shape sh, st, perm;
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t i = 0; i < x->ndim(); ++i)
        if (mask[i] == (pass == 1)) sh.push_back(x->shape[i]), st.push_back(x->strides[i]), perm.push_back(i);
    // float16/bfloat16 run the float32 kernel (rounded to x's dtype first, as the half kernel saw them)
    const DType kd = is_half(x->dtype) ? DType::Float32 : x->dtype;
    auto rows = cast_raw(contiguous_raw(make_view(x, sh, st, x->offset)), kd);
    auto gk = contiguous_raw(cast_raw(cast_raw(g, x->dtype), kd));  // kept dims in order: one value per row
    auto gr = empty(sh, kd);
    int64_t red = 1;
    for (int64_t i = 0; i < x->ndim(); ++i)
      if (mask[i]) red *= x->shape[i];
    int64_t outer = red ? x->numel() / red : 0;
    LUCID_DISPATCH_FLOAT_NO_HALF(kd, "prod_backward", [&] {
      using T = scalar_t;
      kernels::exclusive_prod_rows<T, typename SumAcc<T>::type>(rows->template data<T>(), gk->template data<T>(), gr->template data<T>(), outer, red);
    });
    Shape back(x->ndim());  // strides of gr seen in x's dim order
    for (size_t k = 0; k < perm.size(); ++k) back[perm[k]] = gr->strides[k];
    return {cast_raw(cast_raw(make_view(gr, x->shape, back, 0), x->dtype), in_dtype)};
  }
  // create_graph, on rows of the reduced elements (kept dims first, as above): g * prod / x
  // when no element is zero, else each exclusive product as the product of the row with its
  // own entry replaced by 1 (an (outer, red, red) intermediate, only when zeros are present).
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto& xs = saved_[0];
    const DType dt = xs->dtype;
    auto x = saved_input_graph(xs, next_edges[0], in_shape, in_dtype);
    std::vector<int64_t> perm;
    Shape pshape;
    int64_t red = 1, outer = 1;
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t i = 0; i < xs->ndim(); ++i)
        if (mask[i] == (pass == 1)) {
          perm.push_back(i), pshape.push_back(xs->shape[i]);
          (pass ? red : outer) *= xs->shape[i];
        }
    std::vector<int64_t> inv(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) inv[size_t(perm[k])] = int64_t(k);
    bool zeros;
    {
      NoGradGuard no_grad;
      auto z = sum(compare(xs, scalar_tensor(0.0, dt), CompareOp::Eq), {}, false);
      zeros = item_as_double(z, name()) > 0;
    }
    auto rows = reshape(permute(x, perm), {outer, red});
    TensorImplPtr excl;
    if (!zeros) {
      excl = div(prod(rows, 1, /*keepdim=*/true), rows);
    } else {
      auto eye = empty({red, red}, DType::Bool);
      bool* e = eye->data<bool>();
      for (int64_t i = 0; i < red * red; ++i) e[i] = i % (red + 1) == 0;
      auto m = where(eye, scalar_tensor(1.0, dt), expand(reshape(rows, {outer, 1, red}), {outer, red, red}));
      excl = prod(m, 2, /*keepdim=*/false);
    }
    auto gx = mul(reshape(to(g, dt, false), {outer, 1}), excl);
    return {to(permute(reshape(gx, pshape), inv), in_dtype, false)};
  }
};
const OpSchema& ProdBackward::schema_v1 = register_schema(
    {.name = "prod", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

struct NormBackward : FuncOp<NormBackward, 2>, ReduceMeta {
  static const OpSchema& schema_v1;
  NormKind kind;
  double p;
  const char* name() const override { return "NormBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    const auto& x = saved_[0];
    auto ok = as_keepdim(saved_[1], in_shape, mask);
    auto gk = keep(g, x->dtype);
    TensorImplPtr gx;
    switch (kind) {
      case NormKind::L0:
        gx = fmap2(in_shape, x, gk, []<class A>() { return [](A, A) { return A(0); }; });
        break;
      case NormKind::L1:
        gx = fmap2(in_shape, x, gk, []<class A>() { return [](A v, A gv) { return v > A(0) ? gv : v < A(0) ? -gv : A(0); }; });
        break;
      case NormKind::L2:
        gx = fmap3(in_shape, x, ok, gk, []<class A>() { return [](A v, A o, A gv) { return o == A(0) ? A(0) : gv * v / o; }; });
        break;
      case NormKind::Lp: {
        // d/dx (sum |x|^p)^(1/p) = x |x|^(p-2) / out^(p-1); 0 at x == 0 (p > 1 limit, p < 1 by choice).
        auto h = fmap2(gk->shape, gk, as_keepdim(saved_[1], in_shape, mask), [pp = p]<class A>() {
          return [pp](A gv, A o) { return o == A(0) ? A(0) : gv / A(std::pow(o, A(pp) - A(1))); };
        });
        gx = fmap2(in_shape, x, h, [pp = p]<class A>() {
          return [pp](A v, A hh) { return v == A(0) ? A(0) : hh * v * A(std::pow(std::abs(v), A(pp) - A(2))); };
        });
        break;
      }
      default: {  // +-inf: the amax rule on |x|, times sign(x)
        auto eq = fmap2(in_shape, x, ok, []<class A>() { return [](A v, A o) { return A(std::abs(v) == o); }; });
        auto cnt = sum_raw(eq, mask, /*keepdim=*/true);
        auto h = fmap2(gk->shape, gk, cnt, []<class A>() { return [](A gv, A c) { return gv / c; }; });
        auto sh = fmap2(in_shape, x, h, []<class A>() { return [](A v, A hh) { return v < A(0) ? -hh : hh; }; });
        gx = fmap2(in_shape, eq, sh, []<class A>() { return [](A e, A s) { return e * s; }; });
      }
    }
    return {cast_raw(gx, in_dtype)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const auto& x = saved_[0];
    const DType dt = x->dtype;
    auto zero = scalar_tensor(0.0, dt);
    auto gk = back_graph(g, dt);
    TensorImplPtr gx;
    if (kind == NormKind::L0) return {to(mul(gk, zero), in_dtype, false)};
    if (kind == NormKind::L1) {
      TensorImplPtr sg;
      {
        NoGradGuard no_grad;
        sg = sign(x);
      }
      return {to(mul(gk, sg), in_dtype, false)};
    }
    auto out = back_graph(saved_output(1), dt);
    TensorImplPtr out_zero, x_zero;
    {
      NoGradGuard no_grad;
      out_zero = compare(out, zero, CompareOp::Eq);
      x_zero = compare(x, zero, CompareOp::Eq);
    }
    if (kind == NormKind::L2) {
      gx = div(mul(gk, x), where(out_zero, scalar_tensor(1.0, dt), out));
      return {to(where(out_zero, zero, gx), in_dtype, false)};
    }
    if (kind == NormKind::Lp) {  // g x |x|^(p-2) / out^(p-1), 0 where x == 0 or out == 0
      auto safe_x = where(x_zero, scalar_tensor(1.0, dt), x);
      auto safe_out = where(out_zero, scalar_tensor(1.0, dt), out);
      gx = div(mul(gk, mul(safe_x, pow(abs(safe_x), scalar_tensor(p - 2, dt)))),
               pow(safe_out, scalar_tensor(p - 1, dt)));
      TensorImplPtr zero_any;
      {
        NoGradGuard no_grad;
        zero_any = compare(add(to(x_zero, dt, false), to(out_zero, dt, false)), zero, CompareOp::Gt);
      }
      return {to(where(zero_any, zero, gx), in_dtype, false)};
    }
    TensorImplPtr w;  // +-inf: constant weights sign(x) [|x| == out] / count
    {
      NoGradGuard no_grad;
      auto ok = as_keepdim(saved_[1], in_shape, mask);
      auto eq = fmap2(in_shape, x, ok, []<class A>() { return [](A v, A o) { return A(std::abs(v) == o); }; });
      auto cnt = sum_raw(eq, mask, /*keepdim=*/true);
      w = fmap3(in_shape, eq, cnt, x, []<class A>() {
        return [](A e, A c, A v) { return v < A(0) ? -e / c : e / c; };
      });
    }
    return {to(mul(gk, w), in_dtype, false)};
  }
};
const OpSchema& NormBackward::schema_v1 = register_schema(
    {.name = "norm", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

}  // namespace

TensorImplPtr logsumexp(const TensorImplPtr& x, const std::vector<int64_t>& dims, bool keepdim) {
  auto m = reduced_mask(x, dims, "logsumexp");
  // Integer inputs promote to the default float (as PyTorch).
  DType dt = compute_dtype(LogsumexpBackward::schema_v1, is_floating(x->dtype) ? x->dtype : kDefaultFloat);
  auto xc = cast_raw(x, dt);
  auto out = reduce_via32(xc, out_shape_of(x, m, keepdim), dt, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan p = make_plan(xk, m, /*need_dense=*/true);
    LUCID_DISPATCH_FLOAT_NO_HALF(xk->dtype, "logsumexp", [&] {
      using T = scalar_t;
      using M = acc_t<T>;
      std::vector<M> mx(size_t(p.outer * p.inner));
      kernels::reduce_dense(ExtR<T, true, M>{}, p.src->template data<T>(), mx.data(), p.outer, p.red, p.inner);
      kernels::reduce_dense(LseR<T>{mx.data()}, p.src->template data<T>(), out->template data<T>(), p.outer, p.red, p.inner);
    });
  });
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<LogsumexpBackward>();
    n->set(x, m);
    n->next_edges = {gradient_edge(x)};
    n->save(0, xc);
    n->save_output(1, out);
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr prod(const TensorImplPtr& x, std::optional<int64_t> dim, bool keepdim) {
  auto m = dim ? reduced_mask(x, {*dim}, "prod") : reduced_mask(x, {}, "prod");
  auto xc = cast_raw(x, compute_dtype(ProdBackward::schema_v1, x->dtype));
  DType od = is_floating(xc->dtype) ? xc->dtype : DType::Int64;
  auto out = reduce_via32(xc, out_shape_of(x, m, keepdim), od, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan p = make_plan(xk, m, false);
    LUCID_DISPATCH_NO_HALF(xk->dtype, "prod", [&] {
      using T = scalar_t;
      using R = ProdR<T>;
      run(p, R{}, out->data<typename R::Out>());
    });
  });
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<ProdBackward>();
    n->set(x, m);
    n->set_inputs({x});
    n->save(0, xc);
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr norm(const TensorImplPtr& x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  auto m = reduced_mask(x, dims, "norm");
  DType dt = float_compute(NormBackward::schema_v1, x, "norm");
  NormKind kind = p == 2 ? NormKind::L2 : p == 1 ? NormKind::L1 : p == 0 ? NormKind::L0
                : std::isinf(p) ? (p > 0 ? NormKind::LInf : NormKind::LNegInf) : NormKind::Lp;
  // A negative p is the generalised mean (sum |x|^p)^(1/p), as PyTorch's vector norm.
  LUCID_CHECK(!std::isnan(p), "norm: p must be a number, got nan");
  if (kind == NormKind::LInf || kind == NormKind::LNegInf) check_nonempty(x, m, "norm");
  auto xc = cast_raw(x, dt);
  auto out = reduce_via32(xc, out_shape_of(x, m, keepdim), dt, [&](const TensorImplPtr& xk, const TensorImplPtr& out) {
    Plan pl = make_plan(xk, m, false);
    LUCID_DISPATCH_FLOAT_NO_HALF(xk->dtype, "norm", [&] {
      using T = scalar_t;
      run(pl, NormR<T>{kind, typename NormR<T>::Acc(p)}, out->template data<T>());
    });
  });
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<NormBackward>();
    n->set(x, m);
    n->kind = kind;
    n->p = p;
    n->next_edges = {gradient_edge(x)};
    n->save(0, xc);
    n->save_output(1, out);
    attach_node(out, std::move(n));
  }
  return out;
}

}  // namespace lucid
