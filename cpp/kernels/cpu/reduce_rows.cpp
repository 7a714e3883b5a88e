#include "kernels/cpu/reduce_rows.h"

#include <omp.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "core/threads.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

namespace {

// Sum of a float32 row in double: 16 independent double lanes (4 AVX2 vectors), so the adds
// pipeline and the float -> double conversions vectorise; lanes combine pairwise at the end.
LUCID_ALWAYS_INLINE double sum_row_f32(const float* x, int64_t n) {
  constexpr int kLanes = 16;
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += double(x[i + j]);
  double tail = 0;
  for (; i < n; ++i) tail += double(x[i]);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
  return lane[0] + tail;
}

// argmax/argmin of float32 as a max over int32 keys that order like the floats, with -0 == +0
// (so ties between zeros keep the first) and every NaN above everything (NaN wins, as PyTorch);
// argmin negates the key. Integer max vectorises where a float compare with NaN checks does not.
template <bool IsMax>
LUCID_ALWAYS_INLINE int32_t arg_key_f32(float v) {
  const uint32_t b = f32_to_bits(v);
  const int32_t m = int32_t(b & 0x7fffffffu);
  const int32_t s = -int32_t(b >> 31);
  const int32_t k = (m ^ s) - s;  // sign-magnitude -> two's complement: -0 -> 0
  const int32_t nan = -int32_t(m > 0x7f800000);
  return ((IsMax ? k : -k) & ~nan) | (INT32_MAX & nan);
}

// The largest key in x[0, n) (n >= 1) and the first index holding it: blocks are reduced with a
// vectorised max, the first block that raised the running max is the one holding the first
// occurrence and is scanned again. One pass over the row plus one block.
struct ArgKey {
  int32_t key;
  int64_t index;
};
template <bool IsMax>
LUCID_ALWAYS_INLINE ArgKey arg_row_f32(const float* x, int64_t n) {
  constexpr int64_t kBlock = 256;
  int32_t best = INT32_MIN;
  int64_t at = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    int32_t m = INT32_MIN;
    for (int64_t i = b; i < e; ++i) m = std::max(m, arg_key_f32<IsMax>(x[i]));
    if (m > best) best = m, at = b;
  }
  while (arg_key_f32<IsMax>(x[at]) != best) ++at;
  return {best, at};
}

struct SumRows {
  static LUCID_ALWAYS_INLINE void run(const float* x, float* out, int64_t r0, int64_t r1, int64_t n, double div) {
    for (int64_t r = r0; r < r1; ++r) out[r] = float(sum_row_f32(x + r * n, n) / div);
  }
};
struct SumSpan {  // one partial sum of a long row
  static LUCID_ALWAYS_INLINE void run(const float* x, int64_t n, double* out) { *out = sum_row_f32(x, n); }
};
template <bool IsMax>
struct ArgRows {
  static LUCID_ALWAYS_INLINE void run(const float* x, int64_t r0, int64_t r1, int64_t n, int64_t* idx, float* vals) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i = arg_row_f32<IsMax>(x + r * n, n).index;
      idx[r] = i;
      if (vals) vals[r] = x[r * n + i];
    }
  }
};
template <bool IsMax>
struct ArgSpan {
  static LUCID_ALWAYS_INLINE void run(const float* x, int64_t n, ArgKey* out) {
    *out = arg_row_f32<IsMax>(x, n);
  }
};

// Threads for rows x n elements: none below 2 grains of work.
int row_threads(int64_t rows, int64_t n) {
  return int(std::max<int64_t>(1, std::min<int64_t>(num_threads(), rows * n / kParallelGrain)));
}

}  // namespace

void sum_rows_f32(const float* x, float* out, int64_t rows, int64_t n, double div) {
  const int nt = row_threads(rows, n);
  if (nt == 1) return run_best<SumRows, Isa::Avx2>(x, out, int64_t(0), rows, n, div);
  if (rows >= nt) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; ++t) run_best<SumRows, Isa::Avx2>(x, out, rows * t / nt, rows * (t + 1) / nt, n, div);
    return;
  }
  // Few long rows (a full sum): split each row, partial sums combined in order (the result
  // depends on the thread count only).
  std::vector<double> part(static_cast<size_t>(nt), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * n;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; ++t) run_best<SumSpan, Isa::Avx2>(p + n * t / nt, n * (t + 1) / nt - n * t / nt, &part[size_t(t)]);
    double s = 0;
    for (int t = 0; t < nt; ++t) s += part[size_t(t)];
    out[r] = float(s / div);
  }
}

// Index (and optionally value) of the first extremum of each contiguous float32 row (or of one
// long row split over threads); see arg_row_f32.
template <bool IsMax>
void arg_rows_f32(const float* x, int64_t rows, int64_t n, int64_t* idx, float* vals) {
  const int nt = row_threads(rows, n);
  if (nt == 1) return run_best<ArgRows<IsMax>, Isa::Avx2>(x, int64_t(0), rows, n, idx, vals);
  if (rows >= nt) {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; ++t) run_best<ArgRows<IsMax>, Isa::Avx2>(x, rows * t / nt, rows * (t + 1) / nt, n, idx, vals);
    return;
  }
  // Few long rows (the flattened tensor): split each row; the first chunk holding the largest
  // key holds the first occurrence.
  std::vector<ArgKey> part(static_cast<size_t>(nt));
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * n;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; ++t)
      run_best<ArgSpan<IsMax>, Isa::Avx2>(p + n * t / nt, n * (t + 1) / nt - n * t / nt, &part[size_t(t)]);
    int best = 0;
    for (int t = 1; t < nt; ++t)
      if (part[size_t(t)].key > part[size_t(best)].key) best = t;
    const int64_t i = n * best / nt + part[size_t(best)].index;
    idx[r] = i;
    if (vals) vals[r] = p[i];
  }
}
template void arg_rows_f32<true>(const float*, int64_t, int64_t, int64_t*, float*);
template void arg_rows_f32<false>(const float*, int64_t, int64_t, int64_t*, float*);

}  // namespace lucid::kernels
