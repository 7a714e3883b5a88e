// NOTE: GCC if-converts the float compares of the row loops (and so vectorises them) only when
// it may assume FP operations do not trap; nothing here reads FP exception flags.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include "kernels/cpu/attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/threads.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

// The per-item bodies are compiled for x86-64-v3 (AVX2 + FMA) and for baseline x86-64; the loader
// picks one (cpu_features.h).

namespace {

constexpr int64_t kBlockRows = 32;  // query rows per block: a block's scores stay in L1/L2

LUCID_ALWAYS_INLINE float exp_row(float x) { return exp_f32(x); }
LUCID_ALWAYS_INLINE double exp_row(double x) { return std::exp(x); }

// 256-bit vectors of T in GCC/clang's vector extension: explicit, so the tile below is never
// vectorised along the wrong loop (the compiler's own choice went across k with shuffles). In
// the baseline clone each is a pair of SSE registers.
template <class T>
struct Vec {
  typedef T type __attribute__((vector_size(32)));
  static constexpr int width = int(32 / sizeof(T));
};
// By reference: a vector passed or returned by value changes the ABI of the baseline clone.
template <class T>
LUCID_ALWAYS_INLINE void vload(typename Vec<T>::type& v, const T* p) {
  std::memcpy(&v, p, sizeof v);
}
// av = x in every lane. NOTE: V{} + x costs an add (-0 + 0 is +0, so it is not elided) and a
// lane-by-lane fill becomes a chain of inserts; a shuffle with an all-zero mask is one broadcast.
template <class T>
LUCID_ALWAYS_INLINE void vbroadcast(typename Vec<T>::type& v, T x) {
#if defined(__GNUC__) && !defined(__clang__)
  typedef std::conditional_t<sizeof(T) == 4, int32_t, int64_t> I;
  typedef I IV __attribute__((vector_size(32)));
  typename Vec<T>::type one{};
  one[0] = x;
  v = __builtin_shuffle(one, IV{});
#else
  v = typename Vec<T>::type{} + x;
#endif
}
template <class T>
LUCID_ALWAYS_INLINE void vstore(T* p, const typename Vec<T>::type& v) {
  std::memcpy(p, &v, sizeof v);
}

// One MR x (2 vectors) tile of C = (acc ? C : 0) + op(A) B over p in [kb, ke), held in
// registers across the p loop. op(A) is A stored (m x k) row-major with lda, or with TransA A
// stored (k x m) (element (i, p) at a[p * lda + i]). B is (k x n) with unit column stride and row
// stride ldb.
template <class T, bool TransA, int MR>
LUCID_ALWAYS_INLINE void tile_full(int64_t kb, int64_t ke, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                                 int64_t ldc, bool acc) {
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::width;
  V r0[MR], r1[MR];
  for (int i = 0; i < MR; ++i) {
    r0[i] = r1[i] = V{};
    if (acc) vload(r0[i], c + i * ldc), vload(r1[i], c + i * ldc + W);
  }
  for (int64_t p = kb; p < ke; ++p) {
    V b0, b1;
    vload(b0, b + p * ldb), vload(b1, b + p * ldb + W);
    for (int i = 0; i < MR; ++i) {
      V av;
      vbroadcast(av, TransA ? a[p * lda + i] : a[i * lda + p]);
      r0[i] += av * b0;
      r1[i] += av * b1;
    }
  }
  for (int i = 0; i < MR; ++i) {
    vstore(c + i * ldc, r0[i]);
    vstore(c + i * ldc + W, r1[i]);
  }
}

// The ragged edge: mr <= MR rows, nb <= NB columns.
template <class T, bool TransA, int NB>
LUCID_ALWAYS_INLINE void tile_edge(int64_t kb, int64_t ke, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                                 int64_t ldc, bool acc, int64_t mr, int64_t nb) {
  for (int64_t i = 0; i < mr; ++i) {
    T r[NB];
    for (int64_t j = 0; j < nb; ++j) r[j] = acc ? c[i * ldc + j] : T(0);
    for (int64_t p = kb; p < ke; ++p) {
      const T av = TransA ? a[p * lda + i] : a[i * lda + p];
      const T* bp = b + p * ldb;
      for (int64_t j = 0; j < nb; ++j) r[j] += av * bp[j];
    }
    for (int64_t j = 0; j < nb; ++j) c[i * ldc + j] = r[j];
  }
}

// How a causal block's triangle bounds a product (row r of a block is query i0 + r, diag = i0;
// a query attends keys j <= i0 + r):
//   Cols:   C = scores-shaped (rows = queries, cols = keys): columns past the tile's last query
//           are not computed (their values are never read);
//   KUpper: the reduction runs over keys, A = probabilities: zero past the tile's last query;
//   KLower: C rows are keys, the reduction runs over queries (TransA): zero before the key.
enum class Tri { None, Cols, KUpper, KLower };

// C (m x n, ldc) = (acc ? C : 0) + op(A) B; column panels of B outside, so each panel is reused
// by every row tile while it sits in L1.
template <class T, bool TransA, Tri tri = Tri::None>
LUCID_ALWAYS_INLINE void mm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                          int64_t ldc, bool acc, int64_t diag = 0) {
  constexpr int MR = 4, NB = 2 * Vec<T>::width;  // 8 accumulators of 256 bits
  auto a_at = [&](int64_t i) { return TransA ? a + i : a + i * lda; };
  for (int64_t j0 = 0; j0 < n; j0 += NB) {
    const int64_t nb = std::min<int64_t>(NB, n - j0);
    for (int64_t i0 = 0; i0 < m; i0 += MR) {
      const int64_t mr = std::min<int64_t>(MR, m - i0);
      const int64_t kb = tri == Tri::KLower ? std::clamp<int64_t>(i0 - diag, 0, k) : 0;
      const int64_t ke = tri == Tri::KUpper ? std::clamp<int64_t>(diag + i0 + mr, 0, k) : k;
      if (tri == Tri::Cols && j0 >= diag + i0 + mr) continue;  // the panel lies past the tile's last query
      T* ct = c + i0 * ldc + j0;
      if (nb == NB && mr == MR)
        tile_full<T, TransA, MR>(kb, ke, a_at(i0), lda, b + j0, ldb, ct, ldc, acc);
      else
        tile_edge<T, TransA, NB>(kb, ke, a_at(i0), lda, b + j0, ldb, ct, ldc, acc, mr, nb);
    }
  }
}

