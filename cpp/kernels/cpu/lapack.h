// LAPACK's LU factorization with partial pivoting (getrf, from the bundled OpenBLAS) of one
// row-major m x n matrix, in place: P^T A = L U with L unit lower (below the diagonal) and U upper
// (on and above it), piv the k = min(m, n) row swaps, 1-based and applied in order. Returns info:
// 0, or the 1-based index of the first zero on U's diagonal (the factorization still completes).
// work holds m * n elements: LAPACK is column-major, so the matrix is transposed through it.
#pragma once
#include <cstdint>

namespace lucid::kernels {

template <class T>
int64_t getrf(int64_t m, int64_t n, T* a, int64_t* piv, T* work);

// The largest dimension LAPACK's 32-bit integers take.
constexpr int64_t kLapackMaxDim = 2147483647;

}  // namespace lucid::kernels
