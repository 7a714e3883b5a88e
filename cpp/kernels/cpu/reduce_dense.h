// Reductions over a dense [outer, red, inner] layout (row-major, contiguous): out[o, j] folds
// x[o, r, j] over r. The op layer maps the common cases here (a contiguous input whose reduced
// dims form one block), so the fast paths are: inner == 1 (rows, folded with 4 independent
// accumulators so the adds pipeline), inner > 1 (leading dims reduced: whole rows are added into
// an accumulator tile, never a column walked with stride `inner`), and one long row split across
// threads (a full reduction to a scalar). Partials are combined in index order, and where a
// reduction is split depends on the shape only, so results do not depend on the thread count.
// A reducer R provides:
//   Acc init(out_index); void visit(Acc&, In v, r); void combine(Acc& a, const Acc& b);
//   Out finish(const Acc&, out_index)            (r: position along the reduced extent)
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/threads.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

template <class R>
void reduce_dense(const R& r, const typename R::In* x, typename R::Out* out, int64_t outer,
                  int64_t red, int64_t inner) {
  using Acc = typename R::Acc;
  const int64_t n_out = outer * inner;
  if (n_out == 0) return;
  const int64_t total = n_out * red;
  const int max_threads = int(std::min<int64_t>(lucid::num_threads(), total / kParallelGrain));
  const int nt = std::max(1, max_threads);

  // One row of length red (stride 1): kLanes independent accumulators break the dependency
  // chain; with 32 lanes GCC keeps the lane loop a loop and vectorises it (with 8 the unrolled
  // form defeats it for the extrema). Each lane is its own reduction, so no reassociation is
  // needed; lanes combine pairwise at the end. Short rows fold serially (lane setup would dominate).
  constexpr int kLanes = 32;
  auto fold_row = [&r](const typename R::In* p, int64_t r0, int64_t r1, int64_t o) {
    if (r1 - r0 < 2 * kLanes) {
      Acc a = r.init(o);
      for (int64_t i = r0; i < r1; ++i) r.visit(a, p[i], i);
      return a;
    }
    Acc lane[kLanes];
    for (int j = 0; j < kLanes; ++j) lane[j] = r.init(o);
    int64_t i = r0;
    for (; i + kLanes <= r1; i += kLanes)
#pragma omp simd
      for (int j = 0; j < kLanes; ++j) r.visit(lane[j], p[i + j], i + j);
    for (; i < r1; ++i) r.visit(lane[0], p[i], i);
    for (int w = kLanes / 2; w > 0; w /= 2)
      for (int j = 0; j < w; ++j) r.combine(lane[j], lane[j + w]);
    return lane[0];
  };

  // Long reductions with few outputs are split into kPieces partials along the reduced extent,
  // combined in order. Whether to split, and where, depends on the shape only, so the result is
  // the same bits on any number of threads (the contention guard changes the count at run time).
  constexpr int kPieces = 8;
  const bool split = total >= 2 * kParallelGrain && red >= 2 * kPieces;
  auto piece = [&](int64_t p) { return red * p / kPieces; };
  auto run_pieces = [&](auto&& fold_piece) {  // fold_piece(p) for every piece, over the threads
    parallel_chunks(std::min(nt, kPieces), kPieces, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) fold_piece(p);
    });
  };

  if (inner == 1) {
    if (split && outer < kPieces) {  // few long rows (a full reduction): pieces of each row
      for (int64_t o = 0; o < outer; ++o) {
        const auto* p = x + o * red;
        std::vector<Acc> part(kPieces, r.init(o));
        run_pieces([&](int64_t q) { part[size_t(q)] = fold_row(p, piece(q), piece(q + 1), o); });
        for (int q = 1; q < kPieces; ++q) r.combine(part[0], part[size_t(q)]);
        out[o] = r.finish(part[0], o);
      }
    } else {
      parallel_chunks(std::min<int64_t>(nt, outer), outer, [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) out[o] = r.finish(fold_row(x + o * red, 0, red, o), o);
      });
    }
    return;
  }

  // inner > 1: fold whole rows x[o, k, j0:j1] into an accumulator tile, which stays in cache
  // while the rows stream through.
  constexpr int64_t kTile = 2048;
  const int64_t tiles = (inner + kTile - 1) / kTile;
  const int64_t jobs = outer * tiles;
  auto fold_tile = [&](Acc* acc, int64_t job, int64_t k0, int64_t k1) {
    const int64_t o = job / tiles, j0 = (job % tiles) * kTile, w = std::min(inner, j0 + kTile) - j0;
    for (int64_t j = 0; j < w; ++j) acc[j] = r.init(o * inner + j0 + j);
    const auto* base = x + o * red * inner + j0;
    for (int64_t k = k0; k < k1; ++k) {
      const auto* row = base + k * inner;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) r.visit(acc[j], row[j], k);
    }
  };
  auto store_tile = [&](const Acc* acc, int64_t job) {
    const int64_t o = job / tiles, j0 = (job % tiles) * kTile, w = std::min(inner, j0 + kTile) - j0;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) out[o * inner + j0 + j] = r.finish(acc[j], o * inner + j0 + j);
  };
  const int64_t tw = std::min(inner, kTile);
  if (split && jobs < kPieces) {  // few tiles, many rows (a bias gradient): partial tiles of row pieces
    std::vector<Acc> part(size_t(kPieces) * size_t(tw));
    for (int64_t job = 0; job < jobs; ++job) {
      run_pieces([&](int64_t q) { fold_tile(part.data() + q * tw, job, piece(q), piece(q + 1)); });
      const int64_t w = std::min(inner, (job % tiles) * kTile + kTile) - (job % tiles) * kTile;
      for (int q = 1; q < kPieces; ++q)
        for (int64_t j = 0; j < w; ++j) r.combine(part[j], part[q * tw + j]);
      store_tile(part.data(), job);
    }
  } else {
    parallel_chunks(std::min<int64_t>(nt, jobs), jobs, [&](int64_t j0, int64_t j1) {
      std::vector<Acc> acc(tw);
      for (int64_t job = j0; job < j1; ++job) fold_tile(acc.data(), job, 0, red), store_tile(acc.data(), job);
    });
  }
}

// gx[o, i] = g[o] * prod_{j != i} x[o, j] over rows of length n, from prefix and suffix
// products: exact when the row holds zeros (dividing the product by x_i is not).
template <class T, class A>
void exclusive_prod_rows(const T* x, const T* g, T* out, int64_t rows, int64_t n) {
  std::vector<A> pre(size_t(std::max<int64_t>(n, 1)));
  for (int64_t o = 0; o < rows; ++o) {
    const T* xr = x + o * n;
    T* yr = out + o * n;
    A p = A(1), s = A(g[o]);
    for (int64_t i = 0; i < n; ++i) pre[i] = p, p *= A(xr[i]);
    for (int64_t i = n; i-- > 0;) yr[i] = T(pre[i] * s), s *= A(xr[i]);
  }
}

}  // namespace lucid::kernels