// dst (cols x rows, ld rows_ld) = src (rows x cols, row stride ld)^T.
// In 8 x 8 tiles: one row at a time would store with a stride of a whole row (cache-line and
// 4K-aliasing traffic that cost as much as a product).
template <class T>
LUCID_ALWAYS_INLINE void transpose(const T* src, int64_t ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld) {
  constexpr int64_t B = 8;
  for (int64_t r0 = 0; r0 < rows; r0 += B)
    for (int64_t c0 = 0; c0 < cols; c0 += B) {
      const int64_t r1 = std::min(rows, r0 + B), c1 = std::min(cols, c0 + B);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) dst[c * dst_ld + r] = src[r * ld + c];
    }
}

// Keys row i of a block attends: [0, n_i) (causal: j <= i; kmax bounds the block).
inline int64_t row_keys(bool causal, int64_t i, int64_t kmax) { return causal ? std::min(kmax, i + 1) : kmax; }

// s[j] = scale * s[j] + mask[j] over j < n (the raw dot products are already in s).
template <class T>
LUCID_ALWAYS_INLINE void scale_mask_row(const AttnArgs<T>& a, int64_t h, int64_t i, T* s, int64_t n) {
  const T sc = a.scale;
  if (a.mask) {
    const T* mr = a.mask + a.m_off[h] + i * a.m_ls;
    if (a.m_ss == 1) {
      for (int64_t j = 0; j < n; ++j) s[j] = s[j] * sc + mr[j];
    } else {
      for (int64_t j = 0; j < n; ++j) s[j] = s[j] * sc + mr[j * a.m_ss];
    }
  } else {
    for (int64_t j = 0; j < n; ++j) s[j] *= sc;
  }
}

