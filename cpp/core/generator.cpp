#include "core/generator.h"

#include <cstring>

#include "core/error.h"

namespace lucid {

const GeneratorPtr& default_generator() {
  static GeneratorPtr g = std::make_shared<Generator>();
  return g;
}

void Mt19937::regenerate() {
  constexpr uint32_t kA = 0x9908b0dfu, kUpper = 0x80000000u, kLower = 0x7fffffffu;
  auto mix = [](uint32_t a, uint32_t b) {
    const uint32_t y = (a & kUpper) | (b & kLower);
    return (y >> 1) ^ ((y & 1u) ? kA : 0u);
  };
  // Each loop reads words it has not yet overwritten, or ones overwritten >= 227 steps before:
  // both vectorise.
  for (int k = 0; k < kN - kM; ++k) x[k] = x[k + kM] ^ mix(x[k], x[k + 1]);
  for (int k = kN - kM; k < kN - 1; ++k) x[k] = x[k + kM - kN] ^ mix(x[k], x[k + 1]);
  x[kN - 1] = x[kM - 1] ^ mix(x[kN - 1], x[0]);
  p = 0;
}

void Generator::uniform_doubles(double* out, int64_t n) {
  constexpr int64_t kBlock = 512;
  uint32_t w[2 * kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    engine.fill(w, 2 * m);
    for (int64_t i = 0; i < m; ++i)  // random64(): the first draw is the high word
      out[i0 + i] = unit53((uint64_t(w[2 * i]) << 32) | w[2 * i + 1]);
  }
}

std::vector<int64_t> Generator::get_state() {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<int64_t> w{int64_t(seed), next_normal ? 1 : 0, 0};
  if (next_normal) std::memcpy(&w[2], &*next_normal, sizeof(double));
  // The words std::mt19937 writes as its text state: the 624 state words, then the position.
  for (uint32_t v : engine.x) w.push_back(int64_t(v));
  w.push_back(engine.p);
  return w;
}

void Generator::set_state(const std::vector<int64_t>& w) {
  LUCID_CHECK(w.size() == 3 + 624 + 1, "set_state: expected a state of ", 3 + 624 + 1,
              " int64 words (from get_state()), got ", w.size());
  for (size_t i = 3; i + 1 < w.size(); ++i)
    LUCID_CHECK(w[i] >= 0 && w[i] <= 0xffffffffLL, "set_state: invalid generator state word ", w[i]);
  LUCID_CHECK(w.back() >= 0 && w.back() <= Mt19937::kN, "set_state: invalid generator state position ", w.back());
  std::lock_guard<std::mutex> lock(mu);
  for (int i = 0; i < Mt19937::kN; ++i) engine.x[i] = uint32_t(w[size_t(3 + i)]);
  engine.p = int(w.back());
  seed = uint64_t(w[0]);
  next_normal.reset();
  if (w[1]) {
    double d;
    std::memcpy(&d, &w[2], sizeof(double));
    next_normal = d;
  }
}

}  // namespace lucid
