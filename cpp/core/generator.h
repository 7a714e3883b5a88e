// Generator: PyTorch's CPU random generator, bit for bit. A 32-bit Mersenne Twister seeded with
// the low 32 bits of the seed; random64() joins two draws (first one high). Uniform floats keep
// the low `digits` bits of a draw (24 for float32 from one 32-bit draw, 53 for float64 from a
// 64-bit one); the normal cache holds the second Box-Muller value of the per-element sampler.
// Matching the stream is what lets a seeded PyTorch program give the same numbers here.
// Every draw happens under `mu`; the default generator is process-wide.
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <vector>

namespace lucid {

struct Generator {
  // PyTorch's default seed: both its default generator and a fresh torch.Generator() start here.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  std::mutex mu;
  std::mt19937 engine{uint32_t(kDefaultSeed)};
  uint64_t seed = kDefaultSeed;
  std::optional<double> next_normal;

  void manual_seed(uint64_t s) {
    engine.seed(uint32_t(s & 0xffffffffULL));
    seed = s;
    next_normal.reset();
  }
  uint32_t random() { return uint32_t(engine()); }
  uint64_t random64() {
    uint64_t hi = random(), lo = random();
    return (hi << 32) | lo;
  }
  // A uniform value in [0, 1) with `digits` bits of precision, PyTorch's uniform_real_distribution.
  double uniform(int digits) {
    if (digits > 32) return double(random64() & ((uint64_t(1) << digits) - 1)) * std::ldexp(1.0, -digits);
    return double(random() & ((uint32_t(1) << digits) - 1)) * std::ldexp(1.0, -digits);
  }
  double uniform_double() { return uniform(53); }
  // PyTorch's normal_distribution<double>: Box-Muller on two doubles, caching the sine value.
  double normal() {
    if (next_normal) {
      double v = *next_normal;
      next_normal.reset();
      return v;
    }
    double u1 = uniform_double(), u2 = uniform_double();
    double r = std::sqrt(-2.0 * std::log1p(-u2)), theta = 2.0 * 3.14159265358979323846 * u1;
    next_normal = r * std::sin(theta);
    return r * std::cos(theta);
  }
  // State as words: seed, cache flag, cache bits, then the engine's own text state.
  std::vector<int64_t> get_state();
  void set_state(const std::vector<int64_t>& words);
};
using GeneratorPtr = std::shared_ptr<Generator>;

// The process-wide generator that pylucid.manual_seed seeds and every random op uses by default.
const GeneratorPtr& default_generator();
// `g` itself, or the default generator when null.
inline Generator& gen_or_default(Generator* g) { return g ? *g : *default_generator(); }

}  // namespace lucid
