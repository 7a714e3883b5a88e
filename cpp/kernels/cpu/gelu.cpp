#include "kernels/cpu/gelu.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif

namespace lucid::kernels {

namespace gelu_detail {

// Per-interval coefficients of h(a) = Phi(-a) exp(a^2 / 2) (Mills ratio / sqrt(2 pi)) on
// [k/2 - 1/4, k/2 + 1/4], k = 0..30, as a polynomial in w = a - k/2: row 0 and 1 the constant
// term split hi + lo, rows 2..7 the coefficients of w..w^6. Weighted least squares for relative
// error on 120 Chebyshev nodes per interval in 40-digit arithmetic: within 0.13 ulp before the
// float rounding. Entry 31 repeats entry 30; past |x| = 15.75 the index wraps around (the
// results there underflow whatever h is).
alignas(64) inline constexpr float kMillsTable[8][32] = {
    {0.5f, 0.349618822f, 0.261578292f, 0.20578067f, 0.168101996f, 0.14133133f, 0.121513948f, 0.106345154f, 0.094410643f, 0.084803395f, 0.0769193023f, 0.0703426972f, 0.0647793114f, 0.0600156747f, 0.0558934808f, 0.0522930957f, 0.0491225459f, 0.0463100448f, 0.0437987894f, 0.04154329f, 0.0395066924f, 0.037658859f, 0.03597489f, 0.0344340578f, 0.0330189727f, 0.0317149274f, 0.0305094142f, 0.0293917321f, 0.0283526611f, 0.0273842253f, 0.0264794882f, 0.0264794882f},
    {5.66562519e-10f, 1.2502416e-08f, 2.38545045e-10f, -3.06193737e-09f, 5.04199971e-09f, 1.43955647e-09f, 5.11319098e-10f, -7.11228243e-10f, -1.67951786e-09f, -2.86545876e-09f, 2.630693e-09f, -3.17802717e-09f, 2.90591573e-09f, 6.62701616e-10f, 1.66280067e-09f, 1.38049938e-09f, 3.4426681e-10f, -1.74416948e-09f, -5.1111404e-10f, -1.51730173e-09f, 1.66206837e-09f, -3.2537531e-10f, -3.72533226e-10f, 8.18460744e-10f, -1.64746161e-09f, -1.83530346e-09f, 3.4394626e-10f, -4.3733997e-10f, -5.30963773e-10f, -8.76562226e-11f, 7.60537633e-10f, 7.60537633e-10f},
    {-0.398942381f, -0.224132895f, -0.137364f, -0.0902712792f, -0.062738277f, -0.045613952f, -0.034400437f, -0.0267342422f, -0.0212997161f, -0.0173270162f, -0.0143457558f, -0.0120574636f, -0.0102663944f, -0.00884039048f, -0.00768790348f, -0.00674405182f, -0.00596191082f, -0.00530691398f, -0.00475318078f, -0.00428103982f, -0.0038753394f, -0.00352426386f, -0.00321849459f, -0.00295060663f, -0.00271462742f, -0.00250571081f, -0.00231989194f, -0.00215390348f, -0.00200503296f, -0.00187101518f, -0.00174994546f, -0.00174994546f},
    {0.249999866f, 0.118776172f, 0.0621071458f, 0.0351868719f, 0.0213127229f, 0.0136482259f, 0.00915632118f, 0.0063876519f, 0.00460589025f, 0.00341591029f, 0.00259526377f, 0.00201332313f, 0.00159047381f, 0.00127656804f, 0.00103907962f, 0.000856353494f, 0.000713630288f, 0.000600636122f, 0.000510081882f, 0.000436705974f, 0.000376650103f, 0.000327044138f, 0.000285724673f, 0.000251041289f, 0.000221720693f, 0.000196770416f, 0.000175409485f, 0.000157017843f, 0.000141099139f, 0.000127252933f, 0.000115153904f, 0.000115153904f},
    {-0.13296774f, -0.0549114123f, -0.025084557f, -0.01249664f, -0.0067041507f, -0.00383107946f, -0.00231046951f, -0.00145914406f, -0.000958713586f, -0.000651804381f, -0.000456477894f, -0.000328061549f, -0.00024118353f, -0.000180899369f, -0.000138115225f, -0.000107133499f, -8.4289386e-05f, -6.71689995e-05f, -5.41478039e-05f, -4.41109114e-05f, -3.6279409e-05f, -3.01001437e-05f, -2.51743531e-05f, -2.12105806e-05f, -1.79930648e-05f, -1.53601832e-05f, -1.31895404e-05f, -1.1387493e-05f, -9.88171723e-06f, -8.61585522e-06f, -7.54562598e-06f, -7.54562598e-06f},
    {0.062502563f, 0.0228300449f, 0.00925542694f, 0.00411034701f, 0.00197603833f, 0.00101759855f, 0.00055621122f, 0.000320153224f, 0.000192754233f, 0.000120694982f, 7.82170246e-05f, 5.22452174e-05f, 3.58425932e-05f, 2.51801757e-05f, 1.80680272e-05f, 1.32129071e-05f, 9.82869369e-06f, 7.42484235e-06f, 5.68786982e-06f, 4.41304519e-06f, 3.46397837e-06f, 2.74813783e-06f, 2.20168522e-06f, 1.77989273e-06f, 1.4509709e-06f, 1.1920248e-06f, 9.86361442e-07f, 8.21669403e-07f, 6.88771308e-07f, 5.80757387e-07f, 4.92376159e-07f, 4.92376159e-07f},
    {-0.0270139109f, -0.00881246198f, -0.00319981505f, -0.00127749017f, -0.000554496248f, -0.000259017805f, -0.000129041699f, -6.80243247e-05f, -3.76831777e-05f, -2.1807291e-05f, -1.31161596e-05f, -8.1630551e-06f, -5.23716744e-06f, -3.45240437e-06f, -2.33187279e-06f, -1.60985314e-06f, -1.13356009e-06f, -8.12598955e-07f, -5.9207656e-07f, -4.37856073e-07f, -3.28240077e-07f, -2.49158717e-07f, -1.91318193e-07f, -1.48473887e-07f, -1.16363275e-07f, -9.20337797e-08f, -7.34121883e-08f, -5.90241278e-08f, -4.78086051e-08f, -3.89935693e-08f, -3.20113536e-08f, -3.20113536e-08f},
    {0.010484728f, 0.00309962034f, 0.00102091592f, 0.000370460009f, 0.00014655538f, 6.26009351e-05f, 2.86216236e-05f, 1.38985561e-05f, 7.11919984e-06f, 3.82358348e-06f, 2.14196257e-06f, 1.24587257e-06f, 7.49431877e-07f, 4.64608831e-07f, 2.95959637e-07f, 1.93208422e-07f, 1.28964246e-07f, 8.78386501e-08f, 6.09401312e-08f, 4.29972964e-08f, 3.08102486e-08f, 2.23938752e-08f, 1.64916862e-08f, 1.22934853e-08f, 9.26777766e-09f, 7.0602777e-09f, 5.43128076e-09f, 4.21633839e-09f, 3.30115513e-09f, 2.60532174e-09f, 2.07161976e-09f, 2.07161976e-09f},
};

// The forward pass reduces exp's argument with one FMA by C = float(ln 2) instead of two steps by
// ln 2 split hi + lo: r = -x^2/2 - nf C then carries nf (ln 2 - C), |.| < 1e-9 (nf >= -488),
// which scales 2^nf e^r by e^(nf (ln 2 - C)). nf is within 1/2 of -x^2 / (2 ln 2), so that factor
// is e^(-x^2 g) (g = (ln 2 - C) / (2 ln 2)) to 1e-9 (0.02 ulp): the forward's table holds
// h(a) e^(a^2 g) instead, which cancels it. With a = k/2 + w, a^2 g = g (c^2 + 2 c w + w^2), c = k/2,
// so each interval's polynomial is multiplied by 1 + g (c^2 + 2 c w + w^2) (e^ of it to 1e-13; the
// w^7 and w^8 terms are below 1e-15 and dropped), in double, and rounded once more to float.
struct MillsTable {
  alignas(64) float row[8][32];
};
constexpr MillsTable forward_mills_table() {
  constexpr double kLn2 = 0.69314718055994530942;
  constexpr double g = (kLn2 - double(float(kLn2))) / (2 * kLn2);
  MillsTable t{};
  for (int k = 0; k < 32; ++k) {
    const double c = (k < 31 ? k : 30) * 0.5;  // entry 31 repeats entry 30
    double p[7];  // coefficients of w^0..w^6
    p[0] = double(kMillsTable[0][k]) + double(kMillsTable[1][k]);
    for (int j = 1; j <= 6; ++j) p[j] = kMillsTable[j + 1][k];
    double q[7];
    for (int j = 0; j <= 6; ++j)
      q[j] = p[j] * (1 + g * c * c) + (j >= 1 ? 2 * g * c * p[j - 1] : 0.0) + (j >= 2 ? g * p[j - 2] : 0.0);
    t.row[0][k] = float(q[0]);
    t.row[1][k] = float(q[0] - double(float(q[0])));
    for (int j = 1; j <= 6; ++j) t.row[j + 1][k] = float(q[j]);
  }
  return t;
}
inline constexpr MillsTable kMillsTableFwd = forward_mills_table();

}  // namespace gelu_detail

namespace {

// Baseline x86-64 (and non-x86) copy: normal_cdf_pdf_f32 in double, rounded once.
template <bool Backward>
void gelu_scalar(const float* x, const float* g, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const NormalCdfPdf c = normal_cdf_pdf_f32(x[i]);
    if constexpr (Backward) out[i] = float(double(g[i]) * (c.cdf + double(x[i]) * c.pdf));
    else out[i] = float(double(x[i]) * c.cdf);
  }
}

}  // namespace

