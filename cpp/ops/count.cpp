#include "ops/count.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/sort.h"
#include "ops/factory.h"
#include "ops/op_utils.h"
#include "ops/view.h"

namespace lucid {

namespace {

const OpSchema& kUniqueSchema = register_schema(
    {.name = "unique", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});
const OpSchema& kBincountSchema = register_schema(
    {.name = "bincount", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});
const OpSchema& kHistcSchema = register_schema(
    {.name = "histc", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});
const OpSchema& kSearchsortedSchema = register_schema(
    {.name = "searchsorted", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

}  // namespace

std::tuple<TensorImplPtr, TensorImplPtr, TensorImplPtr> unique(const TensorImplPtr& x) {
  (void)kUniqueSchema;
  auto c = contiguous_raw(x);
  const int64_t n = c->numel();
  auto inverse = empty(x->shape, DType::Int64);
  TensorImplPtr values, counts;
  LUCID_DISPATCH(x->dtype, "unique", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    std::vector<std::pair<A, int64_t>> buf(static_cast<size_t>(n));
    const T* xp = c->data<T>();
    for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = {A(xp[i]), i};
    std::stable_sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) { return kernels::nan_less(a.first, b.first); });
    std::vector<int64_t> first, cnt;  // positions in buf where a new value starts
    int64_t* inv = inverse->data<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      // NOTE: NaN != NaN, so every NaN starts a new value (PyTorch's behaviour).
      if (i == 0 || buf[size_t(i)].first != buf[size_t(i - 1)].first) {
        first.push_back(i);
        cnt.push_back(0);
      }
      ++cnt.back();
      inv[buf[size_t(i)].second] = int64_t(first.size()) - 1;
    }
    const int64_t u = int64_t(first.size());
    values = empty({u}, x->dtype);
    counts = empty({u}, DType::Int64);
    for (int64_t j = 0; j < u; ++j) {
      values->data<T>()[j] = xp[buf[size_t(first[size_t(j)])].second];
      counts->data<int64_t>()[j] = cnt[size_t(j)];
    }
  });
  return {values, inverse, counts};
}

TensorImplPtr bincount(const TensorImplPtr& x, const TensorImplPtr& weights, int64_t minlength) {
  (void)kBincountSchema;
  LUCID_CHECK_DTYPE(x->dtype == DType::Int64 || x->dtype == DType::Bool,
                    "bincount: only supports 1-d non-negative integral inputs, got dtype ", dtype_name(x->dtype));
  LUCID_CHECK_SHAPE(x->ndim() == 1, "bincount: only supports 1-d non-negative integral inputs, got shape ",
                    shape_str(x->shape));
  LUCID_CHECK(minlength >= 0, "bincount: minlength should be >= 0, got ", minlength);
  auto xi = contiguous_raw(cast_raw(x, DType::Int64));
  const int64_t n = xi->numel();
  const int64_t* xp = xi->data<int64_t>();
  int64_t mx = -1;
  for (int64_t i = 0; i < n; ++i) {
    LUCID_CHECK(xp[i] >= 0, "bincount: only supports 1-d non-negative integral inputs, got the value ", xp[i]);
    mx = std::max(mx, xp[i]);
  }
  LUCID_CHECK(mx < (int64_t(1) << 40), "bincount: the largest value ", mx, " would need too large an output");
  const int64_t len = std::max(mx + 1, minlength);
  if (!weights) {
    auto out = full({len}, 0.0, DType::Int64);
    int64_t* o = out->data<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++o[xp[i]];
    return out;
  }
  LUCID_CHECK_SHAPE(weights->shape == x->shape, "bincount: weights of shape ", shape_str(weights->shape),
                    " must have the input's shape ", shape_str(x->shape));
  // PyTorch: float32 weights sum in float32, any other dtype in float64.
  const DType dt = weights->dtype == DType::Float32 ? DType::Float32 : DType::Float64;
  auto w = contiguous_raw(cast_raw(weights, DType::Float64));
  std::vector<double> acc(size_t(len), 0.0);
  for (int64_t i = 0; i < n; ++i) acc[size_t(xp[i])] += w->data<double>()[i];
  auto out = empty({len}, DType::Float64);
  std::copy(acc.begin(), acc.end(), out->data<double>());
  return cast_raw(out, dt);
}

