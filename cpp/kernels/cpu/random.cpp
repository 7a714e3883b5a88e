// NOTE: as in attention.cpp, GCC if-converts the float compares of the normal sampler's lanes
// (and so vectorises its block loop) only when it may assume FP operations do not trap; nothing
// here reads FP exception flags, and nothing is reassociated.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include "kernels/cpu/random.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

namespace {

// -log(v) for v in (0, 1], branch-free so the loop vectorises: v = 2^k * m with m in
// [sqrt(2)/2, sqrt(2)), f = m - 1, and log(m) from s = f / (2 + f) with the classic minimax
// polynomial in s^2 (the fdlibm reduction; under 1 ulp). v = 1 gives +0, as -log1p(-0.0) does.
LUCID_ALWAYS_INLINE double neg_log_unit(double v) {
  constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kLg1 = 6.666666666666735130e-01, kLg2 = 3.999999999940941908e-01,
                   kLg3 = 2.857142874366239149e-01, kLg4 = 2.222219843214978396e-01,
                   kLg5 = 1.818357216161805012e-01, kLg6 = 1.531383769920937332e-01,
                   kLg7 = 1.479819860511658591e-01;
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  const uint64_t frac = bits & 0x000fffffffffffffULL;
  const bool halve = frac > 0x6a09e667f3bcdULL;  // mantissa above sqrt(2)
  const double m = std::bit_cast<double>(frac | (halve ? 0x3fe0000000000000ULL : 0x3ff0000000000000ULL));
  // The biased exponent as a double without an int64 -> double conversion (none in AVX2).
  const double k = (std::bit_cast<double>((bits >> 52) | 0x4330000000000000ULL) - 4503599627370496.0) -
                   (halve ? 1022.0 : 1023.0);
  const double f = m - 1.0, hfsq = 0.5 * f * f, s = f / (2.0 + f), z = s * s, w = z * z;
  const double r = w * (kLg2 + w * (kLg4 + w * kLg6)) + z * (kLg1 + w * (kLg3 + w * (kLg5 + w * kLg7)));
  const double log_v = k * kLn2Hi - ((hfsq - (s * (hfsq + r) + k * kLn2Lo)) - f);
  return 0.0 - log_v;
}

// NOTE: PyTorch's x86 builds run float32 normal_ through normal_fill_16_AVX2, whose log and
// sincos are the Cephes polynomials of avx_mathfun.h (not libm), theta = float(2 pi) * u2 in float
// and an FMA for std * n + mean. That file is compiled with -mfma, so the compiler fuses each
// multiply feeding an add into an FMA (the first product in statement order where two feed one
// add). The scalar ports below repeat those float operations one lane at a time, with the same
// fusions as explicit fma (the baseline copy has no FMA and does not contract; nothing here is a product
// feeding an add outside an explicit fma, so the FMA copy cannot contract either), so float32
// randn/normal_ is bit-identical to PyTorch's. Double and the half types keep PyTorch's scalar normal_fill.
namespace cephes {
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }

// avx_mathfun's log256_ps for one lane (u1 in (0, 1], so the invalid-input mask never fires).
inline float log_ps(float x) {
  x = std::max(x, bits_to_f32(0x00800000u));  // min_norm_pos
  int32_t e_i = int32_t(f32_to_bits(x) >> 23);
  x = bits_to_f32((f32_to_bits(x) & ~0x7f800000u) | f32_to_bits(0.5f));
  e_i -= 0x7f;
  float e = float(e_i);
  e = e + 1.0f;
  const bool lt = x < 0.707106781186547524f;
  const float tmp = lt ? x : 0.0f;
  x = x - 1.0f;
  e = e - (lt ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = 7.0376836292E-2f;
  y = fma(y, x, -1.1514610310E-1f);
  y = fma(y, x, 1.1676998740E-1f);
  y = fma(y, x, -1.2420140846E-1f);
  y = fma(y, x, 1.4249322787E-1f);
  y = fma(y, x, -1.6668057665E-1f);
  y = fma(y, x, 2.0000714765E-1f);
  y = fma(y, x, -2.4999993993E-1f);
  y = fma(y, x, 3.3333331174E-1f);
  y = y * x;
  y = fma(y, z, e * -2.12194440e-4f);  // GCC fuses the first of two products feeding an add
  y = fma(-z, 0.5f, y);
  x = x + y;
  x = fma(e, 0.693359375f, x);
  return x;
}

// avx_mathfun's sincos256_ps for one lane.
inline void sincos_ps(float x, float* s, float* c) {
  uint32_t sign_sin = f32_to_bits(x) & 0x80000000u;
  x = bits_to_f32(f32_to_bits(x) & 0x7fffffffu);
  float y = x * 1.27323954473516f;  // 4 / pi
  int32_t j = int32_t(y);           // cvttps: truncation
  j = (j + 1) & ~1;
  y = float(j);
  const uint32_t swap_sign_sin = uint32_t(j & 4) << 29;
  const bool poly_cos = (j & 2) == 0;  // the mask selecting the cosine polynomial for sin
  x = fma(y, -0.78515625f, x);
  x = fma(y, -2.4187564849853515625e-4f, x);
  x = fma(y, -3.77489497744594108e-8f, x);
  const uint32_t sign_cos = uint32_t(~(j - 2) & 4) << 29;
  sign_sin ^= swap_sign_sin;
  const float z = x * x;
  float yc = 2.443315711809948E-005f;
  yc = fma(yc, z, -1.388731625493765E-003f);
  yc = fma(yc, z, 4.166664568298827E-002f);
  yc = yc * z;
  yc = fma(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = -1.9515295891E-4f;
  ys = fma(ys, z, 8.3321608736E-3f);
  ys = fma(ys, z, -1.6666654611E-1f);
  ys = ys * z; ys = fma(ys, x, x);
  // The vector code blends the two polynomials with masks and adds the masked-out +0 lane, so a
  // -0 polynomial value comes out +0; "+ 0.0f" keeps that (it is not folded without fast-math).
  const uint32_t ys0 = f32_to_bits(0.0f + ys), yc0 = f32_to_bits(yc + 0.0f);  // both computed: no branch
  *s = bits_to_f32((poly_cos ? ys0 : yc0) ^ sign_sin);
  *c = bits_to_f32((poly_cos ? yc0 : ys0) ^ sign_cos);
}
}  // namespace cephes

}  // namespace

LUCID_CLONES_AVX2_FMA void normal_blocks16_f32(float* d, int64_t blocks, float mean, float std) {
  const float two_pi = float(2.0 * 3.14159265358979323846);
  for (int64_t b = 0; b < blocks; ++b, d += 16) {
    for (int j = 0; j < 8; ++j) {
      const float u1 = 1.0f - d[j], u2 = d[j + 8];
      const float radius = std::sqrt(-2.0f * cephes::log_ps(u1));
      float sn, cs;
      cephes::sincos_ps(two_pi * u2, &sn, &cs);
      d[j] = std::fma(radius * cs, std, mean);
      d[j + 8] = std::fma(radius * sn, std, mean);
    }
  }
}

LUCID_CLONES_AVX512 void neg_log1m(const double* u, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = neg_log_unit(1.0 - u[i]);
}

}  // namespace lucid::kernels