#if LUCID_X86_DISPATCH
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace gelu_avx512 {
constexpr int kW = 16;
using F = float __attribute__((vector_size(64)));
using I = int32_t __attribute__((vector_size(64)));
// 32-entry table lookup in one instruction (it reads the low 5 bits of k).
inline F lookup32(const float* row, I k) {
  return (F)_mm512_permutex2var_ps(_mm512_load_ps(row), (__m512i)k, _mm512_load_ps(row + 16));
}
using Mask = __mmask16;
// vptestnmd: the lanes whose sign bit is clear.
inline Mask pos_mask(F x) { return _mm512_testn_epi32_mask((__m512i)x, _mm512_set1_epi32(INT32_MIN)); }
// vfixupimmps on x's class: negative (and -0, NaN) keep x, -inf gives the default NaN, positive
// and +inf give 1 (the table's nibbles: class 4 (-inf) -> 3, classes 3, 5, 7 (+1, +inf, positive)
// -> 10 (+1), the rest -> 0 (x itself)).
inline F neg_or_one(F x) { return (F)_mm512_fixupimm_ps((__m512)x, (__m512)x, _mm512_set1_epi32(0xA0A3A000), 0); }
// vfnmaddps under a mask: one instruction.
inline F select_fnmadd(Mask pos, F t, F a, F x) { return (F)_mm512_mask_fnmadd_ps((__m512)t, pos, (__m512)a, (__m512)x); }
inline F fmsub(F a, F b, F c) { return (F)_mm512_fmsub_ps((__m512)a, (__m512)b, (__m512)c); }
// vrangeps: the smaller magnitude, sign cleared (NaN gives 26).
inline F abs_capped(F x) { return (F)_mm512_maskz_range_ps(__mmask16(0xffff), (__m512)x, _mm512_set1_ps(26.0f), 0x0a); }
// vreduceps (M = 1, round to nearest even): a - round(2a) / 2, exact.
inline F minus_half_round(F a, F) { return (F)_mm512_maskz_reduce_ps(__mmask16(0xffff), (__m512)a, 0x10); }
inline F scale_pow2(F y, F nf) { return (F)_mm512_maskz_scalef_ps(__mmask16(0xffff), (__m512)y, (__m512)nf); }
#include "kernels/cpu/gelu_vec.inc"
}  // namespace gelu_avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
namespace gelu_avx2 {
constexpr int kW = 8;
using F = float __attribute__((vector_size(32)));
using I = int32_t __attribute__((vector_size(32)));
// 32-entry table lookup as a gather (k & 31: a NaN lane's index is INT_MIN).
inline F lookup32(const float* row, I k) { return (F)_mm256_i32gather_ps(row, (__m256i)(k & 31), 4); }
using Mask = I;
inline Mask pos_mask(F x) { return ~((I)x >> 31); }
// scale_pow2 below clears a NaN whose nf is under -151 (the capped |x| of x = -inf or a NaN), so
// the x < 0 side takes its NaN from x again: x - x is NaN for a NaN or infinite x, else 0.
inline F neg_or_one(F x) { return ((I)x < 0) ? x : F{} + 1.0f; }
inline F select_fnmadd(Mask pos, F t, F a, F x) { return pos ? x - a * t : t * ((x - x) + 1.0f); }
inline F fmsub(F a, F b, F c) { return (F)_mm256_fmsub_ps((__m256)a, (__m256)b, (__m256)c); }
inline F abs_capped(F x) {
  return (F)_mm256_min_ps(_mm256_set1_ps(26.0f), _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (__m256)x));
}
// a - k / 2 for t2 = 2a + 1.5 * 2^23 (k in its low bits), exact.
inline F minus_half_round(F a, F t2) { return a - (t2 - 12582912.0f) * 0.5f; }
// 2^nf in two factors (one factor alone would leave the exponent range near -150); below -151
// the factors themselves are out of range and the result is 0 with y's sign, as vscalefps gives.
inline F scale_pow2(F y, F nf) {
  const I n = __builtin_convertvector(nf, I), n1 = n >> 1, n2 = n - n1;
  const F s = y * (F)((n1 + 127) << 23) * (F)((n2 + 127) << 23);
  return (F)((I)s & ~((I)(nf < -151.0f) & 0x7fffffff));  // +-0, keeping the sign
}
#include "kernels/cpu/gelu_vec.inc"
}  // namespace gelu_avx2
#pragma GCC pop_options
#endif