// Dropout on a probability row: p[j] *= keep[j] ? keep_scale : 0 (a multiply, so NaN stays NaN).
template <class T>
LUCID_ALWAYS_INLINE void drop_row(const AttnArgs<T>& a, int64_t h, int64_t i, const T* p, T* out, int64_t n) {
  const bool* kr = a.keep + (h * a.L + i) * a.S;
  const T ks = a.keep_scale;
  for (int64_t j = 0; j < n; ++j) out[j] = p[j] * (kr[j] ? ks : T(0));
}

// Forward of query rows [i0, i1) of head h. kt: k^T (E x S, ld S) of this head.
template <class T>
LUCID_ALWAYS_INLINE void forward_block_impl(const AttnArgs<T>& a, int64_t h, int64_t i0, int64_t i1, const T* kt, T* s,
                                          T* out, T* lse) {
  const int64_t rows = i1 - i0;
  const int64_t kmax = a.causal ? std::min(a.S, i1) : a.S;
  const int64_t ld = std::max<int64_t>(kmax, 1);
  const T* q = a.q + a.q_off[h] + i0 * a.q_ld;
  if (a.causal) mm<T, false, Tri::Cols>(rows, kmax, a.E, q, a.q_ld, kt, a.S, s, ld, false, i0);
  else mm<T, false>(rows, kmax, a.E, q, a.q_ld, kt, a.S, s, ld, false);
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = i0 + r, n = row_keys(a.causal, i, kmax);
    T* sr = s + r * ld;
    scale_mask_row(a, h, i, sr, n);
    // NOTE: `omp simd` only vectorises (no threads); it lets the compiler reorder the reductions.
    T m = ninf;
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < n; ++j) m = sr[j] > m ? sr[j] : m;
    if (m == ninf) {  // no attended key: a zero row (PyTorch's CPU kernel), lse = -inf
      std::fill(sr, sr + kmax, T(0));
      lse[h * a.L + i] = ninf;
      continue;
    }
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) {
      const T e = exp_row(sr[j] - m);
      sr[j] = e;
      sum += e;
    }
    const T inv = T(1) / sum;
    for (int64_t j = 0; j < n; ++j) sr[j] *= inv;
    std::fill(sr + n, sr + kmax, T(0));
    if (a.keep) drop_row(a, h, i, sr, sr, kmax);
    lse[h * a.L + i] = m + std::log(sum);
  }
  const T* v = a.v + a.v_off[h];
  T* o = out + (h * a.L + i0) * a.Ev;
  if (a.causal) mm<T, false, Tri::KUpper>(rows, a.Ev, kmax, s, ld, v, a.v_ld, o, a.Ev, false, i0);
  else mm<T, false>(rows, a.Ev, kmax, s, ld, v, a.v_ld, o, a.Ev, false);
}

