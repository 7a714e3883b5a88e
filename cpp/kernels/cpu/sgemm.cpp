#include "kernels/cpu/sgemm.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/threads.h"
#include "kernels/cpu/cpu_features.h"

#if LUCID_X86_DISPATCH
#include <immintrin.h>
#endif

namespace lucid::kernels {

#if LUCID_X86_DISPATCH

bool sgemm_avx512_available() { return cpu_has(Isa::Avx512); }

namespace {

constexpr int kNR = 32;   // columns of a B panel: two zmm registers
constexpr int kMR = 14;   // rows of a full A panel: 28 accumulators + 2 of B
constexpr int kMRs = 4;   // rows of the short panels that take a small remainder of M
// Packed blocks: k per block, and floats per A block (rows x k) and per B block (k x columns),
// sized so both stay in L2 (2 MB per core on the machines we measured).
constexpr int64_t kKB = 1024;
constexpr int64_t kABudget = int64_t(128) << 10, kBBudget = int64_t(256) << 10;
// Multiply-adds per thread below which a product stays on the calling thread.
constexpr int64_t kGrain = int64_t(1) << 18;
// The cost of a short panel relative to a full one (per column panel), for the thread split.
constexpr double kShortCost = 0.45;

// A split by columns (nothing shared between the threads, below) is taken unless splitting by
// rows leaves the most loaded thread this much less work.
constexpr double kColsBias = 1.1;

// Packing scratch owned by the calling thread, grown on demand and kept.
struct Scratch {
  float* p = nullptr;
  size_t cap = 0;
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(p); }
  float* get(size_t n) {
    if (n > cap) {
      std::free(p);
      p = nullptr;
      cap = 0;
      const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
      p = static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!p) throw std::bad_alloc();
      cap = bytes / sizeof(float);
    }
    return p;
  }
};
thread_local Scratch tls_scratch;

// The row panels of an A block of mb rows: full panels of kMR rows, then either short panels of
// kMRs rows (a remainder of at most 2 kMRs rows) or one more full panel, padded with zero rows.
struct RowPanels {
  int64_t nfull = 0, nshort = 0;
  explicit RowPanels(int64_t mb) {
    nfull = mb / kMR;
    const int64_t rem = mb % kMR;
    if (rem > 2 * kMRs) ++nfull;
    else nshort = (rem + kMRs - 1) / kMRs;
    mb_ = mb;
  }
  int64_t count() const { return nfull + nshort; }
  // First row, rows, packed rows, and offset of the packed panel in rows (times the block's k).
  int64_t row(int64_t q) const { return q < nfull ? q * kMR : nfull * kMR + (q - nfull) * kMRs; }
  int rows(int64_t q) const { return int(std::min<int64_t>(q < nfull ? kMR : kMRs, mb_ - row(q))); }
  int packed_rows(int64_t q) const { return q < nfull ? kMR : kMRs; }
  double cost(int64_t q) const { return q < nfull ? 1.0 : kShortCost; }

 private:
  int64_t mb_ = 0;
};

