// NOTE: GCC if-converts the float compares of the row loops (and so vectorises them) only when
// it may assume FP operations do not trap; nothing here reads FP exception flags.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include "kernels/cpu/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/threads.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif

namespace lucid::kernels {

namespace {

// The bodies (attention_vec.inc) are compiled three times: for AVX-512 (8 x 32-float register
// tiles in zmm), for AVX2 + FMA (4 x 16 in ymm) and for baseline x86-64 (4 x 8 in xmm); the CPU
// check picks one per call (cpu_features.h). Each copy brings its masked partial-vector access
// and scale_pow2(y, nf) = y 2^nf on float lanes.

#if LUCID_X86_DISPATCH
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace attn_avx512 {
constexpr int kBytes = 64, kMR = 8;
template <class V, class T>
inline V load_part(const T* p, int n) {
  if constexpr (sizeof(T) == 4) return (V)_mm512_maskz_loadu_ps(__mmask16((1u << n) - 1), p);
  else return (V)_mm512_maskz_loadu_pd(__mmask8((1u << n) - 1), p);
}
template <class V, class T>
inline void store_part(T* p, V v, int n) {
  if constexpr (sizeof(T) == 4) _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1), (__m512)v);
  else _mm512_mask_storeu_pd(p, __mmask8((1u << n) - 1), (__m512d)v);
}
typedef float F32 __attribute__((vector_size(kBytes)));
// (maskz with all lanes: GCC 12's unmasked form reads an undefined register and warns.)
inline F32 scale_pow2(F32 y, F32 nf) { return (F32)_mm512_maskz_scalef_ps(__mmask16(0xffff), (__m512)y, (__m512)nf); }
#include "kernels/cpu/attention_vec.inc"
}  // namespace attn_avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
namespace attn_avx2 {
constexpr int kBytes = 32, kMR = 4;
typedef int32_t I32x8 __attribute__((vector_size(32)));
typedef int64_t I64x4 __attribute__((vector_size(32)));
template <class T>
inline __m256i part_mask(int n) {
  if constexpr (sizeof(T) == 4) return (__m256i)(I32x8{0, 1, 2, 3, 4, 5, 6, 7} < n);
  else return (__m256i)(I64x4{0, 1, 2, 3} < n);
}
template <class V, class T>
inline V load_part(const T* p, int n) {
  if constexpr (sizeof(T) == 4) return (V)_mm256_maskload_ps(p, part_mask<T>(n));
  else return (V)_mm256_maskload_pd(p, part_mask<T>(n));
}
template <class V, class T>
inline void store_part(T* p, V v, int n) {
  if constexpr (sizeof(T) == 4) _mm256_maskstore_ps(p, part_mask<T>(n), (__m256)v);
  else _mm256_maskstore_pd(p, part_mask<T>(n), (__m256d)v);
}
typedef float F32 __attribute__((vector_size(kBytes)));
typedef I32x8 I32;
// y 2^nf for integral nf in [-150, 128], as two factors that are each a normal float.
inline F32 scale_pow2(F32 y, F32 nf) {
  const I32 n = __builtin_convertvector(nf, I32), n1 = n >> 1, n2 = n - n1;
  return y * (F32)((n1 + 127) << 23) * (F32)((n2 + 127) << 23);
}
#include "kernels/cpu/attention_vec.inc"
}  // namespace attn_avx2
#pragma GCC pop_options
#endif

namespace attn_base {
constexpr int kBytes = 16, kMR = 4;
template <class V, class T>
inline V load_part(const T* p, int n) {
  V v{};
  for (int i = 0; i < n; ++i) v[i] = p[i];
  return v;
}
template <class V, class T>
inline void store_part(T* p, V v, int n) {
  for (int i = 0; i < n; ++i) p[i] = v[i];
}
typedef float F32 __attribute__((vector_size(kBytes)));
typedef int32_t I32 __attribute__((vector_size(kBytes)));
// y 2^nf for integral nf in [-150, 128], as two factors that are each a normal float.
inline F32 scale_pow2(F32 y, F32 nf) {
  const I32 n = __builtin_convertvector(nf, I32), n1 = n >> 1, n2 = n - n1;
  return y * (F32)((n1 + 127) << 23) * (F32)((n2 + 127) << 23);
}
#include "kernels/cpu/attention_vec.inc"
}  // namespace attn_base

// Query rows per block: a block's scores (rows x S) stay in L1/L2 while the products read them.
constexpr int64_t kBlockRows = 64;

// The copy for this CPU.
#if LUCID_X86_DISPATCH
#define LUCID_ATTN_DISPATCH(call)                             \
  switch (cpu_level()) {                                      \
    case CpuLevel::V4: return attn_avx512::call;              \
    case CpuLevel::V3: return attn_avx2::call;                \
    case CpuLevel::Base: break;                               \
  }                                                           \
  return attn_base::call
#else
#define LUCID_ATTN_DISPATCH(call) return attn_base::call
#endif

template <class T>
void transpose_best(const T* src, int64_t ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld) {
  LUCID_ATTN_DISPATCH(transpose(src, ld, rows, cols, dst, dst_ld));
}
template <class T>
void forward_block_best(const AttnArgs<T>& a, int64_t h, int64_t i0, int64_t i1, const T* kt, T* s, T* inv,
                        T* out, T* lse) {
  LUCID_ATTN_DISPATCH(forward_block(a, h, i0, i1, kt, s, inv, out, lse));
}
template <class T>
void backward_head_best(const AttnArgs<T>& a, int64_t h, const T* out, const T* lse, const T* gout,
                        const AttnGrads<T>& g, T* kt, T* vt, T* p, T* dp, T* pd) {
  LUCID_ATTN_DISPATCH(backward_head(a, h, kBlockRows, out, lse, gout, g, kt, vt, p, dp, pd));
}
#undef LUCID_ATTN_DISPATCH

