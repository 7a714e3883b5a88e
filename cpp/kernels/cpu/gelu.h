// Exact GELU over contiguous float32 arrays, the float32 fast path of ops/unary.cpp's GeluOp:
// y = x Phi(x) and dx = g (Phi(x) + x phi(x)), computed by kernels::normal_cdf_pdf_f32 in double
// and rounded once. Compiled for baseline x86-64 and for AVX2+FMA (cpu_features.h); long arrays
// are shared among threads by blocks.
#pragma once
#include <cstdint>

namespace lucid::kernels {

void gelu_forward_f32(const float* x, float* y, int64_t n);
void gelu_backward_f32(const float* g, const float* x, float* dx, int64_t n);

}  // namespace lucid::kernels
