#include "kernels/cpu/matmul.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "core/threads.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/sgemm.h"

namespace lucid::kernels {

int blas_num_threads() { return scipy_openblas_get_num_threads(); }

namespace {
CBLAS_TRANSPOSE op_of(MatLayout l) { return l.trans ? CblasTrans : CblasNoTrans; }

void blas(int64_t m, int64_t n, int64_t k, const float* a, MatLayout la, const float* b, MatLayout lb, float beta,
          float* c, int64_t ldc) {
  scipy_cblas_sgemm(CblasRowMajor, op_of(la), op_of(lb), blasint(m), blasint(n), blasint(k), 1.0f, a,
                    blasint(la.ld), b, blasint(lb.ld), beta, c, blasint(ldc));
}

void blas(int64_t m, int64_t n, int64_t k, const double* a, MatLayout la, const double* b, MatLayout lb,
          double beta, double* c, int64_t ldc) {
  scipy_cblas_dgemm(CblasRowMajor, op_of(la), op_of(lb), blasint(m), blasint(n), blasint(k), 1.0, a,
                    blasint(la.ld), b, blasint(lb.ld), beta, c, blasint(ldc));
}

// Multiply-adds per thread below which a product stays whole on the calling thread: a parallel
// region costs a few microseconds, a 64x64x64 product about ten.
constexpr int64_t kGemmGrain = int64_t(1) << 18;

// NOTE: OpenBLAS runs single-threaded here (pylucid/__init__.py sets OPENBLAS_NUM_THREADS=1 unless
// the user chose a count): its pthread pool spin-waits and fights OpenMP's workers for the cores.
// Large products are split instead over the OpenMP pool, in row blocks of C (op(A)'s rows) or,
// when C is wide and short, column blocks (op(B)'s columns); block edges are multiples of 16 so
// every block keeps the BLAS micro-kernel's full tiles. Each block is one serial BLAS call.
template <class T>
void split_gemm(int64_t m, int64_t n, int64_t k, const T* a, MatLayout la, const T* b, MatLayout lb, T beta, T* c,
                int64_t ldc) {
  int nt = blas_owns_threads() || omp_in_parallel() ? 1 : num_threads();
  nt = int(std::min<int64_t>(nt, m * n * k / kGemmGrain));
  const bool by_rows = m >= n;
  const int64_t len = by_rows ? m : n;
  nt = int(std::min<int64_t>(nt, (len + 15) / 16));
  if (nt <= 1) return blas(m, n, k, a, la, b, lb, beta, c, ldc);
  const int64_t tiles = (len + 15) / 16;
  parallel_threads(nt, [&](int t) {
    const int64_t i0 = std::min(len, tiles * t / nt * 16), i1 = std::min(len, tiles * (t + 1) / nt * 16);
    if (i1 <= i0) return;
    if (by_rows)  // rows i0..i1 of op(A): columns of a stored-transposed A
      blas(i1 - i0, n, k, la.trans ? a + i0 : a + i0 * la.ld, la, b, lb, beta, c + i0 * ldc, ldc);
    else  // columns i0..i1 of op(B): rows of a stored-transposed B
      blas(m, i1 - i0, k, a, la, lb.trans ? b + i0 * lb.ld : b + i0, lb, beta, c + i0, ldc);
  });
}
}  // namespace

// Where the AVX-512 kernel (sgemm.cpp) measured faster than OpenBLAS (1.1-1.5x on one thread on
// the training-step shapes of an MLP, 16-1024 rows): at least 32 rows (10 measured 0.77x; 16-31
// won too, but moved the rounding of a small U-Net's 16-channel convolutions enough that its
// compat program's IoU left PyTorch's by a pixel),
// columns that fill its 32-wide panels to within 25% (n = 10 or 40: 0.8x), all of op(B) in one
// packed block (k <= 1024, k n <= 2^18 floats; 64x1024x576 measured 0.96x), and products up to
// 2^26 multiply-adds (larger ones were not measured on two threads).
bool sgemm_wins(int64_t m, int64_t n, int64_t k) {
  return m >= 32 && (n + 31) / 32 * 32 * 4 <= n * 5 && k <= 1024 && n * k <= (int64_t(1) << 18) &&
         m * n * k <= (int64_t(1) << 26) && sgemm_avx512_available();
}

template <>
void gemm<float>(int64_t m, int64_t n, int64_t k, const float* a, MatLayout la, const float* b, MatLayout lb,
                 float beta, float* c, int64_t ldc) {
  if (sgemm_wins(m, n, k))
    return sgemm_avx512(m, n, k, a, la, b, lb, beta, c, ldc, omp_in_parallel() ? 1 : num_threads());
  split_gemm<float>(m, n, k, a, la, b, lb, beta, c, ldc);
}

template <>
void gemm<double>(int64_t m, int64_t n, int64_t k, const double* a, MatLayout la, const double* b, MatLayout lb,
                  double beta, double* c, int64_t ldc) {
  split_gemm<double>(m, n, k, a, la, b, lb, beta, c, ldc);
}

template <>
void gemm<int64_t>(int64_t m, int64_t n, int64_t k, const int64_t* a, MatLayout la, const int64_t* b,
                   MatLayout lb, int64_t beta, int64_t* c, int64_t ldc) {
  // Element (i, j) of op(X) sits at i * ld + j when stored as is, j * ld + i when transposed.
  // Products wrap on overflow (as PyTorch's integer matmul), computed unsigned to stay defined.
  using U = uint64_t;
  const int64_t ars = la.trans ? 1 : la.ld, acs = la.trans ? la.ld : 1;
  const int64_t brs = lb.trans ? 1 : lb.ld, bcs = lb.trans ? lb.ld : 1;
  for (int64_t i = 0; i < m; ++i) {
    int64_t* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) ci[j] = beta == 0 ? 0 : int64_t(U(beta) * U(ci[j]));
    for (int64_t p = 0; p < k; ++p) {
      const U aip = U(a[i * ars + p * acs]);
      if (aip == 0) continue;
      const int64_t* bp = b + p * brs;
      if (bcs == 1)
        for (int64_t j = 0; j < n; ++j) ci[j] = int64_t(U(ci[j]) + aip * U(bp[j]));
      else
        for (int64_t j = 0; j < n; ++j) ci[j] = int64_t(U(ci[j]) + aip * U(bp[j * bcs]));
    }
  }
}

}  // namespace lucid::kernels
