#include "ops/random.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/random.h"
#include "ops/binary.h"
#include "ops/op_utils.h"

namespace lucid {

static const OpSchema& kRandomSchema = register_schema(
    {.name = "random", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

namespace {

// Runs `fill(T* data, n, gen)` over t's elements in row-major order under the generator's lock
// (into a contiguous scratch buffer when t is strided), then bumps t's version.
template <class Fill>
TensorImplPtr fill_random(const TensorImplPtr& t, const char* op, Generator* g, bool floats_only, Fill fill) {
  (void)kRandomSchema;
  check_inplace(t, op);
  if (floats_only)
    LUCID_CHECK_DTYPE(is_floating(t->dtype), op, ": expected a floating tensor, got ", dtype_name(t->dtype));
  // A strided tensor is filled in memory order (dims by decreasing stride), the order in which
  // PyTorch's TensorIterator visits it, so a transposed tensor gets PyTorch's values too.
  TensorImplPtr dst = t;
  if (!t->is_contiguous()) {
    std::vector<size_t> order(t->shape.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t->strides[a] > t->strides[b]; });
    Shape ps, pst;
    for (size_t d : order) {
      ps.push_back(t->shape[d]);
      pst.push_back(t->strides[d]);
    }
    dst = make_view(t, ps, pst, t->offset);
  }
  auto c = dst->is_contiguous() ? dst : empty(dst->shape, t->dtype);
  Generator& gen = gen_or_default(g);
  {
    std::lock_guard<std::mutex> lock(gen.mu);
    LUCID_DISPATCH(t->dtype, op, [&] { fill(c->data<scalar_t>(), c->numel(), gen); });
  }
  if (c != dst) copy_into(dst, c);
  t->bump_version();
  return t;
}

// NOTE: PyTorch fills float16/bfloat16 tensors by drawing float32 values (the float sampler,
// vectorised normal included) and rounding them, so the half types go through a float buffer.
template <class T, class F>
void via_float(T* p, int64_t n, F&& fill) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    fill(p);
  } else {
    std::vector<float> tmp(static_cast<size_t>(n));
    fill(tmp.data());
    for (int64_t i = 0; i < n; ++i) p[i] = T(tmp[static_cast<size_t>(i)]);
  }
}

void check_finite(double v, const char* op, const char* what) {
  LUCID_CHECK_SHAPE(std::isfinite(v), op, ": ", what, " must be finite, got ", v);
}

}  // namespace

void manual_seed(uint64_t seed) {
  auto& g = *default_generator();
  std::lock_guard<std::mutex> lock(g.mu);
  g.manual_seed(seed);
}
uint64_t initial_seed() { return default_generator()->seed; }

double uniform01() {
  auto& g = *default_generator();
  std::lock_guard<std::mutex> lock(g.mu);
  return g.uniform_double();
}

void bernoulli_fill(bool* mask, int64_t n, double keep) {
  auto& g = *default_generator();
  std::lock_guard<std::mutex> lock(g.mu);
  kernels::bernoulli_fill(n, mask, g, keep);
}

TensorImplPtr uniform_(const TensorImplPtr& t, double low, double high, Generator* g) {
  check_finite(low, "uniform_", "from");
  check_finite(high, "uniform_", "to");
  LUCID_CHECK_SHAPE(low <= high, "uniform_: expects from <= to, got from ", low, ", to ", high);
  return fill_random(t, "uniform_", g, true, [&](auto* p, int64_t n, Generator& gen) {
    using T = std::remove_pointer_t<decltype(p)>;
    if constexpr (std::is_floating_point_v<acc_t<T>>) {
      via_float(p, n, [&](auto* f) { kernels::uniform_fill(n, f, gen, low, high); });
      if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, double>) {
        // A float draw that rounds up to `to` in the half type becomes `from`, as in PyTorch, so
        // the interval stays half-open (rand never gives 1).
        const T lo = T(low), hi = T(high);
        for (int64_t i = 0; i < n; ++i)
          if (float(p[i]) == float(hi)) p[i] = lo;
      }
    }
  });
}

