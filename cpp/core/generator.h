// Generator: PyTorch's CPU random generator, bit for bit. A 32-bit Mersenne Twister seeded with
// the low 32 bits of the seed; random64() joins two draws (first one high). Uniform floats keep
// the low `digits` bits of a draw (24 for float32 from one 32-bit draw, 53 for float64 from a
// 64-bit one); the normal cache holds the second Box-Muller value of the per-element sampler.
// Matching the stream is what lets a seeded PyTorch program give the same numbers here.
// Every draw happens under `mu`; the default generator is process-wide.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace lucid {

// The 32-bit Mersenne Twister (the sequence of std::mt19937), with its state open so that a
// block of draws is one vectorisable pass: regenerate all 624 words, then temper them in a row.
struct Mt19937 {
  static constexpr int kN = 624, kM = 397;
  uint32_t x[kN];
  int p = kN;          // next word of x to hand out; kN: regenerate first
  bool fresh = true;   // seeded and not regenerated since (PyTorch's state then says next = 0)

  explicit Mt19937(uint32_t s) { seed(s); }
  void seed(uint32_t s) {
    x[0] = s;
    for (int i = 1; i < kN; ++i) x[i] = 1812433253u * (x[i - 1] ^ (x[i - 1] >> 30)) + uint32_t(i);
    p = kN;
    fresh = true;
  }
  static uint32_t temper(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }
  void regenerate();  // generator.cpp
  uint32_t next() {
    if (p >= kN) regenerate();
    return temper(x[p++]);
  }
  // The next n words into out.
  void fill(uint32_t* out, int64_t n) {
    while (n > 0) {
      if (p >= kN) regenerate();
      const int64_t m = std::min<int64_t>(n, kN - p);
      const uint32_t* src = x + p;
      for (int64_t j = 0; j < m; ++j) out[j] = temper(src[j]);
      p += int(m), out += m, n -= m;
    }
  }
};

struct Generator {
  // PyTorch's default seed: both its default generator and a fresh torch.Generator() start here.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  std::mutex mu;
  Mt19937 engine{uint32_t(kDefaultSeed)};
  uint64_t seed = kDefaultSeed;
  std::optional<double> next_normal;

  void manual_seed(uint64_t s) {
    engine.seed(uint32_t(s & 0xffffffffULL));
    seed = s;
    next_normal.reset();
  }
  uint32_t random() { return engine.next(); }
  uint64_t random64() {
    uint64_t hi = random(), lo = random();
    return (hi << 32) | lo;
  }
  // A uniform value in [0, 1) with `digits` bits of precision, PyTorch's uniform_real_distribution.
  // (Dividing by 2^digits is exact, and a multiply once `digits` is a constant.)
  double uniform(int digits) {
    const double scale = double(uint64_t(1) << digits);
    if (digits > 32) return double(random64() & ((uint64_t(1) << digits) - 1)) / scale;
    return double(random() & ((uint32_t(1) << digits) - 1)) / scale;
  }
  double uniform_double() { return unit53(random64()); }
  // The low 53 bits of a 64-bit draw as a double in [0, 1).
  static double unit53(uint64_t r) { return double(r & ((uint64_t(1) << 53) - 1)) * 0x1p-53; }
  // n draws of uniform_double() into out, in order.
  void uniform_doubles(double* out, int64_t n);
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
  // State as PyTorch's CPUGeneratorImplState, byte for byte (one byte per element, 5056 of them):
  // seed, mt19937 left/seeded/next and the 624 words as uint64, the double normal cache. set_state
  // also takes PyTorch's legacy 5048-byte image and pylucid's former 628-word one (seed, cache
  // flag, cache bits, 624 words, position).
  std::vector<int64_t> get_state();
  void set_state(const std::vector<int64_t>& bytes);
};
using GeneratorPtr = std::shared_ptr<Generator>;

// The process-wide generator that pylucid.manual_seed seeds and every random op uses by default.
const GeneratorPtr& default_generator();
// `g` itself, or the default generator when null.
inline Generator& gen_or_default(Generator* g) { return g ? *g : *default_generator(); }

}  // namespace lucid
