#include "ops/scan.h"

#include "autograd/tensor_grad.h"
#include "core/autocast.h"
#include "kernels/cpu/scan.h"
#include "ops/binary.h"
#include "ops/grad_graph.h"
#include "ops/op_utils.h"
#include "ops/reduce.h"
#include "ops/view.h"

namespace lucid {

namespace {

// (outer, n, inner) of x around dim (0-d: one element).
struct Axis {
  int64_t outer = 1, n = 1, inner = 1;
};
Axis axis_of(const Shape& s, int64_t d) {
  Axis a;
  if (s.empty()) return a;
  a.n = s[d];
  for (int64_t i = 0; i < d; ++i) a.outer *= s[i];
  for (size_t i = size_t(d) + 1; i < s.size(); ++i) a.inner *= s[i];
  return a;
}

template <bool Prod, bool Reverse>
TensorImplPtr scan_raw(const TensorImplPtr& x, int64_t dim, const char* name) {
  auto c = contiguous_raw(x);
  auto out = empty(c->shape, c->dtype);
  const Axis a = axis_of(c->shape, dim);
  if (c->numel() == 0) return out;
  LUCID_DISPATCH(c->dtype, name, [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, bool>) {
      throw DtypeMismatch(str(name, ": bool is converted to int64 before scanning"));
    } else {
      using Acc = std::conditional_t<std::is_same_v<T, float>, double, acc_t<T>>;
      kernels::scan<T, Acc, Prod, Reverse>(c->data<T>(), out->data<T>(), a.outer, a.n, a.inner);
    }
  });
  return out;
}

DType result_dtype(const TensorImplPtr& x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(x->dtype) ? x->dtype : DType::Int64;
}

int64_t scan_dim(const TensorImplPtr& x, int64_t dim, const char* name) {
  return wrap_dim(dim, std::max<int64_t>(x->ndim(), 1), name) * (x->ndim() > 0);
}

struct CumsumBackward : FuncOp<CumsumBackward, 1> {
  static const OpSchema& schema_v1;
  int64_t dim_ = 0;
  DType in_dtype_ = DType::Float32;
  const char* name() const override { return "CumsumBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    return {cast_raw(scan_raw<false, true>(g, dim_, "cumsum_backward"), in_dtype_)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const int64_t d = dim_;
    const DType in = in_dtype_, gd = g->dtype;
    return {linear_map(
        "CumsumBackwardBackward", g,
        [d, in](const TensorImplPtr& t) { return cast_raw(scan_raw<false, true>(t, d, "cumsum_backward"), in); },
        [d, gd](const TensorImplPtr& u) { return scan_raw<false, false>(cast_raw(u, gd), d, "cumsum_backward"); })};
  }
};
const OpSchema& CumsumBackward::schema_v1 = register_schema(
    {.name = "cumsum", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

struct CumprodBackward : FuncOp<CumprodBackward, 2> {
  static const OpSchema& schema_v1;
  int64_t dim_ = 0;
  DType in_dtype_ = DType::Float32;
  const char* name() const override { return "CumprodBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g0) {
    auto x = contiguous_raw(cast_raw(saved_[0], saved_[1]->dtype)), y = contiguous_raw(saved_[1]);
    auto g = contiguous_raw(cast_raw(g0, x->dtype));
    auto out = empty(x->shape, x->dtype);
    const Axis a = axis_of(x->shape, dim_);
    if (x->numel() > 0) {
      LUCID_DISPATCH_FLOAT(x->dtype, "cumprod_backward", [&] {
        using T = scalar_t;
        using Acc = std::conditional_t<std::is_same_v<T, float>, double, acc_t<T>>;
        kernels::cumprod_grad<T, Acc>(x->data<T>(), y->data<T>(), g->data<T>(), out->data<T>(), a.outer, a.n, a.inner);
      });
    }
    return {cast_raw(out, in_dtype_)};
  }
  // Recorded: with x moved to (..., n), dx_i = sum_j g_j M_ij with M_ij = prod_{m <= j, m != i} x_m
  // for j >= i (else 0): M is the cumulative product over m of x with its i-th entry replaced by
  // 1, masked to the upper triangle. O(n^2) per column, used only under create_graph=True.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const TensorImplPtr& x0 = saved_[0];  // the input itself, carrying its graph
    if (x0->ndim() == 0) return {to(g, in_dtype_, false)};  // d(x)/dx = 1
    const DType dt = saved_[1]->dtype;
    const int64_t n = x0->shape[dim_];
    auto x = movedim(to(x0, dt, false), {dim_}, {-1});  // (..., n)
    auto gm = movedim(to(g, dt, false), {dim_}, {-1});
    TensorImplPtr eye, upper;
    {
      NoGradGuard no_grad;
      eye = empty({n, n}, dt);
      upper = empty({n, n}, dt);
      LUCID_DISPATCH_FLOAT(dt, "cumprod_backward", [&] {
        using T = scalar_t;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            eye->data<T>()[i * n + j] = T(i == j ? 1.0f : 0.0f);
            upper->data<T>()[i * n + j] = T(j >= i ? 1.0f : 0.0f);
          }
      });
    }
    auto one_minus_eye = sub(constant(1.0, dt), eye);
    auto rep = add(mul(unsqueeze(x, -2), one_minus_eye), eye);  // (..., i, m)
    auto m = mul(cumprod(rep, -1), upper);                         // (..., i, j)
    auto dx = sum(mul(m, unsqueeze(gm, -2)), {-1}, false);         // (..., i)
    return {to(movedim(dx, {-1}, {dim_}), in_dtype_, false)};
  }
};
const OpSchema& CumprodBackward::schema_v1 = register_schema(
    {.name = "cumprod", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

}  // namespace

TensorImplPtr cumsum(const TensorImplPtr& x, int64_t dim, std::optional<DType> dtype) {
  const int64_t d = scan_dim(x, dim, "cumsum");
  auto xc = cast_raw(x, result_dtype(x, dtype));
  auto out = scan_raw<false, false>(xc, d, "cumsum");
  if (is_floating(out->dtype) && any_requires_grad({&x})) {
    auto n = std::make_shared<CumsumBackward>();
    n->dim_ = d;
    n->in_dtype_ = x->dtype;
    n->set_inputs({x});
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr cumprod(const TensorImplPtr& x, int64_t dim, std::optional<DType> dtype) {
  const int64_t d = scan_dim(x, dim, "cumprod");
  auto xc = cast_raw(x, result_dtype(x, dtype));
  auto out = scan_raw<true, false>(xc, d, "cumprod");
  if (is_floating(out->dtype) && any_requires_grad({&x})) {
    auto n = std::make_shared<CumprodBackward>();
    n->dim_ = d;
    n->in_dtype_ = x->dtype;
    n->set_inputs({x});
    n->save(0, x);
    n->save_output(1, out);
    attach_node(out, std::move(n));
  }
  return out;
}

}  // namespace lucid
