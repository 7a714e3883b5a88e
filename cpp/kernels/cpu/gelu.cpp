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

// Per-interval polynomials for h(a) = Phi(-a) exp(a^2 / 2) (Mills ratio / sqrt(2 pi)) on
// [k/2 - 1/4, k/2 + 1/4], k = 0..30, in w = a - c_k: row 0 holds the centre c_k, rows 1..7 the
// coefficients of w^0..w^6. Each c_k is the float within 0.004 of k/2 (c_0 = 0) at which h is
// closest to a float (within 0.0002 ulp), so that the constant term, that float, needs no low
// part; the rest is weighted least squares for relative error on 120 Chebyshev nodes in 40-digit
// arithmetic, each coefficient rounded to float before the next is fitted: within 0.06 ulp
// before the float evaluation (tools/gen_gelu_tables.py). Entry 31 repeats entry 30; past
// |x| = 15.75 the index wraps around (the results there underflow whatever h is).
// kMillsTableBwd is h itself; kMillsTableFwd is h(a) e^(a^2 g), g = (ln 2 - float(ln 2)) / (2 ln 2):
// the forward reduces exp's argument by float(ln 2) in one FMA (gelu_vec.inc), which leaves a
// factor e^(nf (ln 2 - float(ln 2))) = e^(-a^2 g) to 1e-9 (0.02 ulp, nf within 1/2 of
// -a^2 / (2 ln 2)), and this table cancels it.
alignas(64) inline constexpr float kMillsTableBwd[8][32] = {
    {0.0f, 0.4963541f, 0.9969436f, 1.5031779f, 2.0013795f, 2.496712f, 3.0039597f, 3.49886f, 4.002817f, 4.4980927f, 5.0005274f, 5.501399f, 6.002556f, 6.4972124f, 6.999446f, 7.501218f, 8.000624f, 8.497783f, 8.996352f, 9.500762f, 9.998721f, 10.498888f, 10.998244f, 11.496042f, 12.003563f, 12.502378f, 12.997779f, 13.50167f, 14.00387f, 14.496144f, 14.998023f, 14.998023f},
    {0.5f, 0.35043758f, 0.2619987f, 0.20549415f, 0.1680155f, 0.14148146f, 0.12137788f, 0.10637564f, 0.09435067f, 0.08483645f, 0.07691174f, 0.07032583f, 0.064753085f, 0.06004033f, 0.055897743f, 0.052284885f, 0.049118828f, 0.046321813f, 0.043816134f, 0.041540027f, 0.03951165f, 0.037662778f, 0.03598054f, 0.03444574f, 0.033009302f, 0.031708967f, 0.030514568f, 0.029388135f, 0.028344903f, 0.027391441f, 0.026482949f, 0.026482949f},
    {-0.39894226f, -0.22500117f, -0.13774435f, -0.09004802f, -0.062679514f, -0.04570383f, -0.034328032f, -0.026748814f, -0.021273786f, -0.017340053f, -0.014343019f, -0.012051832f, -0.0102582695f, -0.008847512f, -0.007689055f, -0.0067419666f, -0.0059610205f, -0.005309579f, -0.004756904f, -0.0042803744f, -0.0038763029f, -0.0035249912f, -0.003219498f, -0.0029525948f, -0.0027130481f, -0.002504775f, -0.0023206715f, -0.0021533791f, -0.0020039415f, -0.0018719968f, -0.0017504008f, -0.0017504008f},
    {0.24999897f, 0.11937863f, 0.06233768f, 0.035067983f, 0.021285f, 0.013686082f, 0.009128927f, 0.006392645f, 0.0045977966f, 0.003419642f, 0.0025945415f, 0.0020119469f, 0.001588626f, 0.0012780821f, 0.0010393093f, 0.00085596216f, 0.0007134726f, 0.0006010833f, 0.00051067496f, 0.0004366051f, 0.00037678934f, 0.0003271445f, 0.00028585736f, 0.00025129336f, 0.00022152846f, 0.00019666084f, 0.00017549741f, 0.00015696081f, 0.00014098446f, 0.00012735266f, 0.00011519865f, 0.00011519865f},
    {-0.1329598f, -0.05524577f, -0.025197906f, -0.012444457f, -0.006693336f, -0.0038444896f, -0.0023016797f, -0.0014606105f, -0.000956587f, -0.0006527692f, -0.0004563069f, -0.0003277603f, -0.00024080051f, -0.00018116413f, -0.00013814846f, -0.00010707422f, -8.427189e-05f, -6.7225374e-05f, -5.4224547e-05f, -4.408717e-05f, -3.6301608e-05f, -3.0116582e-05f, -2.5190595e-05f, -2.1236066e-05f, -1.797642e-05f, -1.5346232e-05f, -1.3193738e-05f, -1.1379487e-05f, -9.865931e-06f, -8.625722e-06f, -7.5524354e-06f, -7.5524354e-06f},
    {0.062291205f, 0.022990795f, 0.009304072f, 0.004090072f, 0.0019722464f, 0.0010218484f, 0.0005536686f, 0.00032055154f, 0.00019223441f, 0.00012092848f, 7.818511e-05f, 5.2182713e-05f, 3.577552e-05f, 2.5218776e-05f, 1.8070052e-05f, 1.32044e-05f, 9.825191e-06f, 7.4272207e-06f, 5.6947415e-06f, 4.413097e-06f, 3.466844e-06f, 2.7526787e-06f, 2.2022098e-06f, 1.7800758e-06f, 1.4485439e-06f, 1.1917512e-06f, 9.859334e-07f, 8.2124546e-07f, 6.895409e-07f, 5.815564e-07f, 4.938066e-07f, 4.938066e-07f},
    {-0.025491493f, -0.008877528f, -0.0032197456f, -0.0012711467f, -0.0005523861f, -0.00026026988f, -0.00012836861f, -6.805542e-05f, -3.707678e-05f, -2.1356327e-05f, -1.3178138e-05f, -8.255778e-06f, -5.4192733e-06f, -3.6469612e-06f, -2.4107833e-06f, -1.5506367e-06f, -1.0528986e-06f, -9.2288275e-07f, -6.661946e-07f, -5.5532473e-07f, -2.773084e-07f, -2.0111715e-07f, -1.8266728e-07f, -1.8003298e-07f, -7.011527e-08f, -1.2188592e-07f, -1.2582402e-07f, -8.778456e-08f, -1.0661682e-07f, -2.8661175e-08f, 1.3387161e-09f, 1.3387161e-09f},
    {0.007366874f, 0.0031030858f, 0.0010250632f, 0.00037075547f, 0.00014625346f, 6.27888e-05f, 2.8564886e-05f, 1.3783248e-05f, 7.0563487e-06f, 3.499345e-06f, 2.1137694e-06f, 1.2990675e-06f, 7.3519425e-07f, 5.9201193e-07f, 3.4696075e-07f, 1.8311624e-07f, 1.2969566e-07f, 1.7011389e-07f, 1.1780724e-07f, 2.7308726e-08f, 1.7997166e-08f, -1.1472915e-08f, 2.6237707e-08f, 4.553838e-08f, 2.0988592e-08f, -3.6120458e-09f, 2.5968403e-08f, 1.7619293e-09f, -2.4911841e-08f, -9.0391705e-10f, -1.3289328e-08f, -1.3289328e-08f},
};
alignas(64) inline constexpr float kMillsTableFwd[8][32] = {
    {0.0f, 0.4998433f, 1.0020765f, 1.4979875f, 2.0018115f, 2.5006685f, 2.999584f, 3.4975386f, 4.0029593f, 4.496114f, 5.0025725f, 5.4962387f, 6.003199f, 6.4969788f, 7.001726f, 7.499392f, 7.998719f, 8.498488f, 9.001513f, 9.500758f, 9.997516f, 10.499821f, 10.998757f, 11.496217f, 11.999544f, 12.501283f, 13.000251f, 13.502946f, 13.998272f, 14.500211f, 15.003057f, 15.003057f},
    {0.5f, 0.34965396f, 0.26129332f, 0.20596248f, 0.16798842f, 0.14130084f, 0.12152826f, 0.106410995f, 0.09434765f, 0.08487078f, 0.076882415f, 0.07038807f, 0.064746484f, 0.060042392f, 0.05588021f, 0.052297194f, 0.04913018f, 0.04631806f, 0.043791596f, 0.041540038f, 0.03951632f, 0.037659485f, 0.035978884f, 0.03444522f, 0.033020202f, 0.031711705f, 0.030508826f, 0.02938538f, 0.028356118f, 0.027383823f, 0.026474133f, 0.026474133f},
    {-0.39894226f, -0.22417012f, -0.13710639f, -0.090413064f, -0.062661126f, -0.04559571f, -0.034408055f, -0.026765715f, -0.02127248f, -0.017353596f, -0.014332413f, -0.012072623f, -0.010256226f, -0.00884811f, -0.007684318f, -0.006745094f, -0.0059637395f, -0.005308731f, -0.0047516385f, -0.004280378f, -0.003877212f, -0.0035243817f, -0.0032192054f, -0.0029525075f, -0.0027148302f, -0.0025052065f, -0.0023198046f, -0.0021529791f, -0.0020055212f, -0.0018709621f, -0.0017492422f, -0.0017492422f},
    {0.24999897f, 0.11880201f, 0.06195112f, 0.035262424f, 0.021276325f, 0.013640544f, 0.009159205f, 0.0063984385f, 0.004597389f, 0.0034235204f, 0.0025917438f, 0.0020170289f, 0.0015881613f, 0.0012782093f, 0.0010383647f, 0.00085654896f, 0.0007139542f, 0.0006009408f, 0.00050983625f, 0.00043660568f, 0.00037692062f, 0.00032706035f, 0.0002858186f, 0.00025128212f, 0.00022174537f, 0.00019671136f, 0.00017539956f, 0.00015691723f, 0.00014115035f, 0.00012724749f, 0.0001150847f, 0.0001150847f},
    {-0.13295981f, -0.054925766f, -0.025007863f, -0.012529676f, -0.0066900062f, -0.003828382f, -0.0023114379f, -0.0014623054f, -0.000956461f, -0.00065367727f, -0.0004556531f, -0.00032886828f, -0.00024072913f, -0.00018118396f, -0.00013799114f, -0.00010716529f, -8.435068e-05f, -6.721635e-05f, -5.4111068e-05f, -4.40954e-05f, -3.631345e-05f, -3.0102774e-05f, -2.51813e-05f, -2.1242693e-05f, -1.7993942e-05f, -1.5359772e-05f, -1.3183434e-05f, -1.137737e-05f, -9.8918545e-06f, -8.612526e-06f, -7.5417993e-06f, -7.5417993e-06f},
    {0.06229133f, 0.022836354f, 0.00922233f, 0.004123031f, 0.001971131f, 0.0010167562f, 0.0005565253f, 0.00032099482f, 0.00019219592f, 0.00012111697f, 7.8051344e-05f, 5.242137e-05f, 3.5756293e-05f, 2.521641e-05f, 1.8047715e-05f, 1.32173745e-05f, 9.839318e-06f, 7.433334e-06f, 5.684905e-06f, 4.4109665e-06f, 3.4682234e-06f, 2.7474564e-06f, 2.2008226e-06f, 1.786317e-06f, 1.4487341e-06f, 1.1899454e-06f, 9.861254e-07f, 8.2138916e-07f, 6.909888e-07f, 5.8041473e-07f, 4.926975e-07f, 4.926975e-07f},
    {-0.025491945f, -0.008814873f, -0.003186597f, -0.0012831616f, -0.00055112457f, -0.00025851006f, -0.00012862876f, -6.8170266e-05f, -3.7261725e-05f, -2.1972173e-05f, -1.3321062e-05f, -7.965897e-06f, -5.180058e-06f, -3.690917e-06f, -2.3219752e-06f, -1.6145941e-06f, -1.0096386e-06f, -7.8541916e-07f, -6.182719e-07f, -4.6203184e-07f, -3.3331622e-07f, -2.4164504e-07f, -2.372169e-07f, -8.944371e-08f, -1.3661712e-07f, -2.6775904e-08f, -1.318802e-07f, -6.40575e-08f, 1.3677221e-08f, -7.1447325e-08f, -6.92092e-09f, -6.92092e-09f},
    {0.0073674656f, 0.0031051713f, 0.0010202253f, 0.00037260682f, 0.00014545236f, 6.234703e-05f, 2.8106808e-05f, 1.3854959e-05f, 7.166244e-06f, 3.8699905e-06f, 2.091637e-06f, 9.699266e-07f, 7.82541e-07f, 6.6940356e-07f, 2.9788444e-07f, 1.9597643e-07f, 8.391933e-08f, 6.062863e-08f, 4.374945e-08f, 4.6611863e-08f, 3.004741e-08f, 3.1277086e-08f, 4.0909818e-08f, -3.676275e-08f, 3.3086256e-08f, 2.3561473e-08f, 7.9167135e-09f, -1.5002293e-09f, -2.1260332e-08f, 6.3110535e-09f, -1.2392085e-09f, -1.2392085e-09f},
};

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
  const int nt = threads_for_work(n);
  parallel_threads(nt, [&](int t) {
    for (int64_t b = blocks * t / nt; b < blocks * (t + 1) / nt; ++b) {
      const int64_t i0 = b * kBlock, m = std::min(kBlock, n - i0);
      gelu_block<Backward>(x + i0, Backward ? g + i0 : nullptr, out + i0, m);
    }
  });
}

}  // namespace

void gelu_forward_f32(const float* x, float* y, int64_t n) { gelu_f32<false>(x, nullptr, y, n); }
void gelu_backward_f32(const float* g, const float* x, float* dx, int64_t n) { gelu_f32<true>(x, g, dx, n); }

}  // namespace lucid::kernels