TensorImplPtr normal_(const TensorImplPtr& t, double mean, double std, Generator* g) {
  check_finite(mean, "normal_", "mean");
  LUCID_CHECK_SHAPE(std >= 0 && std::isfinite(std), "normal_: expects std >= 0, got ", std);
  // PyTorch's choice of sampler: the blocked one for >= 16 contiguous elements, else per element.
  const bool blocked = t->numel() >= 16 && t->is_contiguous();
  return fill_random(t, "normal_", g, true, [&](auto* p, int64_t n, Generator& gen) {
    using T = std::remove_pointer_t<decltype(p)>;
    if constexpr (std::is_floating_point_v<acc_t<T>>) {
      via_float(p, n, [&](auto* f) {
        if (blocked) kernels::normal_fill16(n, f, gen, mean, std);
        else kernels::normal_serial(n, f, gen, mean, std);
      });
    }
  });
}

TensorImplPtr randint_(const TensorImplPtr& t, int64_t low, int64_t high, Generator* g) {
  LUCID_CHECK_SHAPE(low < high, "randint: expects low < high, got low ", low, ", high ", high);
  const uint64_t range = uint64_t(high) - uint64_t(low);
  return fill_random(t, "randint", g, false, [&](auto* p, int64_t n, Generator& gen) {
    kernels::randint_fill(n, p, gen, low, range);
  });
}

TensorImplPtr random_full_(const TensorImplPtr& t, Generator* g) {
  return fill_random(t, "random_", g, false, [&](auto* p, int64_t n, Generator& gen) {
    using T = std::remove_pointer_t<decltype(p)>;
    if constexpr (std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < n; ++i) p[i] = gen.random() & 1u;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      for (int64_t i = 0; i < n; ++i) p[i] = int64_t(gen.random64() % (uint64_t(1) << 63));
    } else {
      constexpr int d = kernels::uniform_digits<T>();
      const uint64_t m = (uint64_t(1) << d) + 1;
      for (int64_t i = 0; i < n; ++i)
        p[i] = kernels::convert<T>(double(d > 32 ? gen.random64() % m : uint64_t(gen.random()) % m));
    }
  });
}

TensorImplPtr bernoulli_(const TensorImplPtr& t, double p, Generator* g) {
  LUCID_CHECK_SHAPE(p >= 0 && p <= 1, "bernoulli_: expects 0 <= p <= 1, got ", p);
  return fill_random(t, "bernoulli_", g, false, [&](auto* d, int64_t n, Generator& gen) {
    kernels::bernoulli_fill(n, d, gen, p);
  });
}

TensorImplPtr exponential_(const TensorImplPtr& t, double lambda, Generator* g) {
  LUCID_CHECK_SHAPE(lambda > 0 && std::isfinite(lambda), "exponential_: expects lambd > 0, got ", lambda);
  return fill_random(t, "exponential_", g, true, [&](auto* d, int64_t n, Generator& gen) {
    kernels::exponential_fill(n, d, gen, lambda);
  });
}

TensorImplPtr log_normal_(const TensorImplPtr& t, double mean, double std, Generator* g) {
  check_finite(mean, "log_normal_", "mean");
  LUCID_CHECK(std > 0 && std::isfinite(std), "log_normal_ expects std > 0.0, but found std=", std);
  // PyTorch's CPU kernel: per element, exp of its double normal sampler (Box-Muller with the
  // cached second value), computed in double and rounded once to the tensor's dtype.
  return fill_random(t, "log_normal_", g, true, [&](auto* d, int64_t n, Generator& gen) {
    using T = std::remove_pointer_t<decltype(d)>;
    if constexpr (std::is_floating_point_v<acc_t<T>>) {
      for (int64_t i = 0; i < n; ++i) d[i] = kernels::convert<T>(std::exp(gen.normal() * std + mean));
    }
  });
}