// Backward of head h (the whole head: dk and dv accumulate over its query blocks).
// Scratch: kt (E x S), vt (Ev x S), p / dp / pd (kBlockRows x S each).
template <class T>
LUCID_ALWAYS_INLINE void backward_head_impl(const AttnArgs<T>& a, int64_t h, const T* out, const T* lse, const T* gout,
                                          const AttnGrads<T>& g, T* kt, T* vt, T* p, T* dp, T* pd) {
  const int64_t L = a.L, S = a.S, E = a.E, Ev = a.Ev;
  const T* k = a.k + a.k_off[h];
  const T* v = a.v + a.v_off[h];
  T* dk = g.dk + h * S * E;
  T* dv = g.dv + h * S * Ev;
  std::fill(dk, dk + S * E, T(0));
  std::fill(dv, dv + S * Ev, T(0));
  transpose(k, a.k_ld, S, E, kt, S);
  transpose(v, a.v_ld, S, Ev, vt, S);
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int64_t i0 = 0; i0 < L; i0 += kBlockRows) {
    const int64_t i1 = std::min(L, i0 + kBlockRows), rows = i1 - i0;
    const int64_t kmax = a.causal ? std::min(S, i1) : S;
    const int64_t ld = std::max<int64_t>(kmax, 1);
    const T* q = a.q + a.q_off[h] + i0 * a.q_ld;
    const T* go = gout + (h * L + i0) * Ev;
    T* dq = g.dq + (h * L + i0) * E;
    // p = exp(s - lse), recomputed exactly as the forward computed s.
    if (a.causal) mm<T, false, Tri::Cols>(rows, kmax, E, q, a.q_ld, kt, S, p, ld, false, i0);
    else mm<T, false>(rows, kmax, E, q, a.q_ld, kt, S, p, ld, false);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r, n = row_keys(a.causal, i, kmax);
      T* pr = p + r * ld;
      const T l = lse[h * L + i];
      if (l == ninf) {
        std::fill(pr, pr + kmax, T(0));
      } else {
        scale_mask_row(a, h, i, pr, n);
        for (int64_t j = 0; j < n; ++j) pr[j] = exp_row(pr[j] - l);
        std::fill(pr + n, pr + kmax, T(0));
      }
      if (a.keep) drop_row(a, h, i, pr, pd + r * ld, kmax);
    }
    const T* pv = a.keep ? pd : p;  // the probabilities that multiplied v
    if (a.causal) {
      mm<T, true, Tri::KLower>(kmax, Ev, rows, pv, ld, go, Ev, dv, Ev, true, i0);  // dv += pd^T dout
      mm<T, false, Tri::Cols>(rows, kmax, Ev, go, Ev, vt, S, dp, ld, false, i0);   // dp = dout v^T
    } else {
      mm<T, true>(kmax, Ev, rows, pv, ld, go, Ev, dv, Ev, true);
      mm<T, false>(rows, kmax, Ev, go, Ev, vt, S, dp, ld, false);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r, n = row_keys(a.causal, i, kmax);
      const T* orow = out + (h * L + i) * Ev;
      const T* grow = go + r * Ev;
      T d = 0;  // rowsum(dout * out) = sum_j p_j dp_j
#pragma omp simd reduction(+ : d)
      for (int64_t e = 0; e < Ev; ++e) d += grow[e] * orow[e];
      T* pr = p + r * ld;
      T* dr = dp + r * ld;
      if (a.keep) drop_row(a, h, i, dr, dr, n);
      for (int64_t j = 0; j < n; ++j) dr[j] = pr[j] * (dr[j] - d);  // ds, before the scale
      std::fill(dr + n, dr + kmax, T(0));  // (dp past the diagonal was not computed)
      if (g.dmask) {
        T* mrow = g.dmask + (h * L + i) * S;
        std::copy(dr, dr + kmax, mrow);
        std::fill(mrow + kmax, mrow + S, T(0));
      }
      for (int64_t j = 0; j < n; ++j) dr[j] *= a.scale;
    }
    if (a.causal) {
      mm<T, false, Tri::KUpper>(rows, E, kmax, dp, ld, k, a.k_ld, dq, E, false, i0);  // dq = ds k
      mm<T, true, Tri::KLower>(kmax, E, rows, dp, ld, q, a.q_ld, dk, E, true, i0);    // dk += ds^T q
    } else {
      mm<T, false>(rows, E, kmax, dp, ld, k, a.k_ld, dq, E, false);
      mm<T, true>(kmax, E, rows, dp, ld, q, a.q_ld, dk, E, true);
    }
  }
}

