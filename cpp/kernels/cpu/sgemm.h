// float32 gemm for AVX-512 CPUs (x86-64-v4), used by gemm<float> (matmul.cpp) where it measured
// faster than OpenBLAS. C = op(A) op(B) + beta C on row-major operands laid out as MatLayout says;
// beta is 0 (C is only written, never read: it may hold NaN) or 1.
// BLIS-style: op(A) is packed into panels of MR rows and op(B) into panels of 32 columns, each
// k-major and 64-byte aligned, in scratch owned by the calling thread and reused across calls;
// a register-blocked micro-kernel multiplies one A panel by one B panel. With nt > 1 threads the
// tiles of C are split along M or N only (never K): every element of C is summed over k in one
// fixed order, so the result has the same bits for any thread count. Split along N (preferred),
// each thread packs all of op(A) and its own columns of op(B) and shares nothing; split along M,
// the threads pack op(B) together and meet at a barrier.
#pragma once
#include <cstdint>

#include "kernels/cpu/matmul.h"

namespace lucid::kernels {

// True when this CPU runs sgemm_avx512 (AVX-512 F/VL/DQ/BW, checked once per process).
bool sgemm_avx512_available();

// The product above on up to nt threads (fewer for small products; 1 inside a parallel region).
// m, n, k >= 0. Requires sgemm_avx512_available().
void sgemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, MatLayout la, const float* b, MatLayout lb,
                  float beta, float* c, int64_t ldc, int nt);

}  // namespace lucid::kernels
