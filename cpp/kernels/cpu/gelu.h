// Exact GELU over contiguous float32 arrays, the float32 fast path of ops/unary.cpp's GeluOp:
// y = x Phi(x) and dx = g (Phi(x) + x phi(x)). On x86-64-v4 (AVX-512, 16 lanes) and v3 (AVX2 +
// FMA, 8 lanes) one float32 pass per element (gelu_vec.inc: Phi from a piecewise Mills-ratio
// polynomial and an exact-argument exp, within 2 ulp of the float64 result); elsewhere
// kernels::normal_cdf_pdf_f32 in double, rounded once. Long arrays are shared among threads by
// blocks; short ones stay on the calling thread.
#pragma once
#include <cstdint>

namespace lucid::kernels {

void gelu_forward_f32(const float* x, float* y, int64_t n);
void gelu_backward_f32(const float* g, const float* x, float* dx, int64_t n);

}  // namespace lucid::kernels