__mmask16 low_mask(int64_t bits) { return bits >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << std::max<int64_t>(bits, 0)) - 1); }

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")
// NOTE: GCC 12 flags the _mm512_undefined_ps() placeholder inside the unmasked shuffle
// intrinsics as "may be used uninitialized" once they are inlined; the value is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Transposes the 16x16 block r[i] lane j -> r[j] lane i.
inline __attribute__((always_inline)) void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4i + c], 128-bit lane L: rows 4i..4i+3 of column 4L + c
  for (int i = 0; i < 4; ++i) {
    r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 x0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88), x1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xDD);
    const __m512 y0 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    const __m512 y1 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xDD);
    t[c] = _mm512_shuffle_f32x4(x0, y0, 0x88);
    t[8 + c] = _mm512_shuffle_f32x4(x0, y0, 0xDD);
    t[4 + c] = _mm512_shuffle_f32x4(x1, y1, 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(x1, y1, 0xDD);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// Rows [i0, i0 + mr) and k [p0, p0 + kc) of op(A) into dst[p * mrp + i]; rows mr..mrp are zero.
void pack_a(const float* a, MatLayout la, int64_t i0, int mr, int mrp, int64_t p0, int64_t kc, float* dst) {
  const __mmask16 keep = low_mask(mrp);
  if (la.trans) {  // op(A)[i][p] = a[p ld + i]: contiguous in i
    const __mmask16 rows = low_mask(mr);
    const float* src = a + p0 * la.ld + i0;
    for (int64_t p = 0; p < kc; ++p)
      _mm512_mask_storeu_ps(dst + p * mrp, keep, _mm512_maskz_loadu_ps(rows, src + p * la.ld));
    return;
  }
  // op(A)[i][p] = a[i ld + p]: 16 x 16 transposes
  const float* src = a + i0 * la.ld + p0;
  __m512 r[16];
  for (int64_t p = 0; p < kc; p += 16) {
    const int64_t q = std::min<int64_t>(16, kc - p);
    const __mmask16 ks = low_mask(q);
    for (int i = 0; i < 16; ++i) r[i] = i < mr ? _mm512_maskz_loadu_ps(ks, src + i * la.ld + p) : _mm512_setzero_ps();
    transpose16(r);
    for (int64_t j = 0; j < q; ++j) _mm512_mask_storeu_ps(dst + (p + j) * mrp, keep, r[j]);
  }
}

// Columns [j0, j0 + nr) and k [p0, p0 + kc) of op(B) into dst[p * kNR + j]; columns nr..kNR are zero.
void pack_b(const float* b, MatLayout lb, int64_t j0, int nr, int64_t p0, int64_t kc, float* dst) {
  if (!lb.trans) {  // op(B)[p][j] = b[p ld + j]: contiguous in j
    const __mmask16 m0 = low_mask(nr), m1 = low_mask(nr - 16);
    const float* src = b + p0 * lb.ld + j0;
    for (int64_t p = 0; p < kc; ++p) {
      _mm512_store_ps(dst + p * kNR, _mm512_maskz_loadu_ps(m0, src + p * lb.ld));
      _mm512_store_ps(dst + p * kNR + 16, _mm512_maskz_loadu_ps(m1, src + p * lb.ld + 16));
    }
    return;
  }
  // op(B)[p][j] = b[j ld + p]: 16 x 16 transposes, one per half of the panel
  __m512 r[16];
  for (int h = 0; h < kNR / 16; ++h) {
    const int cols = std::clamp(nr - 16 * h, 0, 16);
    if (cols == 0) {
      for (int64_t p = 0; p < kc; ++p) _mm512_store_ps(dst + p * kNR + 16 * h, _mm512_setzero_ps());
      continue;
    }
    const float* src = b + (j0 + 16 * h) * lb.ld + p0;
    for (int64_t p = 0; p < kc; p += 16) {
      const int64_t q = std::min<int64_t>(16, kc - p);
      const __mmask16 ks = low_mask(q);
      for (int i = 0; i < 16; ++i)
        r[i] = i < cols ? _mm512_maskz_loadu_ps(ks, src + i * lb.ld + p) : _mm512_setzero_ps();
      transpose16(r);
      for (int64_t j = 0; j < q; ++j) _mm512_store_ps(dst + (p + j) * kNR + 16 * h, r[j]);
    }
  }
}

// C[0..mr, 0..32) (columns masked by m0, m1) = (accumulate ? C : 0) + A panel x B panel over kc.
// Rows past mr are computed (from zero padding) and dropped.
template <int MR>
void micro_kernel(int64_t kc, const float* __restrict pa, const float* __restrict pb, float* c, int64_t ldc, int mr,
                  __mmask16 m0, __mmask16 m1, bool accumulate) {
  __m512 c0[MR], c1[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) c0[i] = c1[i] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = _mm512_load_ps(pb), b1 = _mm512_load_ps(pb + 16);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(pa[i]);
      c0[i] = _mm512_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(ai, b1, c1[i]);
    }
    pa += MR;
    pb += kNR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
    __m512 v0 = c0[i], v1 = c1[i];
    if (accumulate) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, ci));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, ci + 16));
    }
    _mm512_mask_storeu_ps(ci, m0, v0);
    _mm512_mask_storeu_ps(ci + 16, m1, v1);
  }
}

