#include "kernels/cpu/gelu.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

namespace gelu_detail {

// Per-interval coefficients of h(a) = Phi(-a) exp(a^2 / 2) (Mills ratio / sqrt(2 pi)) on
// [k/2, (k+1)/2), as a polynomial in w = a - (k + 1/2) / 2: row 0 and 1 the constant term split
// hi + lo, rows 2..7 the coefficients of w..w^6. Weighted least squares for relative error on 120
// Chebyshev nodes per interval, in 40-digit arithmetic: 0.03 ulp before the float rounding.
// Entries 0, 30 and 31 repeat their neighbours (lanes there take the other branch or are capped).
alignas(64) inline constexpr float kMillsTable[8][32] = {
    {0.414032102f, 0.30023247f, 0.230760321f, 0.185231671f, 0.153651938f, 0.130724728f, 0.113452062f, 0.100039206f, 0.0893593207f, 0.0806754008f, 0.073488228f, 0.0674492344f, 0.0623084866f, 0.0578826331f, 0.0540343598f, 0.0506589822f, 0.0476753898f, 0.0450198315f, 0.0426415503f, 0.0404996499f, 0.038560845f, 0.0367977731f, 0.0351877399f, 0.0337117724f, 0.0323538966f, 0.03110056f, 0.0299402028f, 0.0288628954f, 0.0278600696f, 0.0269242916f, 0.0269242916f, 0.0269242916f},
    {1.57118618e-09f, -7.63894192e-09f, 2.98815278e-10f, -6.05500272e-09f, -4.1726736e-10f, 5.99372774e-09f, 1.18695484e-10f, 3.19030136e-09f, -2.08046913e-09f, -1.62099023e-09f, 2.82964674e-09f, -3.07455972e-09f, 3.57317342e-10f, -1.33633604e-09f, -3.43895828e-10f, 8.808302e-11f, 9.30055588e-10f, 1.49285362e-09f, -8.58398408e-10f, 3.63446551e-10f, 1.28105426e-09f, 1.03444919e-10f, -1.03917186e-09f, 2.35241167e-12f, -4.81259144e-10f, 6.11886097e-10f, -5.38726952e-10f, -8.26370805e-10f, -4.36116115e-10f, 7.01265768e-10f, 7.01265768e-10f, 7.01265768e-10f},
    {-0.295434296f, -0.173767954f, -0.110491887f, -0.0747868717f, -0.0532254204f, -0.0394492634f, -0.030223079f, -0.0237952452f, -0.0191651769f, -0.0157341342f, -0.0131290685f, -0.0111092003f, -0.00951423682f, -0.00823451672f, -0.00719317468f, -0.00633516721f, -0.00562030682f, -0.00501874182f, -0.00450794818f, -0.0040706899f, -0.00369360647f, -0.00336621865f, -0.00308021856f, -0.00282895449f, -0.00260705245f, -0.0024101329f, -0.00223460002f, -0.00207747938f, -0.00193629414f, -0.00180896861f, -0.00180896861f, -0.00180896861f},
    {0.170086712f, 0.0849532411f, 0.0463227332f, 0.0271773227f, 0.01694737f, 0.0111196321f, 0.00761352852f, 0.00540352194f, 0.00395365991f, 0.00296913064f, 0.00228031073f, 0.00178566528f, 0.00142225216f, 0.00114982342f, 0.000941921491f, 0.000780717877f, 0.000653929368f, 0.000552921847f, 0.000471515028f, 0.000405211758f, 0.000350690039f, 0.000305461959f, 0.0002676406f, 0.000235778338f, 0.000208752361f, 0.000185683326f, 0.000165876059f, 0.00014877638f, 0.000133938855f, 0.000121002886f, 0.000121002886f, 0.000121002886f},
    {-0.0842975229f, -0.0366824307f, -0.017528886f, -0.00907530822f, -0.00503120106f, -0.00295672566f, -0.00182635628f, -0.00117733935f, -0.000787370955f, -0.000543586444f, -0.000385811349f, -0.000280541077f, -0.00020838686f, -0.000157735791f, -0.000121414567f, -9.48678862e-05f, -7.51298285e-05f, -6.02252039e-05f, -4.88113474e-05f, -3.99583696e-05f, -3.30111434e-05f, -2.75008642e-05f, -2.30871829e-05f, -1.95197099e-05f, -1.66119735e-05f, -1.42235094e-05f, -1.22473912e-05f, -1.06014159e-05f, -9.22180971e-06f, -8.05866603e-06f, -8.05866603e-06f, -8.05866603e-06f},
    {0.037253648f, 0.0143601308f, 0.00610273005f, 0.00282378891f, 0.00140674482f, 0.000747135666f, 0.000419455493f, 0.000247118354f, 0.000151829736f, 9.67716915e-05f, 6.36991099e-05f, 4.31378139e-05f, 2.99581097e-05f, 2.12764335e-05f, 1.54162772e-05f, 1.13728147e-05f, 8.52698849e-06f, 6.48776768e-06f, 5.00247052e-06f, 3.90439118e-06f, 3.08143422e-06f, 2.45689625e-06f, 1.97744112e-06f, 1.60542561e-06f, 1.31391482e-06f, 1.08338804e-06f, 8.99529368e-07f, 7.51722951e-07f, 6.32015144e-07f, 5.34388903e-07f, 5.34388903e-07f, 5.34388903e-07f},
    {-0.0152118504f, -0.00524369068f, -0.00199943525f, -0.000833445694f, -0.000375737494f, -0.000181451032f, -9.30737151e-05f, -5.03364208e-05f, -2.85200185e-05f, -1.68359038e-05f, -1.03058319e-05f, -6.51505798e-06f, -4.23854681e-06f, -2.82919746e-06f, -1.93249707e-06f, -1.34770869e-06f, -9.57711791e-07f, -6.92283209e-07f, -5.08257472e-07f, -3.78490199e-07f, -2.85551067e-07f, -2.18030181e-07f, -1.6832503e-07f, -1.31286157e-07f, -1.03372216e-07f, -8.21131394e-08f, -6.57632739e-08f, -5.30736806e-08f, -4.31405098e-08f, -3.5302584e-08f, -3.5302584e-08f, -3.5302584e-08f},
    {0.0056202258f, 0.00175627565f, 0.000607995025f, 0.00023065033f, 9.49232708e-05f, 4.19919561e-05f, 1.98041726e-05f, 9.88492502e-06f, 5.18833758e-06f, 2.84763155e-06f, 1.62635763e-06f, 9.62447189e-07f, 5.87974625e-07f, 3.69624871e-07f, 2.38431568e-07f, 1.57434144e-07f, 1.06177225e-07f, 7.30026954e-08f, 5.10853866e-08f, 3.63298511e-08f, 2.62223079e-08f, 1.91872296e-08f, 1.42179086e-08f, 1.06594893e-08f, 8.07887179e-09f, 6.18516083e-09f, 4.78014783e-09f, 3.72694986e-09f, 2.92984215e-09f, 2.32108777e-09f, 2.32108777e-09f, 2.32108777e-09f},
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
inline F min_nan(F c, F a) { return (F)_mm512_maskz_min_ps(__mmask16(0xffff), (__m512)c, (__m512)a); }  // a if either is NaN
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
inline F min_nan(F c, F a) { return (F)_mm256_min_ps((__m256)c, (__m256)a); }  // a if either is NaN
// 2^nf in two factors (nf reaches -160, below the smallest normal exponent); 0 below -149.5.
inline F scale_pow2(F y, F nf) {
  const I n = __builtin_convertvector(nf, I), n1 = n >> 1, n2 = n - n1;
  const F s = y * (F)((n1 + 127) << 23) * (F)((n2 + 127) << 23);
  return (F)((I)s & ~(I)(nf < -151.0f));
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
