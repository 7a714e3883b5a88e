#include "kernels/cpu/matmul.h"

#include <cblas.h>

namespace lucid::kernels {

int blas_num_threads() { return scipy_openblas_get_num_threads(); }

namespace {
CBLAS_TRANSPOSE op_of(MatLayout l) { return l.trans ? CblasTrans : CblasNoTrans; }
}  // namespace

template <>
void gemm<float>(int64_t m, int64_t n, int64_t k, const float* a, MatLayout la, const float* b, MatLayout lb,
                 float beta, float* c, int64_t ldc) {
  scipy_cblas_sgemm(CblasRowMajor, op_of(la), op_of(lb), blasint(m), blasint(n), blasint(k), 1.0f, a,
                    blasint(la.ld), b, blasint(lb.ld), beta, c, blasint(ldc));
}

template <>
void gemm<double>(int64_t m, int64_t n, int64_t k, const double* a, MatLayout la, const double* b, MatLayout lb,
                  double beta, double* c, int64_t ldc) {
  scipy_cblas_dgemm(CblasRowMajor, op_of(la), op_of(lb), blasint(m), blasint(n), blasint(k), 1.0, a,
                    blasint(la.ld), b, blasint(lb.ld), beta, c, blasint(ldc));
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