// A thread's scratch: 64-byte aligned (whole-vector rows) and zeroed, so the row passes' lanes
// past a row's end hold finite values (no denormal or NaN stalls in lanes that are discarded).
template <class T>
class Scratch {
 public:
  explicit Scratch(int64_t n)
      : n_(size_t(std::max<int64_t>(n, 1))), p_(static_cast<T*>(::operator new(n_ * sizeof(T), std::align_val_t(64)))) {
    std::memset(static_cast<void*>(p_), 0, n_ * sizeof(T));
  }
  ~Scratch() { ::operator delete(p_, std::align_val_t(64)); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* get() const { return p_; }

 private:
  size_t n_;
  T* p_;
};

// Threads for `total` multiply-adds over `items` work items: 1 (no parallel region) unless every
// thread gets at least kParallelGrain of them.
int attn_threads(int64_t items, int64_t total) {
  return std::max(1, int(std::min<int64_t>({int64_t(lucid::num_threads()), items, total / kParallelGrain})));
}

}  // namespace

template <class T>
void attention_forward(const AttnArgs<T>& a, T* out, T* lse) {
  if (a.heads == 0 || a.L == 0) return;
  if (a.S == 0) {  // nothing to attend: zero rows, as PyTorch
    std::fill(out, out + a.heads * a.L * a.Ev, T(0));
    std::fill(lse, lse + a.heads * a.L, -std::numeric_limits<T>::infinity());
    return;
  }
  // Work items are (head, block of query rows). A causal block costs what its rows attend, so the
  // threads take contiguous runs of items of equal summed cost, not of equal count.
  const int64_t blocks = (a.L + kBlockRows - 1) / kBlockRows, items = a.heads * blocks;
  std::vector<int64_t> pre(size_t(blocks + 1), 0);  // cost of a head's blocks [0, b)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t i0 = b * kBlockRows, rows = std::min(a.L, i0 + kBlockRows) - i0;
    const int64_t keys = a.causal ? std::min(a.S, i0 + rows / 2 + 1) : a.S;
    pre[size_t(b + 1)] = pre[size_t(b)] + rows * keys * (a.E + a.Ev + 1);
  }
  const int64_t head_cost = pre[size_t(blocks)], total = a.heads * head_cost;
  const int nt = attn_threads(items, total);
  const int64_t ld = attn_base::scores_ld(a.S);
  auto run = [&](int64_t b0, int64_t b1) {
    Scratch<T> kt(a.E * ld), s(kBlockRows * ld), inv(kBlockRows);
    int64_t cached = -1;  // consecutive items share a head: k is transposed once per head met
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t h = b / blocks, i0 = (b % blocks) * kBlockRows;
      if (h != cached) {
        transpose_best(a.k + a.k_off[h], a.k_ld, a.S, a.E, kt.get(), ld);
        cached = h;
      }
      forward_block_best(a, h, i0, std::min(a.L, i0 + kBlockRows), kt.get(), s.get(), inv.get(), out, lse);
    }
  };
  if (nt <= 1) return run(0, items);
  // Thread t starts at the first item whose prefix cost reaches t / nt of the total.
  std::vector<int64_t> start(size_t(nt + 1), items);
  start[0] = 0;
  for (int t = 1, b = 0; t < nt; ++t) {
    const int64_t target = total * t / nt;
    while (b < items && (b / blocks) * head_cost + pre[size_t(b % blocks)] < target) ++b;
    start[size_t(t)] = b;
  }
  parallel_threads(nt, [&](int t) { run(start[size_t(t)], start[size_t(t + 1)]); });
}

template <class T>
void attention_backward(const AttnArgs<T>& a, const T* out, const T* lse, const T* gout, const AttnGrads<T>& g) {
  if (a.heads == 0) return;
  const int nt = attn_threads(a.heads, a.heads * a.L * a.S * (2 * a.E + 3 * a.Ev));
  const int64_t ld = attn_base::scores_ld(a.S), blk = std::min(a.L, kBlockRows) * ld;
  auto run = [&](int64_t h0, int64_t h1) {
    Scratch<T> kt(a.E * ld), vt(a.Ev * ld), p(blk), dp(blk), pd(a.keep ? blk : 0);
    for (int64_t h = h0; h < h1; ++h)
      backward_head_best(a, h, out, lse, gout, g, kt.get(), vt.get(), p.get(), dp.get(), pd.get());
  };
  if (nt <= 1) return run(0, a.heads);
  parallel_threads(nt, [&](int t) { run(a.heads * t / nt, a.heads * (t + 1) / nt); });
}

template void attention_forward<float>(const AttnArgs<float>&, float*, float*);
template void attention_forward<double>(const AttnArgs<double>&, double*, double*);
template void attention_backward<float>(const AttnArgs<float>&, const float*, const float*, const float*,
                                        const AttnGrads<float>&);
template void attention_backward<double>(const AttnArgs<double>&, const double*, const double*, const double*,
                                         const AttnGrads<double>&);

}  // namespace lucid::kernels