// The product on thread t of nth (all threads run the same blocks, in step).
void run_thread(int t, int nth, int64_t m, int64_t n, int64_t k, const float* a, MatLayout la, const float* b,
                MatLayout lb, float beta, float* c, int64_t ldc, int64_t kb, int64_t mb_max, int64_t nb_max,
                float* abuf, int64_t a_floats, float* bbuf) {
  for (int64_t j0 = 0; j0 < n; j0 += nb_max) {
    const int64_t nb = std::min(nb_max, n - j0), ncp = (nb + kNR - 1) / kNR;
    for (int64_t p0 = 0; p0 < k; p0 += kb) {
      const int64_t kcb = std::min(kb, k - p0);
      for (int64_t i0 = 0; i0 < m; i0 += mb_max) {
        const RowPanels rp(std::min(mb_max, m - i0));
        const int64_t nrp = rp.count();
        // Split the tiles along N (each thread its column panels, all row panels) or along M
        // (each thread its row panels, all column panels), whichever leaves the most loaded thread
        // less work, columns preferred (kColsBias).
        int64_t q0 = 0, q1 = nrp, c0 = 0, c1 = ncp, pa0 = 0, pa1 = nrp, pb0 = 0, pb1 = ncp;
        bool by_cols = false;
        if (nth > 1) {
          double total = 0;
          for (int64_t q = 0; q < nrp; ++q) total += rp.cost(q);
          // by rows, thread u takes the panels whose cost midpoint falls in [u, u + 1) total / nth
          double run = 0, part = 0, worst = 0;
          int cur = 0;
          q0 = q1 = -1;
          for (int64_t q = 0; q < nrp; ++q) {
            const int owner = int(std::min<double>(nth - 1, (run + rp.cost(q) / 2) * nth / total));
            if (owner != cur) worst = std::max(worst, part), part = 0, cur = owner;
            if (owner == t) q1 = q + 1, q0 = q0 < 0 ? q : q0;
            part += rp.cost(q), run += rp.cost(q);
          }
          worst = std::max(worst, part);
          if (q0 < 0) q0 = q1 = 0;
          by_cols = total * double((ncp + nth - 1) / nth) <= kColsBias * worst * double(ncp);
          if (by_cols) {
            q0 = 0, q1 = nrp, c0 = ncp * t / nth, c1 = ncp * (t + 1) / nth, pb0 = c0, pb1 = c1;
          } else {
            pa0 = q0, pa1 = q1, pb0 = ncp * t / nth, pb1 = ncp * (t + 1) / nth;
          }
        }
        // Packed A panel q sits at row offset row(q) (full panels first), times kcb, in this
        // thread's A buffer. Split by columns, each thread packs every A panel itself and its own B
        // panels: nothing is shared, no barrier. (Packing A panels once for both threads measured
        // 1.2-1.5x slower at 128x256x256: the panels the other core packed arrive through L3.)
        // Split by rows, each thread packs its A panels and a share of the B panels (the share it
        // owns when split by columns), then waits. A panels are private, so A blocks need no barrier.
        float* my_a = abuf + t * a_floats;
        for (int64_t q = pa0; q < pa1; ++q)
          pack_a(a, la, i0 + rp.row(q), rp.rows(q), rp.packed_rows(q), p0, kcb, my_a + rp.row(q) * kcb);
        if (i0 == 0)  // the B block serves every A block of this (j0, p0)
          for (int64_t jp = pb0; jp < pb1; ++jp)
            pack_b(b, lb, j0 + jp * kNR, int(std::min<int64_t>(kNR, nb - jp * kNR)), p0, kcb, bbuf + jp * kNR * kcb);
        if (nth > 1 && !by_cols) {
#pragma omp barrier
        }
        // Each B panel is multiplied by every A panel of this thread over the block's whole k: a
        // B panel (32 KB per 256 k) then stays in L1, A panels stream from L2. (Passes of 128-512
        // k, or A panels kept in L1 instead, measured 2-8% slower on the MLP shapes.)
        const bool acc = beta != 0 || p0 > 0;
        for (int64_t jp = c0; jp < c1; ++jp) {
          const int64_t cols = std::min<int64_t>(kNR, nb - jp * kNR);
          const __mmask16 m0 = low_mask(cols), m1 = low_mask(cols - 16);
          const float* bp = bbuf + jp * kNR * kcb;
          for (int64_t q = q0; q < q1; ++q) {
            const float* ap = my_a + rp.row(q) * kcb;
            float* ct = c + (i0 + rp.row(q)) * ldc + j0 + jp * kNR;
            if (rp.packed_rows(q) == kMR) micro_kernel<kMR>(kcb, ap, bp, ct, ldc, rp.rows(q), m0, m1, acc);
            else micro_kernel<kMRs>(kcb, ap, bp, ct, ldc, rp.rows(q), m0, m1, acc);
          }
        }
      }
      // The next B block is packed over this one: wait for every thread to be done with it.
      if (nth > 1 && !(j0 + nb_max >= n && p0 + kb >= k)) {
#pragma omp barrier
      }
    }
  }
}

