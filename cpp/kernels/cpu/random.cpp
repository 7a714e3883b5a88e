#include "kernels/cpu/random.h"

#include <bit>

#include "kernels/cpu/cpu_features.h"

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

}  // namespace

LUCID_CLONES_AVX512 void neg_log1m(const double* u, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = neg_log_unit(1.0 - u[i]);
}

}  // namespace lucid::kernels
