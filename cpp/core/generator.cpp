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
  fresh = false;
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

// PyTorch's CPUGeneratorImplState (x86-64 layout): its legacy part {uint64 the_initial_seed;
// int left; int seeded; uint64 next; uint64 state[624]; double normal_x, normal_y, normal_rho;
// int normal_is_valid;} padded to 5048 bytes, then {float next_float_normal_sample; bool valid;}
// padded to 5056. Its mt19937 hands out state[next] after --left reaches 0 regenerates, so
// left = 625 - next while inside a block and left = 1 when the next draw regenerates.
namespace {
constexpr size_t kOffLeft = 8, kOffSeeded = 12, kOffNext = 16, kOffWords = 24, kOffNormalY = 5024,
                 kOffNormalValid = 5040, kLegacyBytes = 5048, kStateBytes = 5056, kOldWords = 3 + 624 + 1;

template <class V>
void put(std::vector<uint8_t>& b, size_t off, V v) {
  std::memcpy(b.data() + off, &v, sizeof(V));
}
template <class V>
V get(const std::vector<uint8_t>& b, size_t off) {
  V v;
  std::memcpy(&v, b.data() + off, sizeof(V));
  return v;
}
}  // namespace

std::vector<int64_t> Generator::get_state() {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<uint8_t> b(kStateBytes, 0);
  put<uint64_t>(b, 0, seed);
  put<int32_t>(b, kOffLeft, engine.p >= Mt19937::kN ? 1 : 625 - engine.p);
  put<int32_t>(b, kOffSeeded, 1);
  put<uint64_t>(b, kOffNext, engine.fresh ? 0 : uint64_t(engine.p));
  for (int i = 0; i < Mt19937::kN; ++i) put<uint64_t>(b, kOffWords + 8 * size_t(i), engine.x[i]);
  if (next_normal) {
    put<double>(b, kOffNormalY, *next_normal);
    put<int32_t>(b, kOffNormalValid, 1);
  }
  return std::vector<int64_t>(b.begin(), b.end());
}

void Generator::set_state(const std::vector<int64_t>& w) {
  if (w.size() == kOldWords) {
    for (size_t i = 3; i + 1 < w.size(); ++i)
      LUCID_CHECK(w[i] >= 0 && w[i] <= 0xffffffffLL, "set_state: invalid generator state word ", w[i]);
    LUCID_CHECK(w.back() >= 0 && w.back() <= Mt19937::kN, "set_state: invalid generator state position ", w.back());
    std::lock_guard<std::mutex> lock(mu);
    for (int i = 0; i < Mt19937::kN; ++i) engine.x[i] = uint32_t(w[size_t(3 + i)]);
    engine.p = int(w.back());
    engine.fresh = false;
    seed = uint64_t(w[0]);
    next_normal.reset();
    if (w[1]) {
      double d;
      std::memcpy(&d, &w[2], sizeof(double));
      next_normal = d;
    }
    return;
  }
  LUCID_CHECK(w.size() == kStateBytes || w.size() == kLegacyBytes, "set_state: expected a state of ", kStateBytes,
              " bytes (from get_state(); PyTorch's legacy ", kLegacyBytes, " also), got ", w.size());
  std::vector<uint8_t> b(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    LUCID_CHECK(w[i] >= 0 && w[i] <= 255, "set_state: invalid state byte ", w[i], " at ", i);
    b[i] = uint8_t(w[i]);
  }
  const int32_t left = get<int32_t>(b, kOffLeft), seeded = get<int32_t>(b, kOffSeeded);
  const uint32_t next = uint32_t(get<uint64_t>(b, kOffNext));
  LUCID_CHECK(seeded != 0 && left > 0 && left <= Mt19937::kN && next <= uint32_t(Mt19937::kN),
              "set_state: invalid mt19937 state (left ", left, ", next ", next, ", seeded ", seeded, ")");
  std::optional<double> normal;
  if (get<int32_t>(b, kOffNormalValid)) {
    if (w.size() == kStateBytes) {
      normal = get<double>(b, kOffNormalY);
    } else {  // the legacy image kept Box-Muller's intermediates: normal_rho * sin(2 pi normal_x)
      normal = get<double>(b, kOffNormalY + 8) * std::sin(2.0 * 3.14159265358979323846 * get<double>(b, kOffNormalY - 8));
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  for (int i = 0; i < Mt19937::kN; ++i) engine.x[i] = uint32_t(get<uint64_t>(b, kOffWords + 8 * size_t(i)));
  engine.p = left == 1 ? Mt19937::kN : int(next);
  engine.fresh = left == 1 && next == 0;
  seed = get<uint64_t>(b, 0);
  next_normal = normal;
}

}  // namespace lucid