#pragma GCC diagnostic pop
#pragma GCC pop_options

}  // namespace

void sgemm_avx512(int64_t m, int64_t n, int64_t k, const float* a, MatLayout la, const float* b, MatLayout lb,
                  float beta, float* c, int64_t ldc, int nt) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (beta == 0)
      for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, size_t(n) * sizeof(float));
    return;
  }
  if (omp_in_parallel()) nt = 1;
  nt = int(std::max<int64_t>(1, std::min<int64_t>(nt, m * n * k / kGrain)));
  // Block sizes depend on the shape only, never on the thread count (same sums for any nt).
  const int64_t nkb = (k + kKB - 1) / kKB, kb = (k + nkb - 1) / nkb;
  const int64_t mb_max = std::max<int64_t>(kMR, kABudget / kb / kMR * kMR);
  const int64_t nb_max = std::max<int64_t>(kNR, kBBudget / kb / kNR * kNR);
  const int64_t a_rows = std::min(mb_max, m) + kMR, b_cols = (std::min(nb_max, n) + kNR - 1) / kNR * kNR;
  const int64_t a_floats = (a_rows * kb + 15) / 16 * 16;
  float* abuf = tls_scratch.get(size_t(nt * a_floats + b_cols * kb));  // one A buffer per thread
  float* bbuf = abuf + nt * a_floats;
  if (nt == 1)
    return run_thread(0, 1, m, n, k, a, la, b, lb, beta, c, ldc, kb, mb_max, nb_max, abuf, a_floats, bbuf);
  // The threads meet at barriers, so the contention guard is told how late the last one started.
  const int64_t start = now_ns();
  std::atomic<int64_t> last_start{start};
#pragma omp parallel num_threads(nt)
  {
    if (omp_get_thread_num() > 0) {
      const int64_t t = now_ns();
      for (int64_t seen = last_start.load(); t > seen && !last_start.compare_exchange_weak(seen, t);) {
      }
    }
    run_thread(omp_get_thread_num(), omp_get_num_threads(), m, n, k, a, la, b, lb, beta, c, ldc, kb, mb_max, nb_max,
               abuf, a_floats, bbuf);
  }
  const int64_t late = last_start.load() - start;
  note_region_wait(now_ns() - start - late, late);
}

#else  // no x86 dispatch: never available

bool sgemm_avx512_available() { return false; }
void sgemm_avx512(int64_t, int64_t, int64_t, const float*, MatLayout, const float*, MatLayout, float, float*,
                  int64_t, int) {}

#endif

}  // namespace lucid::kernels
