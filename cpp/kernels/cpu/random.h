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

// Box-Muller in place over `blocks` blocks of 16 float32 uniforms (u1 = 1 - d[j], u2 = d[j + 8]),
// bit-identical to PyTorch's normal_fill_16_AVX2 (see kernels/cpu/random.cpp).
void normal_blocks16_f32(float* d, int64_t blocks, float mean, float std);

// PyTorch's normal_fill for contiguous tensors of >= 16 elements: uniforms first, then
// Box-Muller over blocks of 16 (u1 = 1 - x[j], u2 = x[j + 8]); a ragged tail redraws the last 16.
template <class T>
void normal_fill16(int64_t n, T* out, Generator& g, double mean, double std) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int digits = uniform_digits<T>();
  auto block = [&](T* d) {
    if constexpr (std::is_same_v<T, float>) {
      normal_blocks16_f32(d, 1, float(mean), float(std));
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
  if constexpr (std::is_same_v<T, float>) normal_blocks16_f32(out, n / 16, float(mean), float(std));
  else for (int64_t i = 0; i + 16 <= n; i += 16) block(out + i);
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