TensorImplPtr bernoulli(const TensorImplPtr& p, Generator* g) {
  LUCID_CHECK_DTYPE(is_floating(p->dtype), "bernoulli: expected a floating tensor of probabilities, got ",
                    dtype_name(p->dtype));
  auto pc = contiguous_raw(cast_raw(p, DType::Float64));
  const double* pp = pc->data<double>();
  const int64_t n = pc->numel();
  for (int64_t i = 0; i < n; ++i)
    LUCID_CHECK_SHAPE(pp[i] >= 0 && pp[i] <= 1, "bernoulli: expected all probabilities in [0, 1], got ", pp[i]);
  auto out = empty(p->shape, p->dtype);
  Generator& gen = gen_or_default(g);
  std::lock_guard<std::mutex> lock(gen.mu);
  // PyTorch compares a 24-bit float uniform with p, one draw per element.
  LUCID_DISPATCH_FLOAT(p->dtype, "bernoulli", [&] {
    scalar_t* o = out->data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = scalar_t(gen.uniform(24) < float(pp[i]) ? 1.0f : 0.0f);
  });
  return out;
}

TensorImplPtr multinomial(const TensorImplPtr& probs, int64_t n, bool replacement, Generator* g) {
  LUCID_CHECK_DTYPE(is_floating(probs->dtype), "multinomial: expected a floating tensor of probabilities, got ",
                    dtype_name(probs->dtype));
  LUCID_CHECK_SHAPE(probs->ndim() == 1 || probs->ndim() == 2, "multinomial: prob_dist must be 1 or 2 dim, got shape ",
                    shape_str(probs->shape));
  const int64_t cats = probs->shape.back(), rows = probs->ndim() == 2 ? probs->shape[0] : 1;
  LUCID_CHECK_SHAPE(cats > 0, "multinomial: prob_dist must have at least one category, got shape ", shape_str(probs->shape));
  LUCID_CHECK_SHAPE(cats <= (int64_t(1) << 24), "multinomial: number of categories cannot exceed 2^24, got ", cats);
  LUCID_CHECK_SHAPE(n > 0, "multinomial: cannot sample n_sample <= 0 samples, got ", n);
  LUCID_CHECK_SHAPE(replacement || n <= cats, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
                    "without replacement, got n_sample ", n, " for ", cats, " categories");
  auto out = empty(probs->ndim() == 2 ? Shape{rows, n} : Shape{n}, DType::Int64);
  auto pc = contiguous_raw(probs);
  LUCID_DISPATCH_FLOAT(probs->dtype, "multinomial", [&] {
    using T = scalar_t;
    using A = acc_t<T>;
    const T* p = pc->data<T>();
    for (int64_t r = 0; r < rows; ++r) {  // validate everything before drawing anything
      A sum = 0;
      for (int64_t j = 0; j < cats; ++j) {
        A v = A(p[r * cats + j]);
        LUCID_CHECK_SHAPE(std::isfinite(double(v)) && v >= 0, "multinomial: invalid distribution: probabilities "
                          "must be finite and non-negative, got ", double(v), " in row ", r);
        sum += v;
      }
      LUCID_CHECK_SHAPE(sum > 0, "multinomial: invalid distribution: row ", r, " sums to 0");
    }
    int64_t* o = out->data<int64_t>();
    Generator& gen = gen_or_default(g);
    std::lock_guard<std::mutex> lock(gen.mu);
    if (!replacement || n == 1) {
      // PyTorch's sampler: q ~ Exp(1) for every element (row-major), then the top n of p / q per
      // row (the exponential race, i.e. Gumbel-top-k). q and the ratio are rounded to T as there.
      // A row's uniforms are drawn first, then turned into q in one vectorised pass.
      std::vector<double> q(static_cast<size_t>(cats));
      std::vector<A> ratio(n == 1 ? 0 : size_t(cats));
      std::vector<int64_t> idx(n == 1 ? 0 : size_t(cats));
      for (int64_t r = 0; r < rows; ++r) {
        const T* pr = p + r * cats;
        gen.uniform_doubles(q.data(), cats);
        kernels::neg_log1m_as<T>(q.data(), cats);
        auto key = [&](int64_t j) { return A(T(A(pr[j]) / A(T(q[size_t(j)])))); };
        if (n == 1) {
          A best = -1;
          int64_t arg = 0;
          for (int64_t j = 0; j < cats; ++j) {
            A v = key(j);
            if (v > best || std::isnan(double(v))) {
              if (std::isnan(double(best))) continue;
              best = v;
              arg = j;
            }
          }
          o[r] = arg;
          continue;
        }
        for (int64_t j = 0; j < cats; ++j) {
          ratio[size_t(j)] = key(j);
          idx[size_t(j)] = j;
        }
        auto before = [&](int64_t a, int64_t b) {
          return ratio[size_t(a)] > ratio[size_t(b)] || (ratio[size_t(a)] == ratio[size_t(b)] && a < b);
        };
        std::partial_sort(idx.begin(), idx.begin() + n, idx.end(), before);
        std::copy(idx.begin(), idx.begin() + n, o + r * n);
      }
    } else {
      // PyTorch's sampler with replacement: the normalised running sum in T, last bucket forced
      // to 1, and a binary search per 53-bit uniform.
      std::vector<T> cum(static_cast<size_t>(cats));
      for (int64_t r = 0; r < rows; ++r) {
        const T* pr = p + r * cats;
        T sum = T(0);
        for (int64_t j = 0; j < cats; ++j) cum[size_t(j)] = sum = T(A(sum) + A(pr[j]));
        for (int64_t j = 0; j < cats; ++j) cum[size_t(j)] = T(A(cum[size_t(j)]) / A(sum));
        cum[size_t(cats - 1)] = T(1);
        for (int64_t s = 0; s < n; ++s) {
          const double u = gen.uniform_double();
          int64_t lo = 0, hi = cats;
          while (hi - lo > 0) {
            int64_t mid = lo + (hi - lo) / 2;
            if (double(A(cum[size_t(mid)])) < u) lo = mid + 1;
            else hi = mid;
          }
          o[r * n + s] = lo;
        }
      }
    }
  });
  return out;
}

