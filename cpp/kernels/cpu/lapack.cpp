#include "kernels/cpu/lapack.h"

#include <vector>

// The Fortran entry points of scipy-openblas32 (32-bit integers, symbols prefixed with scipy_);
// declared here so that no other unit needs OpenBLAS's LAPACK headers.
extern "C" {
void scipy_sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void scipy_dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
}

namespace lucid::kernels {

namespace {

void getrf_call(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info) {
  scipy_sgetrf_(m, n, a, lda, ipiv, info);
}
void getrf_call(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info) {
  scipy_dgetrf_(m, n, a, lda, ipiv, info);
}

}  // namespace

template <class T>
int64_t getrf(int64_t m, int64_t n, T* a, int64_t* piv, T* work) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) work[j * m + i] = a[i * n + j];
  const int mi = int(m), ni = int(n), lda = int(m > 0 ? m : 1);
  const int64_t k = m < n ? m : n;
  std::vector<int> ip(size_t(k > 0 ? k : 1));
  int info = 0;
  getrf_call(&mi, &ni, work, &lda, ip.data(), &info);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) a[i * n + j] = work[j * m + i];
  for (int64_t i = 0; i < k; ++i) piv[i] = ip[size_t(i)];
  // NOTE: info < 0 would be an invalid argument, which the op's checks rule out.
  return info > 0 ? int64_t(info) : 0;
}

template int64_t getrf<float>(int64_t, int64_t, float*, int64_t*, float*);
template int64_t getrf<double>(int64_t, int64_t, double*, int64_t*, double*);

}  // namespace lucid::kernels
