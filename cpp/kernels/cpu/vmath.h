// Branch-free float32 exp (and sigmoid on it) that GCC vectorises without -ffast-math (glibc's
// expf is a scalar call): exp, sigmoid, silu and logsumexp use them for float32 and the half
// types; float64 keeps std::exp. Within 1 ulp of the correctly rounded result over the whole float
// range (checked exhaustively), subnormal results included; exp(+inf) = inf, exp(-inf) = 0,
// NaN stays NaN. erf_f32 (within 1 ulp of the float64 erf over the whole float range, checked
// exhaustively) and normal_cdf_pdf_f32 (GELU's Phi and phi, evaluated in double from float32
// pieces so that gelu keeps relative accuracy in its far negative tail) build on it.
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
// cond ? a : b on the bits, for the same reason as the integer compares (see the NOTE above).
inline double select_f64(bool cond, double a, double b) {
  uint64_t ua, ub;
  std::memcpy(&ua, &a, 8);
  std::memcpy(&ub, &b, 8);
  const uint64_t m = 0 - uint64_t(cond);
  const uint64_t r = (ua & m) | (ub & ~m);
  double d;
  std::memcpy(&d, &r, 8);
  return d;
}

// Cephes' expf minimax polynomial on [-ln2/2, ln2/2]: exp(r) = 1 + r + r^2 p(r); returns p(r).
inline float exp_poly_f32(float r) {
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p;
}