TensorImplPtr randperm(int64_t n, DType dtype, Generator* g) {
  LUCID_CHECK_SHAPE(n >= 0, "randperm: n must be non-negative, got ", n);
  LUCID_CHECK_DTYPE(dtype != DType::Bool, "randperm: dtype bool cannot hold a permutation");
  check_shape_size({n}, 8, "randperm");
  auto out = empty({n}, dtype);  // allocated first: an impossible n fails here, before any draw
  std::vector<int64_t> r(static_cast<size_t>(n));
  std::iota(r.begin(), r.end(), int64_t(0));
  Generator& gen = gen_or_default(g);
  {
    std::lock_guard<std::mutex> lock(gen.mu);
    if (n < int64_t(0xffffffffULL / 20)) {
      for (int64_t i = 0; i + 1 < n; ++i) std::swap(r[size_t(i)], r[size_t(i + int64_t(gen.random() % uint64_t(n - i)))]);
    } else {  // PyTorch's inside-out Fisher-Yates with 64-bit draws for huge n
      for (int64_t i = 0; i < n; ++i) {
        int64_t z = int64_t(gen.random64() % uint64_t(i + 1));
        r[size_t(i)] = r[size_t(z)];
        r[size_t(z)] = i;
      }
    }
  }
  LUCID_DISPATCH(dtype, "randperm", [&] {
    scalar_t* o = out->data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = kernels::convert<scalar_t>(r[size_t(i)]);
  });
  return out;
}

}  // namespace lucid
