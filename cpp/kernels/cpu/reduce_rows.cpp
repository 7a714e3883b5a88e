#include "kernels/cpu/reduce_rows.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "core/threads.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif

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
// acc[j] += x[r * inner + j] in double for rows r in [r0, r1) and columns j in [0, w): a tile of
// column sums (sum over a leading dim, a bias gradient), each column added in row order.
struct SumCols {
  static LUCID_ALWAYS_INLINE void run(const float* x, double* acc, int64_t r0, int64_t r1, int64_t inner,
                                      int64_t w) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = x + r * inner;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) acc[j] += double(row[j]);
    }
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

}  // namespace

#if LUCID_X86_DISPATCH
// x86-64-v4 (AVX-512) copies, written with intrinsics: 16 float lanes, masked loads for row tails.
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace rows_v4 {

// The zero-masked forms of the intrinsics: GCC 12's plain forms start from an "undefined" vector
// that -Wmaybe-uninitialized reports.
inline __m512d widen(__m256 v) { return _mm512_maskz_cvtps_pd(__mmask8(0xff), v); }
// Horizontal sums and extrema with __builtin_shufflevector (GCC 12's shuffle intrinsics trip
// -Wmaybe-uninitialized as well).
inline double hsum(__m512d a) {
  a += __builtin_shufflevector(a, a, 4, 5, 6, 7, 0, 1, 2, 3);
  a += __builtin_shufflevector(a, a, 2, 3, 0, 1, 6, 7, 4, 5);
  a += __builtin_shufflevector(a, a, 1, 0, 3, 2, 5, 4, 7, 6);
  return a[0];
}

// Sum in double: 8-float loads widened to 8 doubles (vcvtps2pd), four independent accumulators.
inline double sum_row(const float* x, int64_t n) {
  __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  // On long rows, the elements before the first 32-byte boundary first, so that no load below
  // splits a cache line (numpy buffers are often only 16-byte aligned; a split load costs two).
  int64_t i = n < 256 ? 0 : int64_t((32 - (reinterpret_cast<uintptr_t>(x) & 31)) & 31) / 4;
  if (i) a3 = widen(_mm256_maskz_loadu_ps(__mmask8((1u << i) - 1), x));
  for (; i + 32 <= n; i += 32) {
    // 2 KB ahead into L1: -6% on a 64x4096 sum (L2-resident), unchanged from memory.
    __builtin_prefetch(x + i + 512);
    __builtin_prefetch(x + i + 528);
    a0 = _mm512_add_pd(a0, widen(_mm256_loadu_ps(x + i)));
    a1 = _mm512_add_pd(a1, widen(_mm256_loadu_ps(x + i + 8)));
    a2 = _mm512_add_pd(a2, widen(_mm256_loadu_ps(x + i + 16)));
    a3 = _mm512_add_pd(a3, widen(_mm256_loadu_ps(x + i + 24)));
  }
  for (; i + 8 <= n; i += 8) a0 = _mm512_add_pd(a0, widen(_mm256_loadu_ps(x + i)));
  if (i < n) a1 = _mm512_add_pd(a1, widen(_mm256_maskz_loadu_ps(__mmask8((1u << (n - i)) - 1), x + i)));
  return hsum(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
}

// The first index of the largest (IsMax) or smallest element, NaN winning (the first NaN): per
// block of 512 a vectorised max (vmaxps(v, m) returns m when v is NaN, so NaN never enters it)
// and an "ordered" compare of pairs of vectors chained through a mask register, which loses a
// lane for good once a NaN passes (one compare per two vectors). The first block that raised the
// running extremum holds its first occurrence; one vector compare scan of it finds the index.
// -0 and +0 compare equal, so they tie as in arg_key_f32.
template <bool IsMax>
inline __m512 ext_ps(__m512 v, __m512 m) {
  return IsMax ? _mm512_maskz_max_ps(__mmask16(0xffff), v, m) : _mm512_maskz_min_ps(__mmask16(0xffff), v, m);
}
// The extremum of the 16 lanes (no NaN among them).
template <bool IsMax>
inline float hext(__m512 m) {
  m = ext_ps<IsMax>(m, __builtin_shufflevector(m, m, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  m = ext_ps<IsMax>(m, __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  m = ext_ps<IsMax>(m, __builtin_shufflevector(m, m, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  m = ext_ps<IsMax>(m, __builtin_shufflevector(m, m, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
  return m[0];
}
inline __mmask16 tail_mask(int64_t left) { return left >= 16 ? __mmask16(0xffff) : __mmask16((1u << left) - 1); }

template <bool IsMax>
inline int64_t arg_row(const float* x, int64_t n) {
  constexpr int64_t kBlock = 512;
  const float kFill = IsMax ? -__builtin_inff() : __builtin_inff();
  const __m512 fill = _mm512_set1_ps(kFill);
  float best = kFill;
  int64_t at = 0;
  // On long rows the first block also takes the elements before the first 64-byte boundary (one
  // masked load), so that the loads below never split a cache line (numpy buffers are often only
  // 16-byte aligned: split loads made a 1 MB argmax 1.5x slower). Short rows are not worth it.
  const int64_t head = n < 256 ? 0 : int64_t((64 - (reinterpret_cast<uintptr_t>(x) & 63)) & 63) / 4;
  for (int64_t b = 0, e; b < n; b = e) {
    e = std::min(n, (b ? b : head) + kBlock);
    __m512 m0 = fill, m1 = fill, m2 = fill, m3 = fill;
    __mmask16 ord0 = 0xffff, ord1 = 0xffff;  // lanes that saw no NaN
    int64_t i = b;
    if (b == 0 && head) {
      const __m512 v = _mm512_mask_loadu_ps(fill, tail_mask(head), x);
      m3 = ext_ps<IsMax>(v, m3);
      ord1 = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
      i = head;
    }
    for (; i + 64 <= e; i += 64) {
      // 2 KB ahead: -8% on a 1024x1024 argmax from memory, -12% on 64x4096 from L2.
      __builtin_prefetch(x + i + 512);
      __builtin_prefetch(x + i + 528);
      __builtin_prefetch(x + i + 544);
      __builtin_prefetch(x + i + 560);
      const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
      const __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
      m0 = ext_ps<IsMax>(v0, m0);
      m1 = ext_ps<IsMax>(v1, m1);
      m2 = ext_ps<IsMax>(v2, m2);
      m3 = ext_ps<IsMax>(v3, m3);
      ord0 = _mm512_mask_cmp_ps_mask(ord0, v0, v1, _CMP_ORD_Q);
      ord1 = _mm512_mask_cmp_ps_mask(ord1, v2, v3, _CMP_ORD_Q);
    }
    for (; i < e; i += 16) {  // fill lanes are +-inf: ordered, and never above the extremum
      const __m512 v = _mm512_mask_loadu_ps(fill, tail_mask(e - i), x + i);
      m0 = ext_ps<IsMax>(v, m0);
      ord0 = _mm512_mask_cmp_ps_mask(ord0, v, v, _CMP_ORD_Q);
    }
    if (__mmask16(ord0 & ord1) != 0xffff)
      for (int64_t j = b; j < e; ++j)
        if (x[j] != x[j]) return j;
    const float mb = hext<IsMax>(ext_ps<IsMax>(ext_ps<IsMax>(m0, m1), ext_ps<IsMax>(m2, m3)));
    if (IsMax ? mb > best : mb < best) best = mb, at = b;
  }
  const __m512 bv = _mm512_set1_ps(best);
  for (int64_t i = at;; i += 16) {  // best is in the row, so this returns within the block
    const __mmask16 k = tail_mask(n - i);
    const __mmask16 eq = _mm512_mask_cmp_ps_mask(k, _mm512_maskz_loadu_ps(k, x + i), bv, _CMP_EQ_OQ);
    if (eq) return i + __builtin_ctz(eq);
  }
}

// Short rows (kV4MinRow <= n < kGroupRowMax) eight at a time: one double accumulator per row over
// 8-element steps (the eight chains overlap), then a transposing add tree leaves the eight sums
// in one vector, divided and narrowed together: per row no horizontal sum and no scalar divide.
// Rows past `count` re-read row 0 and are dropped, so a row's bits do not depend on its group (nor
// on how rows are shared among threads).
constexpr int64_t kGroupRowMax = 256;
using D8 = double __attribute__((vector_size(64)));
inline D8 sum_step(D8 a, const float* p) { return a + (D8)widen(_mm256_loadu_ps(p)); }
inline D8 sum_tail(D8 a, __mmask8 m, const float* p) { return a + (D8)widen(_mm256_maskz_loadu_ps(m, p)); }
inline D8 fold_pairs(D8 a, D8 b) {  // lanes 2j, 2j+1: a's and b's (2j) + (2j+1)
  return __builtin_shufflevector(a, b, 0, 8, 2, 10, 4, 12, 6, 14) + __builtin_shufflevector(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
}
inline D8 fold_quads(D8 a, D8 b) {
  return __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13) + __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
}
inline D8 fold_halves(D8 a, D8 b) {
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11) + __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15);
}
inline void sum_8rows(const float* x, int64_t n, int count, float* out, double div) {
  const auto row = [&](int r) { return x + (r < count ? r : 0) * n; };
  const float *p0 = row(0), *p1 = row(1), *p2 = row(2), *p3 = row(3), *p4 = row(4), *p5 = row(5), *p6 = row(6),
              *p7 = row(7);
  D8 a0{}, a1{}, a2{}, a3{}, a4{}, a5{}, a6{}, a7{};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 = sum_step(a0, p0 + i), a1 = sum_step(a1, p1 + i), a2 = sum_step(a2, p2 + i), a3 = sum_step(a3, p3 + i);
    a4 = sum_step(a4, p4 + i), a5 = sum_step(a5, p5 + i), a6 = sum_step(a6, p6 + i), a7 = sum_step(a7, p7 + i);
  }
  if (i < n) {
    const __mmask8 m = __mmask8((1u << (n - i)) - 1);
    a0 = sum_tail(a0, m, p0 + i), a1 = sum_tail(a1, m, p1 + i), a2 = sum_tail(a2, m, p2 + i), a3 = sum_tail(a3, m, p3 + i);
    a4 = sum_tail(a4, m, p4 + i), a5 = sum_tail(a5, m, p5 + i), a6 = sum_tail(a6, m, p6 + i), a7 = sum_tail(a7, m, p7 + i);
  }
  // Row r's sum in lane r.
  const D8 d = fold_halves(fold_quads(fold_pairs(a0, a1), fold_pairs(a2, a3)), fold_quads(fold_pairs(a4, a5), fold_pairs(a6, a7)));
  const __m256 f = _mm512_maskz_cvtpd_ps(__mmask8(0xff), (__m512d)(d / div));
  _mm256_mask_storeu_ps(out, __mmask8((1u << count) - 1), f);
}

void sum_rows(const float* x, float* out, int64_t r0, int64_t r1, int64_t n, double div) {
  if (n < kGroupRowMax) {
    for (int64_t r = r0; r < r1; r += 8) sum_8rows(x + r * n, n, int(std::min<int64_t>(8, r1 - r)), out + r, div);
    return;
  }
  for (int64_t r = r0; r < r1; ++r) out[r] = float(sum_row(x + r * n, n) / div);
}
void sum_span(const float* x, int64_t n, double* out) { *out = sum_row(x, n); }
template <bool IsMax>
void arg_rows(const float* x, int64_t r0, int64_t r1, int64_t n, int64_t* idx, float* vals) {
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t i = arg_row<IsMax>(x + r * n, n);
    idx[r] = i;
    if (vals) vals[r] = x[r * n + i];
  }
}

}  // namespace rows_v4
#pragma GCC pop_options
#endif

namespace {

// The row bodies in the best copy for this CPU: AVX-512 above, else run_best's AVX2 copy.
#if LUCID_X86_DISPATCH
bool use_v4() { return cpu_level() == CpuLevel::V4; }
// Rows shorter than this take the AVX2 copy: for a few dozen elements the 512-bit setup costs
// more than it saves (a 4x4 sum: +35 ns).
constexpr int64_t kV4MinRow = 64;
#endif

void sum_rows_body(const float* x, float* out, int64_t r0, int64_t r1, int64_t n, double div) {
#if LUCID_X86_DISPATCH
  if (n >= kV4MinRow && use_v4()) return rows_v4::sum_rows(x, out, r0, r1, n, div);
#endif
  run_best<SumRows, Isa::Avx2>(x, out, r0, r1, n, div);
}
void sum_span_body(const float* x, int64_t n, double* out) {
#if LUCID_X86_DISPATCH
  if (n >= kV4MinRow && use_v4()) return rows_v4::sum_span(x, n, out);
#endif
  run_best<SumSpan, Isa::Avx2>(x, n, out);
}
template <bool IsMax>
void arg_rows_body(const float* x, int64_t r0, int64_t r1, int64_t n, int64_t* idx, float* vals) {
#if LUCID_X86_DISPATCH
  if (use_v4()) return rows_v4::arg_rows<IsMax>(x, r0, r1, n, idx, vals);
#endif
  run_best<ArgRows<IsMax>, Isa::Avx2>(x, r0, r1, n, idx, vals);
}
template <bool IsMax>
void arg_span_body(const float* x, int64_t n, ArgKey* out) {
#if LUCID_X86_DISPATCH
  if (use_v4()) {
    const int64_t i = rows_v4::arg_row<IsMax>(x, n);
    *out = {arg_key_f32<IsMax>(x[i]), i};
    return;
  }
#endif
  run_best<ArgSpan<IsMax>, Isa::Avx2>(x, n, out);
}

// Threads for rows x n elements, one per `grain`. These bodies stream 30-60 GB/s on one core,
// so a thread pays off only on large inputs: with the generic kParallelGrain a 1 MB argmax spent
// longer entering the parallel region (waiting for a busy second core) than reducing.
constexpr int64_t kRowGrain = int64_t(1) << 19;
// Sums convert every element to double (~0.07 ns per element on one core, half the arg rows'
// speed), so a second thread pays from 256k elements (a 64x4096 sum: 17 us on one thread).
constexpr int64_t kSumGrain = int64_t(1) << 17;
int row_threads(int64_t rows, int64_t n, int64_t grain) {
  return int(std::max<int64_t>(1, std::min<int64_t>(num_threads(), rows * n / grain)));
}

// Rows longer than this are summed as consecutive spans of this many elements whose double
// partials are added in order, whatever the thread count: a row's sum is the same bits on any
// number of threads.
constexpr int64_t kSumSpan = int64_t(1) << 16;

}  // namespace

void sum_rows_f32(const float* x, float* out, int64_t rows, int64_t n, double div) {
  const int nt = row_threads(rows, n, kSumGrain);
  if (n <= kSumSpan) {
    if (nt == 1) return sum_rows_body(x, out, 0, rows, n, div);
    parallel_threads(nt, [&](int t) { sum_rows_body(x, out, rows * t / nt, rows * (t + 1) / nt, n, div); });
    return;
  }
  // Long rows (a full sum among them): every span's partial, spans shared among threads, then
  // each row's partials added in order.
  const int64_t spans = (n + kSumSpan - 1) / kSumSpan, items = rows * spans;
  std::vector<double> part(static_cast<size_t>(items));
  const auto span = [&](int64_t i) {
    const int64_t r = i / spans, j0 = i % spans * kSumSpan;
    sum_span_body(x + r * n + j0, std::min(kSumSpan, n - j0), &part[size_t(i)]);
  };
  if (nt == 1) {
    for (int64_t i = 0; i < items; ++i) span(i);
  } else {
    parallel_threads(nt, [&](int t) {
      for (int64_t i = items * t / nt; i < items * (t + 1) / nt; ++i) span(i);
    });
  }
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t j = 0; j < spans; ++j) s += part[size_t(r * spans + j)];
    out[r] = float(s / div);
  }
}

void sum_cols_f32(const float* x, float* out, int64_t outer, int64_t red, int64_t inner, double div) {
  constexpr int64_t kTile = 1024;  // columns per job: 8 KB of double partials
  constexpr int kPieces = 8;
  const int64_t tiles = (inner + kTile - 1) / kTile, jobs = outer * tiles, tw = std::min(inner, kTile);
  const int64_t total = outer * red * inner;
  const int nt = threads_for_work(total);
  // (x, out, width) of one job: columns [j0, j0 + w) of block o.
  auto job = [&](int64_t i, const float*& xs, float*& os, int64_t& w) {
    const int64_t o = i / tiles, j0 = i % tiles * kTile;
    xs = x + o * red * inner + j0, os = out + o * inner + j0, w = std::min(kTile, inner - j0);
  };
  // Few jobs over many rows: kPieces partial tiles along the rows, added in order. As in
  // reduce_dense, the split depends on the shape only (the same bits on any thread count).
  if (total >= 2 * kParallelGrain && red >= 2 * kPieces && jobs < kPieces) {
    std::vector<double> part(size_t(kPieces * tw));
    for (int64_t i = 0; i < jobs; ++i) {
      const float* xs;
      float* os;
      int64_t w;
      job(i, xs, os, w);
      std::fill(part.begin(), part.end(), 0.0);
      parallel_chunks(std::min(nt, kPieces), kPieces, [&](int64_t p0, int64_t p1) {
        for (int64_t q = p0; q < p1; ++q)
          run_best<SumCols, Isa::Avx512>(xs, part.data() + q * tw, red * q / kPieces, red * (q + 1) / kPieces, inner, w);
      });
      for (int64_t j = 0; j < w; ++j) {
        double s = part[size_t(j)];
        for (int q = 1; q < kPieces; ++q) s += part[size_t(q * tw + j)];
        os[j] = float(s / div);
      }
    }
    return;
  }
  parallel_chunks(std::min<int64_t>(nt, jobs), jobs, [&](int64_t i0, int64_t i1) {
    std::vector<double> acc(static_cast<size_t>(tw));
    for (int64_t i = i0; i < i1; ++i) {
      const float* xs;
      float* os;
      int64_t w;
      job(i, xs, os, w);
      std::fill(acc.begin(), acc.end(), 0.0);
      run_best<SumCols, Isa::Avx512>(xs, acc.data(), int64_t(0), red, inner, w);
      for (int64_t j = 0; j < w; ++j) os[j] = float(acc[size_t(j)] / div);
    }
  });
}

// Index (and optionally value) of the first extremum of each contiguous float32 row (or of one
// long row split over threads); see arg_row_f32.
template <bool IsMax>
void arg_rows_f32(const float* x, int64_t rows, int64_t n, int64_t* idx, float* vals) {
  const int nt = row_threads(rows, n, kRowGrain);
  if (nt == 1) return arg_rows_body<IsMax>(x, 0, rows, n, idx, vals);
  if (rows >= nt) {
    parallel_threads(nt, [&](int t) { arg_rows_body<IsMax>(x, rows * t / nt, rows * (t + 1) / nt, n, idx, vals); });
    return;
  }
  // Few long rows (the flattened tensor): split each row; the first chunk holding the largest
  // key holds the first occurrence.
  std::vector<ArgKey> part(static_cast<size_t>(nt));
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * n;
    parallel_threads(nt, [&](int t) {
      arg_span_body<IsMax>(p + n * t / nt, n * (t + 1) / nt - n * t / nt, &part[size_t(t)]);
    });
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