// One instantiation per accumulation type, compiled twice (see LUCID_CLONES_AVX2_FMA).
LUCID_CLONES_AVX2_FMA void forward_block(const AttnArgs<float>& a, int64_t h, int64_t i0, int64_t i1, const float* kt,
                                     float* s, float* out, float* lse) {
  forward_block_impl(a, h, i0, i1, kt, s, out, lse);
}
LUCID_CLONES_AVX2_FMA void forward_block(const AttnArgs<double>& a, int64_t h, int64_t i0, int64_t i1, const double* kt,
                                     double* s, double* out, double* lse) {
  forward_block_impl(a, h, i0, i1, kt, s, out, lse);
}
LUCID_CLONES_AVX2_FMA void backward_head(const AttnArgs<float>& a, int64_t h, const float* out, const float* lse,
                                     const float* gout, const AttnGrads<float>& g, float* kt, float* vt, float* p,
                                     float* dp, float* pd) {
  backward_head_impl(a, h, out, lse, gout, g, kt, vt, p, dp, pd);
}
LUCID_CLONES_AVX2_FMA void backward_head(const AttnArgs<double>& a, int64_t h, const double* out, const double* lse,
                                     const double* gout, const AttnGrads<double>& g, double* kt, double* vt,
                                     double* p, double* dp, double* pd) {
  backward_head_impl(a, h, out, lse, gout, g, kt, vt, p, dp, pd);
}

// Threads for `items` work items of `work` multiply-adds each: 1 (no parallel region) unless
// every thread gets at least kParallelGrain of them.
int attn_threads(int64_t items, int64_t work) {
  return int(std::min<int64_t>({int64_t(lucid::num_threads()), items, items * work / kParallelGrain}));
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
  const int64_t blocks = (a.L + kBlockRows - 1) / kBlockRows;
  const int64_t items = a.heads * blocks;
  const int64_t work = std::min(a.L, kBlockRows) * a.S * (a.E + a.Ev);
  const int nt = std::max(1, attn_threads(items, work));
  // NOTE: consecutive items share a head; a thread transposes k once per head it meets.
  auto run = [&](int64_t b0, int64_t b1) {
    std::vector<T> kt(size_t(a.E * a.S)), s(size_t(kBlockRows * a.S));
    int64_t cached = -1;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t h = b / blocks, i0 = (b % blocks) * kBlockRows;
      if (h != cached) {
        transpose(a.k + a.k_off[h], a.k_ld, a.S, a.E, kt.data(), a.S);
        cached = h;
      }
      forward_block(a, h, i0, std::min(a.L, i0 + kBlockRows), kt.data(), s.data(), out, lse);
    }
  };
  if (nt <= 1) {
    run(0, items);
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int t = 0; t < nt; ++t) run(items * t / nt, items * (t + 1) / nt);
}

template <class T>
void attention_backward(const AttnArgs<T>& a, const T* out, const T* lse, const T* gout, const AttnGrads<T>& g) {
  if (a.heads == 0) return;
  const int nt = std::max(1, attn_threads(a.heads, a.L * a.S * (2 * a.E + 3 * a.Ev)));
  auto run = [&](int64_t h0, int64_t h1) {
    const size_t blk = size_t(kBlockRows * a.S);
    std::vector<T> kt(size_t(a.E * a.S)), vt(size_t(a.Ev * a.S)), p(blk), dp(blk), pd(a.keep ? blk : 0);
    for (int64_t h = h0; h < h1; ++h)
      backward_head(a, h, out, lse, gout, g, kt.data(), vt.data(), p.data(), dp.data(), pd.data());
  };
  if (nt <= 1) {
    run(0, a.heads);
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int t = 0; t < nt; ++t) run(a.heads * t / nt, a.heads * (t + 1) / nt);
}

template void attention_forward<float>(const AttnArgs<float>&, float*, float*);
template void attention_forward<double>(const AttnArgs<double>&, double*, double*);
template void attention_backward<float>(const AttnArgs<float>&, const float*, const float*, const float*,
                                        const AttnGrads<float>&);
template void attention_backward<double>(const AttnArgs<double>&, const double*, const double*, const double*,
                                         const AttnGrads<double>&);

}  // namespace lucid::kernels
