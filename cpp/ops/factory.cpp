#include "ops/factory.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "ops/binary.h"
#include "ops/op_utils.h"

namespace lucid {

static const OpSchema& kFactorySchema = register_schema(
    {.name = "factory", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

namespace {
template <class T>
void fill_dense(T* p, int64_t n, T v) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}
}  // namespace

TensorImplPtr full(const Shape& shape, double value, DType dtype) {
  (void)kFactorySchema;
  auto t = empty(shape, dtype);
  if (value == 0 && !std::signbit(value)) {  // +0 is all-zero bits in every dtype: zeros() and gradient buffers
    std::memset(t->raw(), 0, size_t(t->numel()) * itemsize(dtype));
    return t;
  }
  LUCID_DISPATCH(dtype, "full", [&] {
    const scalar_t v = kernels::convert<scalar_t>(value);
    fill_dense(t->data<scalar_t>(), t->numel(), v);
  });
  return t;
}

TensorImplPtr arange(double start, double end, double step, DType dtype) {
  LUCID_CHECK(step != 0 && std::isfinite(step), "arange: step must be finite and nonzero, got ", step);
  LUCID_CHECK(std::isfinite(start) && std::isfinite(end), "arange: start and end must be finite");
  LUCID_CHECK((end - start) / step >= 0, "arange: upper bound and step sign are inconsistent (start ",
              start, ", end ", end, ", step ", step, ")");
  int64_t n = int64_t(std::ceil((end - start) / step));
  auto t = empty({n}, dtype);
  LUCID_DISPATCH(dtype, "arange", [&] {
    scalar_t* p = t->data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = kernels::convert<scalar_t>(start + double(i) * step);
  });
  return t;
}

namespace {
// PyTorch's CPU linspace, value for value: the step and the points are computed in the output's
// own precision (float for float32 and the half types, double otherwise) with a fused
// multiply-add, from the start for the first half and from the end for the second, so the last
// value is exactly `end` (torch.linspace(-1, 1, 7)[3] is -2.98e-08 there too, not 0).
template <class A, class S>
void linspace_fill(S* p, double start_d, double end_d, int64_t steps) {
  const A start = A(start_d), end = A(end_d);
  const A step = steps > 1 ? (end - start) / A(steps - 1) : A(0);
  const int64_t halfway = steps / 2;
  if (steps == 1) {  // one point: start (PyTorch's), not end
    p[0] = kernels::convert<S>(start);
    return;
  }
  for (int64_t i = 0; i < steps; ++i)
    p[i] = kernels::convert<S>(i < halfway ? std::fma(step, A(i), start) : std::fma(-step, A(steps - 1 - i), end));
}
}  // namespace

TensorImplPtr linspace(double start, double end, int64_t steps, DType dtype) {
  LUCID_CHECK_SHAPE(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  auto t = empty({steps}, dtype);
  LUCID_DISPATCH(dtype, "linspace", [&] {
    using A = std::conditional_t<sizeof(scalar_t) <= 4 && !std::is_same_v<scalar_t, bool>, float, double>;
    linspace_fill<A>(t->data<scalar_t>(), start, end, steps);
  });
  return t;
}

TensorImplPtr fill_(const TensorImplPtr& t, double value) {
  if (inplace_records(t, {}, "fill_")) return rebase_inplace(t, full(t->shape, value, t->dtype), "fill_");
  copy_into(t, scalar_tensor(value, t->dtype));
  t->bump_version();
  return t;
}

}  // namespace lucid