namespace {

template <bool Backward>
void gelu_block(const float* x, const float* g, float* out, int64_t n) {
#if LUCID_X86_DISPATCH
  switch (cpu_level()) {
    case CpuLevel::V4: return gelu_avx512::gelu_run<Backward>(x, g, out, n);
    case CpuLevel::V3: return gelu_avx2::gelu_run<Backward>(x, g, out, n);
    case CpuLevel::Base: break;
  }
#endif
  gelu_scalar<Backward>(x, g, out, n);
}

template <bool Backward>
void gelu_f32(const float* x, const float* g, float* out, int64_t n) {
  if (n < 2 * kParallelGrain) return gelu_block<Backward>(x, g, out, n);
  constexpr int64_t kBlock = 8192;  // elements per scheduling unit; a multiple of the vector width
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(threads_for_work(n)) schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t i0 = b * kBlock, m = std::min(kBlock, n - i0);
    gelu_block<Backward>(x + i0, Backward ? g + i0 : nullptr, out + i0, m);
  }
}

}  // namespace

void gelu_forward_f32(const float* x, float* y, int64_t n) { gelu_f32<false>(x, nullptr, y, n); }
void gelu_backward_f32(const float* g, const float* x, float* dx, int64_t n) { gelu_f32<true>(x, g, dx, n); }

}  // namespace lucid::kernels