TensorImplPtr histc(const TensorImplPtr& x, int64_t bins, double min, double max) {
  (void)kHistcSchema;
  LUCID_CHECK_DTYPE(is_floating(x->dtype), "histc: expected a floating input, got ", dtype_name(x->dtype));
  LUCID_CHECK(bins > 0, "histc: bins must be > 0, got ", bins);
  LUCID_CHECK(bins <= (int64_t(1) << 40), "histc: bins ", bins, " is too large");
  LUCID_CHECK(std::isfinite(min) && std::isfinite(max), "histc: range of [", min, ", ", max, "] is not finite");
  LUCID_CHECK(min <= max, "histc: max must be larger than min, got min ", min, " and max ", max);
  auto c = contiguous_raw(x);
  const int64_t n = c->numel();
  auto out = full({bins}, 0.0, x->dtype);
  LUCID_DISPATCH_FLOAT(x->dtype, "histc", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* xp = c->data<T>();
    A lo = A(min), hi = A(max);
    if (lo == hi && n > 0) {  // the data's range, NaNs skipped
      bool any = false;
      for (int64_t i = 0; i < n; ++i) {
        const A v = A(xp[i]);
        if (v != v) continue;
        lo = any ? std::min(lo, v) : v, hi = any ? std::max(hi, v) : v, any = true;
      }
      LUCID_CHECK(std::isfinite(double(lo)) && std::isfinite(double(hi)), "histc: range of [", double(lo), ", ",
                  double(hi), "] is not finite");
    }
    if (lo == hi) lo -= A(1), hi += A(1);
    std::vector<double> acc(size_t(bins), 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const A v = A(xp[i]);
      if (!(v >= lo && v <= hi)) continue;  // outside, or NaN
      int64_t b = int64_t((v - lo) * A(bins) / (hi - lo));
      if (b >= bins) b = bins - 1;  // v == hi
      acc[size_t(b)] += 1.0;
    }
    for (int64_t b = 0; b < bins; ++b) out->data<T>()[b] = T(A(acc[size_t(b)]));
  });
  return out;
}

TensorImplPtr searchsorted(const TensorImplPtr& sorted, const TensorImplPtr& values, bool right) {
  (void)kSearchsortedSchema;
  LUCID_CHECK_SHAPE(sorted->ndim() >= 1, "searchsorted: sorted_sequence must have at least 1 dim, got shape ",
                    shape_str(sorted->shape));
  const bool flat_seq = sorted->ndim() == 1;
  if (!flat_seq) {
    bool ok = values->ndim() == sorted->ndim();
    for (int64_t d = 0; ok && d + 1 < sorted->ndim(); ++d) ok = values->shape[size_t(d)] == sorted->shape[size_t(d)];
    LUCID_CHECK_SHAPE(ok, "searchsorted: the leading dims of sorted_sequence ", shape_str(sorted->shape),
                      " and input ", shape_str(values->shape), " must match (all but the last)");
  }
  LUCID_CHECK_DTYPE(sorted->dtype != DType::Bool && values->dtype != DType::Bool,
                    "searchsorted: bool tensors are not supported");
  const DType dt = promote_types(sorted->dtype, values->dtype);
  auto s = contiguous_raw(cast_raw(sorted, dt)), v = contiguous_raw(cast_raw(values, dt));
  auto out = empty(values->shape, DType::Int64);
  const int64_t m = sorted->shape.back();
  const int64_t inner = values->ndim() && !flat_seq ? values->shape.back() : std::max<int64_t>(v->numel(), 1);
  const int64_t nv = v->numel();
  LUCID_DISPATCH(dt, "searchsorted", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* sp = s->data<T>();
    const T* vp = v->data<T>();
    int64_t* o = out->data<int64_t>();
    for (int64_t i = 0; i < nv; ++i) {
      const T* row = flat_seq ? sp : sp + (i / inner) * m;
      const A val = A(vp[i]);
      int64_t lo = 0, hi = m;
      // PyTorch's bounds: left moves past seq[mid] unless seq[mid] >= val, right unless seq[mid] > val
      // (so a NaN value lands after every number).
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const A sv = A(row[mid]);
        if (right ? !(sv > val) : !(sv >= val)) lo = mid + 1;
        else hi = mid;
      }
      o[i] = lo;
    }
  });
  return out;
}

}  // namespace lucid
