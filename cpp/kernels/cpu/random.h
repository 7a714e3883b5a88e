// Random fills over contiguous buffers, drawing from a Generator in PyTorch's order so a seeded
// program gets PyTorch's numbers. The caller holds the generator's lock. uniform_/normal_ on
// half types fill a float buffer that ops/random.cpp rounds, as PyTorch does.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/dtype.h"
#include "core/generator.h"
#include "kernels/cpu/elementwise.h"

namespace lucid::kernels {

// out[i] = -log1p(-u[i]) for u[i] in [0, 1) (out may alias u): the exponential variate of a
// uniform, vectorised, within 1 ulp of libm's value, so equal to it once rounded to float32 but
// for about one value in 2^29 (none in 5e7 draws checked against PyTorch). kernels/cpu/random.cpp.
void neg_log1m(const double* u, double* out, int64_t n);

// In place, u[i] = -log1p(-u[i]) as neg_log1m for results rounded to float32 or narrower, and
// with libm's log1p itself for float64 results (where the last bit shows).
template <class T>
void neg_log1m_as(double* u, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    for (int64_t i = 0; i < n; ++i) u[i] = -std::log1p(-u[i]);
  } else {
    neg_log1m(u, u, n);
  }
}

template <class T> constexpr int uniform_digits() {
  if constexpr (std::is_same_v<T, double>) return 53;
  else if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else return 53;
}

// U[from, to): bounds rounded to T, their difference taken in T's accumulation type, then
// x * (to - from) + from in double (float for the half types), PyTorch's dist_acctype.
template <class T>
void uniform_fill(int64_t n, T* out, Generator& g, double from, double to) {
  using A = acc_t<T>;
  using D = std::conditional_t<std::is_same_v<A, float> && !std::is_same_v<T, float>, float, double>;
  const A lo = A(T(from)), hi = A(T(to));
  const D span = D(A(hi - lo));
  for (int64_t i = 0; i < n; ++i) out[i] = T(A(D(g.uniform(uniform_digits<T>())) * span + D(lo)));
}

// NOTE: PyTorch's x86 builds run float32 normal_ through normal_fill_16_AVX2, whose log and
// sincos are the Cephes polynomials of avx_mathfun.h (not libm), theta = float(2 pi) * u2 in float
// and an FMA for std * n + mean. That file is compiled with -mfma, so the compiler fuses each
// multiply feeding an add into an FMA (the first product in statement order where two feed one
// add). The scalar ports below repeat those float operations one lane at a time, with the same
// fusions as explicit fma (this build does not contract: no -march), so float32 randn/normal_ is
// bit-identical to PyTorch's. Double and the half types keep PyTorch's scalar normal_fill.
namespace cephes {
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
inline uint32_t bits(float x) { uint32_t u; std::memcpy(&u, &x, 4); return u; }
inline float from_bits(uint32_t u) { float x; std::memcpy(&x, &u, 4); return x; }

// avx_mathfun's log256_ps for one lane (u1 in (0, 1], so the invalid-input mask never fires).
inline float log_ps(float x) {
  x = std::max(x, from_bits(0x00800000u));  // min_norm_pos
  int32_t e_i = int32_t(bits(x) >> 23);
  x = from_bits((bits(x) & ~0x7f800000u) | bits(0.5f));
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
  uint32_t sign_sin = bits(x) & 0x80000000u;
  x = from_bits(bits(x) & 0x7fffffffu);
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
  *s = from_bits(bits(poly_cos ? 0.0f + ys : yc + 0.0f) ^ sign_sin);
  *c = from_bits(bits(poly_cos ? yc + 0.0f : 0.0f + ys) ^ sign_cos);
}
}  // namespace cephes

// PyTorch's normal_fill for contiguous tensors of >= 16 elements: uniforms first, then
// Box-Muller over blocks of 16 (u1 = 1 - x[j], u2 = x[j + 8]); a ragged tail redraws the last 16.
template <class T>
void normal_fill16(int64_t n, T* out, Generator& g, double mean, double std) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int digits = uniform_digits<T>();
  auto block = [&](T* d) {
    if constexpr (std::is_same_v<T, float>) {
      const float two_pi = float(2.0 * 3.14159265358979323846), fm = float(mean), fs = float(std);
      for (int j = 0; j < 8; ++j) {
        const float u1 = 1.0f - d[j], u2 = d[j + 8];
        const float radius = std::sqrt(-2.0f * cephes::log_ps(u1));
        float sn, cs;
        cephes::sincos_ps(two_pi * u2, &sn, &cs);
        d[j] = std::fma(radius * cs, fs, fm);
        d[j + 8] = std::fma(radius * sn, fs, fm);
      }
    } else {
      for (int j = 0; j < 8; ++j) {
        const A u1 = A(1) - A(d[j]), u2 = A(d[j + 8]);
        const A radius = std::sqrt(A(-2) * std::log(u1));
        const A theta = A(2.0 * 3.14159265358979323846 * double(u2));
        d[j] = T(radius * std::cos(theta) * A(std) + A(mean));
        d[j + 8] = T(radius * std::sin(theta) * A(std) + A(mean));
      }
    }
  };
  for (int64_t i = 0; i < n; ++i) out[i] = T(A(g.uniform(digits)));
  for (int64_t i = 0; i + 16 <= n; i += 16) block(out + i);
  if (n % 16 != 0) {
    T* tail = out + n - 16;
    for (int j = 0; j < 16; ++j) tail[j] = T(A(g.uniform(digits)));
    block(tail);
  }
}

// One normal value per element from the cached double sampler (small or strided tensors).
template <class T>
void normal_serial(int64_t n, T* out, Generator& g, double mean, double std) {
  for (int64_t i = 0; i < n; ++i) out[i] = convert<T>(g.normal() * std + mean);
}

// Integers uniform in [lo, lo + range): one 32-bit draw per value unless range needs 64.
template <class T>
void randint_fill(int64_t n, T* out, Generator& g, int64_t lo, uint64_t range) {
  if (range >= (uint64_t(1) << 32)) {
    for (int64_t i = 0; i < n; ++i) out[i] = convert<T>(int64_t(g.random64() % range + uint64_t(lo)));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = convert<T>(int64_t(uint64_t(g.random()) % range + uint64_t(lo)));
  }
}

// out[i] = (U[0,1) < p) with a 53-bit uniform (PyTorch's bernoulli_ with a scalar p).
template <class T>
void bernoulli_fill(int64_t n, T* out, Generator& g, double p) {
  for (int64_t i = 0; i < n; ++i) out[i] = convert<T>(g.uniform_double() < p ? 1.0 : 0.0);
}

// -log(1 - U) / lambda with a 53-bit uniform (PyTorch's exponential_).
template <class T>
void exponential_fill(int64_t n, T* out, Generator& g, double lambda) {
  constexpr int64_t kBlock = 1024;
  double u[kBlock];
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    g.uniform_doubles(u, m);
    neg_log1m_as<T>(u, m);
    for (int64_t i = 0; i < m; ++i) out[i0 + i] = convert<T>(-1.0 / lambda * -u[i]);
  }
}

}  // namespace lucid::kernels
