// gemm on row-major operands: C = op(A) @ op(B) + beta * C, with op(X) = X or X^T stored with
// leading dimension ld (the distance between stored rows). float goes to the AVX-512 kernel of
// sgemm.h on the shapes where it measured faster (sgemm_wins in matmul.cpp), else, like double,
// to OpenBLAS (scipy_cblas_sgemm / dgemm); int64 is a plain loop (i-k-j order, rows of C and B
// streamed).
// m, n, k > 0 and every ld >= 1 (the op layer skips empty products). Large products split over
// the OpenMP pool in blocks, each one single-threaded BLAS call (core/threads.h); inside a
// parallel region the product runs whole on the calling thread.
#pragma once
#include <cstdint>

namespace lucid::kernels {

// How one operand is laid out: trans = stored transposed (column-major view), ld as above.
struct MatLayout {
  bool trans = false;
  int64_t ld = 1;
};

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, MatLayout la, const T* b, MatLayout lb, T beta, T* c,
          int64_t ldc);

// The threads OpenBLAS runs a large product on (1 unless OPENBLAS_NUM_THREADS says otherwise).
int blas_num_threads();

// The largest dimension or leading dimension BLAS accepts (32-bit blasint).
constexpr int64_t kBlasMaxDim = 2147483647;

}  // namespace lucid::kernels