namespace vmath_detail {

// exp(x + lo) with lo small (|lo| < 0.2) added after the argument reduction, where it is not
// rounded against x (exp(-v^2) below needs that); range decisions and NaN come from x alone.
template <bool kLo>
inline float exp_core(float x, float lo) {
  // exp(x) = 2^n exp(r), n = round(x / ln 2): adding 1.5 * 2^23 rounds, and the integer sits in
  // the low mantissa bits of the sum. Only |x| < 104 reaches the result (see the masks below).
  const float kRound = 12582912.0f;
  const float t = (kLo ? x + lo : x) * 1.44269504088896341f + kRound;
  const int32_t n = int32_t(f32_to_bits(t)) - 0x4B400000;
  const float nf = t - kRound;
  float r = x - nf * 0.693359375f;  // ln 2 in two parts so that nf * hi is exact
  r = r - nf * -2.12194440e-4f;
  if constexpr (kLo) r = r + lo;
  const float y = exp_poly_f32(r) * (r * r) + r + 1.0f;
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

}  // namespace vmath_detail

inline float exp_f32(float x) { return vmath_detail::exp_core<false>(x, 0.0f); }

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

namespace vmath_detail {

// erf(a) / a - 1 = S(a^2) on [0, 0.5]: minimax for erf's relative error (1.4e-9); written as
// a + a S(a^2) the rounding stays near the last add (S(0) = 2/sqrt(pi) - 1 is small).
inline constexpr float kErfSmall[5] = {0.128379166f, -0.376126081f, 0.112828232f, -0.0267571881f, 0.00471799588f};
template <class A>
inline A erf_small_rel(A s) {
  A p = A(kErfSmall[4]);
  for (int i = 3; i >= 0; --i) p = p * s + A(kErfSmall[i]);
  return p;
}

// erfc(a) exp(a^2) on [0.5, 10.5] as t Q(t), t = 1 / (1 + a / 2), Q of degree 9 (relative error
// 2.7e-9). Fully in float, the rounding of t and Horner's cancellations cost 5 ulp; in double it is
// slow. So the high-order part goes in float (8 lanes) with a float t, and the last three steps and
// t itself in double, where the error is decided (0.3 ulp before the final rounding).
inline constexpr double kErfcxTail[10] = {
    0.28208732027211386,  0.28229878998871188,  0.24445740769159358, 0.19171154433709461,
    0.023144491969509469, 0.14172803506745688,  -0.25658210744569532, 0.049014802060355744,
    0.074102836591419627, -0.031992675384432415};
inline double erfcx_tail(double a) {
  // t from a float division plus one Newton step in double (relative error ~2^-46): a double
  // division costs more than the whole rest of erf on some cores.
  const double d = 1.0 + 0.5 * a;
  const float tf = 1.0f / float(d);
  double t = double(tf);
  t = t * (2.0 - d * t);
  float r = float(kErfcxTail[9]);
  for (int i = 8; i >= 3; --i) r = r * tf + float(kErfcxTail[i]);
  double q = double(r);
  for (int i = 2; i >= 0; --i) q = q * t + kErfcxTail[i];
  return t * q;
}

// exp(-k v^2) for 0 <= v <= 15 and k = 1 or 1/2, within exp_f32's accuracy of the exact value:
// rounding v^2 to float would cost 2 v^2 ulp (200 ulp at v = 10). Instead v^2 = z^2 + (v-z)(v+z)
// with z = v cut to 12 significant bits, so z^2 is exact and the small rest goes in as exp_core's lo.
inline float exp_neg_sq(float v, float k) {
  const float z = bits_to_f32(f32_to_bits(v) & 0xfffff000u);
  return exp_core<true>(-(z * z) * k, -((v - z) * (v + z)) * k);
}

constexpr uint32_t kHalfBits = 0x3f000000u;  // 0.5f, where the small and the tail forms meet

}  // namespace vmath_detail

// erf for float32: a + a S(a^2) below |x| = 0.5, else 1 - exp(-a^2) erfcx(a) in double (erf
// rounds to +-1 from |x| = 3.92 on; |x| is capped at 10.5 so inf gives +-1); sign restored from
// the bits (erf(-0) = -0), NaN stays NaN. Within 1 ulp of the float64 erf rounded to float32.
inline float erf_f32(float x) {
  using namespace vmath_detail;
  const uint32_t xb = f32_to_bits(x);
  const uint32_t ab = xb & 0x7fffffffu;
  const float a = bits_to_f32(ab);
  const float ac = bits_to_f32(ab < 0x41280000u ? ab : 0x41280000u);  // min(|x|, 10.5), NaN too
  const float small = a + a * erf_small_rel(a * a);
  const float big = float(1.0 - double(exp_neg_sq(ac, 1.0f)) * erfcx_tail(double(ac)));
  const uint32_t is_small = 0u - uint32_t(ab < kHalfBits);
  uint32_t ob = ((f32_to_bits(small) & is_small) | (f32_to_bits(big) & ~is_small)) | (xb & 0x80000000u);
  const uint32_t nan = 0u - uint32_t(ab > 0x7f800000u);
  return bits_to_f32((ob & ~nan) | (xb & nan));
}

// The standard normal cdf Phi(x) = (1 + erf(x / sqrt 2)) / 2 and pdf phi(x) in double, from a
// float32 x (GELU: x Phi(x), gradient Phi(x) + x phi(x)). For x / sqrt 2 < -0.5 Phi comes from
// erfc(|x| / sqrt 2) directly: 1 + erf(u) would cancel and lose everything in the tail. The
// tail's exp(-x^2 / 2) is split from the exact x (exp_neg_sq). |x| is capped at 14.85, past which
// Phi is 0 or 1 in float32 and phi is 0; a NaN x gives finite values here, the callers multiply
// by x so NaN still comes out.
struct NormalCdfPdf {
  double cdf, pdf;
};
inline NormalCdfPdf normal_cdf_pdf_f32(float x) {
  using namespace vmath_detail;
  constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794;
  const uint32_t xb = f32_to_bits(x);
  const uint32_t ab = xb & 0x7fffffffu;
  const float xc = bits_to_f32(ab < 0x416d999au ? ab : 0x416d999au);  // min(|x|, 14.85)
  const double e = double(exp_neg_sq(xc, 0.5f));                     // exp(-x^2 / 2)
  const double half_erfc = 0.5 * e * erfcx_tail(double(xc) * kInvSqrt2);  // Phi(-|x|)
  // Small form: S(u^2) is only a 0.13-relative correction, float is enough for it.
  const double us = double(x) * kInvSqrt2;  // signed
  const float uf = float(us);
  const double small = 0.5 + 0.5 * (us + us * double(erf_small_rel(uf * uf)));
  const double big = select_f64(xb >> 31, half_erfc, 1.0 - half_erfc);
  // |x| / sqrt 2 < 0.5 exactly when |x| < 0.70710677f (the float below 1 / sqrt 2).
  return {select_f64(ab < 0x3f3504f3u, small, big), e * kInvSqrt2Pi};
}

}  // namespace lucid::kernels
