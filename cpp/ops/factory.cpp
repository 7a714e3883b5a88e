#include "ops/factory.h"

#include <cmath>
#include <mutex>
#include <random>

#include "ops/binary.h"
#include "ops/op_utils.h"

namespace lucid {

static const OpSchema& kFactorySchema = register_schema(
    {.name = "factory", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

TensorImplPtr full(const Shape& shape, double value, DType dtype) {
  (void)kFactorySchema;
  auto t = empty(shape, dtype);
  LUCID_DISPATCH(dtype, "full", [&] {
    scalar_t v = kernels::convert<scalar_t>(value);
    scalar_t* p = t->data<scalar_t>();
    for (int64_t i = 0, n = t->numel(); i < n; ++i) p[i] = v;
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

TensorImplPtr linspace(double start, double end, int64_t steps, DType dtype) {
  LUCID_CHECK_SHAPE(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  auto t = empty({steps}, dtype);
  double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  LUCID_DISPATCH(dtype, "linspace", [&] {
    scalar_t* p = t->data<scalar_t>();
    // Symmetric fill (from both ends) so the last value is exactly `end`.
    for (int64_t i = 0; i < steps; ++i)
      p[i] = kernels::convert<scalar_t>(i < steps / 2 ? start + step * double(i)
                                                      : end - step * double(steps - 1 - i));
  });
  return t;
}

// ---- random -----------------------------------------------------------------------------

namespace {
struct Generator {
  std::mutex mu;
  std::mt19937_64 eng{0x5eed};
  uint64_t seed = 0x5eed;
};
Generator& gen() {
  static Generator g;
  return g;
}

template <class Draw>
TensorImplPtr fill_random(const TensorImplPtr& t, const char* op, Draw draw) {
  check_inplace(t, op);
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  auto c = t->is_contiguous() ? t : empty(t->shape, t->dtype);
  LUCID_DISPATCH(t->dtype, op, [&] {
    scalar_t* p = c->data<scalar_t>();
    for (int64_t i = 0, n = c->numel(); i < n; ++i) p[i] = kernels::convert<scalar_t>(draw(g.eng));
  });
  if (c != t) copy_into(t, c);
  t->bump_version();
  return t;
}
}  // namespace

void manual_seed(uint64_t seed) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  g.eng.seed(seed);
  g.seed = seed;
}
uint64_t initial_seed() { return gen().seed; }

double uniform01() {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  return double(g.eng() >> 11) * 0x1.0p-53;
}

void bernoulli_fill(bool* mask, int64_t n, double keep) {
  auto& g = gen();
  std::lock_guard<std::mutex> lock(g.mu);
  for (int64_t i = 0; i < n; ++i) mask[i] = double(g.eng() >> 11) * 0x1.0p-53 < keep;
}

TensorImplPtr uniform_(const TensorImplPtr& t, double low, double high) {
  LUCID_CHECK(low <= high, "uniform_: expects low <= high, got low ", low, ", high ", high);
  return fill_random(t, "uniform_", [=](std::mt19937_64& e) {
    return low + (high - low) * (double(e() >> 11) * 0x1.0p-53);
  });
}

TensorImplPtr normal_(const TensorImplPtr& t, double mean, double std) {
  LUCID_CHECK(std >= 0, "normal_: expects std >= 0, got ", std);
  LUCID_CHECK_DTYPE(is_floating(t->dtype), "normal_: expected a floating tensor, got ", dtype_name(t->dtype));
  return fill_random(t, "normal_", [=](std::mt19937_64& e) {
    // Box-Muller on two 53-bit uniforms; u1 in (0, 1] so log never sees 0.
    double u1 = (double(e() >> 11) + 1.0) * 0x1.0p-53, u2 = double(e() >> 11) * 0x1.0p-53;
    return mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  });
}

TensorImplPtr randint_(const TensorImplPtr& t, int64_t low, int64_t high) {
  LUCID_CHECK(low < high, "randint: expects low < high, got low ", low, ", high ", high);
  uint64_t span = uint64_t(high - low);
  return fill_random(t, "randint", [=](std::mt19937_64& e) {
    return double(low + int64_t(e() % span));
  });
}

TensorImplPtr fill_(const TensorImplPtr& t, double value) {
  check_inplace(t, "fill_");
  copy_into(t, scalar_tensor(value, t->dtype));
  t->bump_version();
  return t;
}

}  // namespace lucid
