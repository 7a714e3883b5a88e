// Float32 row reductions over contiguous rows, the fast paths of sum/mean and argmax/argmin:
// each row body has an AVX-512 copy written with intrinsics and a generic one compiled for
// baseline x86-64 and for AVX2 (cpu_features.h picks), and the rows (or, for a few long rows,
// spans of one row) are shared among threads. Sums accumulate in double in both copies (they
// differ only in the order of the double adds); a row past 65536 elements is summed as fixed
// spans added in order, so a sum's bits do not depend on the thread count. Arg results are the
// same in both copies.
#pragma once
#include <cstdint>

namespace lucid::kernels {

// out[r] = (sum of row r in double) / div, for rows of n elements.
void sum_rows_f32(const float* x, float* out, int64_t rows, int64_t n, double div);

// out[o, j] = (sum over r of x[o, r, j] in double) / div, for x of shape [outer, red, inner]
// (inner > 1): a sum over leading dims, such as a bias gradient.
void sum_cols_f32(const float* x, float* out, int64_t outer, int64_t red, int64_t inner, double div);

// idx[r] = index of the first maximum (IsMax) or minimum of row r (NaN wins, as PyTorch); with
// vals non-null, vals[r] = that element. n >= 1.
template <bool IsMax>
void arg_rows_f32(const float* x, int64_t rows, int64_t n, int64_t* idx, float* vals);

}  // namespace lucid::kernels
