// Branch-free float32 exp (and sigmoid on it) that GCC vectorises without -ffast-math (glibc's
// expf is a scalar call): exp, sigmoid, silu and logsumexp use them for float32 and the half
// types; float64 keeps std::exp. Within 1 ulp of the correctly rounded result over the whole float
// range (checked exhaustively), subnormal results included; exp(+inf) = inf, exp(-inf) = 0,
// NaN stays NaN.
// NOTE: under the default -ftrapping-math GCC will not vectorise a loop holding a float compare
// (x < c, x != x) or a float->int conversion, so every range decision here is made on the bit
// pattern with integer compares and applied with masks.
#pragma once
#include <cstdint>
#include <cstring>

namespace lucid::kernels {

inline uint32_t f32_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_to_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float exp_f32(float x) {
  // exp(x) = 2^n exp(r), n = round(x / ln 2): adding 1.5 * 2^23 rounds, and the integer sits in
  // the low mantissa bits of the sum. Only |x| < 104 reaches the result (see the masks below).
  const float kRound = 12582912.0f;
  const float t = x * 1.44269504088896341f + kRound;
  const int32_t n = int32_t(f32_to_bits(t)) - 0x4B400000;
  const float nf = t - kRound;
  float r = x - nf * 0.693359375f;  // ln 2 in two parts so that nf * hi is exact
  r = r - nf * -2.12194440e-4f;
  // Cephes expf minimax polynomial on [-ln2/2, ln2/2].
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * (r * r) + r + 1.0f;
  // 2^n as two factors, so n down to -150 (subnormal results) stays in range of each factor.
  const int32_t n1 = n >> 1, n2 = n - n1;
  const uint32_t eb = f32_to_bits(y * bits_to_f32(uint32_t(n1 + 127) << 23) * bits_to_f32(uint32_t(n2 + 127) << 23));
  // Range decisions on |x|'s bits: above 88.7228394 the result overflows to inf, below
  // -103.972694 it underflows to 0 (both exact thresholds of float32), NaN passes through.
  const uint32_t xb = f32_to_bits(x);
  const int32_t ax = int32_t(xb & 0x7fffffffu);
  const uint32_t neg = 0u - (xb >> 31);
  const uint32_t nan = 0u - uint32_t(ax > 0x7f800000);
  const uint32_t over = (0u - uint32_t(ax > 0x42b17217)) & ~neg;   // 88.7228394f
  const uint32_t under = (0u - uint32_t(ax > 0x42cff1b4)) & neg;   // 103.972694f
  uint32_t ob = (eb & ~over) | (0x7f800000u & over);
  ob &= ~under;
  ob = (ob & ~nan) | (xb & nan);
  return bits_to_f32(ob);
}

// 1 / (1 + e^-x) from e = exp(-|x|), which never overflows: s = 1 / (1 + e) for x >= 0 and
// e * s for x < 0, picked by the sign bit.
inline float sigmoid_f32(float x) {
  const uint32_t xb = f32_to_bits(x);
  const float e = exp_f32(bits_to_f32(xb | 0x80000000u));  // exp(-|x|)
  const float s = 1.0f / (1.0f + e);
  const uint32_t neg = 0u - (xb >> 31);
  return bits_to_f32((f32_to_bits(s) & ~neg) | (f32_to_bits(e * s) & neg));
}

// tanh: Cephes' odd polynomial for |x| < 0.625 (where 1 - 2 / (e^2|x| + 1) would cancel), else
// 1 - 2 / (exp(2|x|) + 1) with the sign of x restored; both computed, picked by a mask.
inline float tanh_f32(float x) {
  const uint32_t xb = f32_to_bits(x);
  const float ax = bits_to_f32(xb & 0x7fffffffu);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * ax + ax;  // on |x| too: the sign (also of -0) is restored below
  const float big = 1.0f - 2.0f / (exp_f32(2.0f * ax) + 1.0f);  // NaN in, NaN out
  const uint32_t is_small = 0u - uint32_t(int32_t(xb & 0x7fffffffu) < 0x3f200000);  // 0.625f
  const uint32_t mag = (f32_to_bits(small) & is_small) | (f32_to_bits(big) & ~is_small);
  return bits_to_f32(mag | (xb & 0x80000000u));
}

}  // namespace lucid::kernels
