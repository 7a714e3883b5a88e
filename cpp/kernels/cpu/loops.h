// Strided loops over K operands that share one iteration shape. Dims are coalesced where
// every operand is contiguous across them, so a contiguous tensor runs as one flat row.
// `row(ptrs, n, inner_strides)` is called for each innermost row with byte-free element
// offsets already applied to the operands' base pointers. Large loops split rows over
// OpenMP threads; small ones stay serial (a parallel region costs microseconds).
#pragma once
#include <omp.h>

#include <array>
#include <cstdint>
#include <vector>

namespace lucid::kernels {

constexpr int64_t kParallelGrain = 32768;  // elements per thread below which we stay serial

template <size_t K>
struct LoopPlan {
  std::vector<int64_t> shape;                   // coalesced, innermost last
  std::array<std::vector<int64_t>, K> strides;  // in elements, per operand
};

template <size_t K>
LoopPlan<K> plan_loop(const std::vector<int64_t>& shape,
                      const std::array<const std::vector<int64_t>*, K>& strides) {
  LoopPlan<K> p;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;  // size-1 dims never move a pointer
    bool merge = !p.shape.empty();
    for (size_t k = 0; k < K && merge; ++k)
      merge = p.strides[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      p.shape.back() *= shape[d];
      for (size_t k = 0; k < K; ++k) p.strides[k].back() = (*strides[k])[d];
    } else {
      p.shape.push_back(shape[d]);
      for (size_t k = 0; k < K; ++k) p.strides[k].push_back((*strides[k])[d]);
    }
  }
  if (p.shape.empty()) {  // 0-d or all-ones: one row of one element
    p.shape.push_back(1);
    for (size_t k = 0; k < K; ++k) p.strides[k].push_back(0);
  }
  return p;
}

// Runs rows [r0, r1) of the plan; `base` are the operands' element pointers (as char* with size).
template <size_t K, class Row>
void run_rows(const LoopPlan<K>& p, std::array<char*, K> base, const std::array<int64_t, K>& isz,
              int64_t r0, int64_t r1, Row& row) {
  const int64_t nd = int64_t(p.shape.size());
  const int64_t n = p.shape[nd - 1];
  std::array<int64_t, K> inner;
  for (size_t k = 0; k < K; ++k) inner[k] = p.strides[k][nd - 1];
  std::vector<int64_t> idx(nd > 1 ? nd - 1 : 1, 0);
  // Decompose r0 into the outer index once, then count up.
  int64_t r = r0;
  for (int64_t d = nd - 2; d >= 0; --d) {
    idx[d] = r % p.shape[d];
    r /= p.shape[d];
  }
  std::array<char*, K> ptr;
  for (size_t k = 0; k < K; ++k) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd - 1; ++d) off += idx[d] * p.strides[k][d];
    ptr[k] = base[k] + off * isz[k];
  }
  for (int64_t rr = r0; rr < r1; ++rr) {
    row(ptr, n, inner);
    for (int64_t d = nd - 2; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) ptr[k] += p.strides[k][d] * isz[k];
      if (++idx[d] < p.shape[d]) break;
      for (size_t k = 0; k < K; ++k) ptr[k] -= p.strides[k][d] * p.shape[d] * isz[k];
      idx[d] = 0;
    }
  }
}

template <size_t K, class Row>
void strided_loop(const std::vector<int64_t>& shape,
                  const std::array<const std::vector<int64_t>*, K>& strides,
                  std::array<char*, K> base, std::array<int64_t, K> isz, Row row) {
  int64_t total = 1;
  for (auto d : shape) total *= d;
  if (total == 0) return;
  LoopPlan<K> p = plan_loop<K>(shape, strides);
  const int64_t n = p.shape.back();
  const int64_t rows = total / n;
  int nthreads = int(std::min<int64_t>(omp_get_max_threads(), total / kParallelGrain));
  if (nthreads <= 1) {
    run_rows<K>(p, base, isz, 0, rows, row);
    return;
  }
  if (rows < nthreads) {  // few long rows: split the inner dim instead
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (int t = 0; t < nthreads; ++t) {
      int64_t c0 = n * t / nthreads, c1 = n * (t + 1) / nthreads;
      for (int64_t r = 0; r < rows; ++r) {
        LoopPlan<K> q = p;
        std::array<char*, K> b = base;
        for (size_t k = 0; k < K; ++k) b[k] += c0 * p.strides[k].back() * isz[k];
        q.shape.back() = c1 - c0;
        Row rw = row;
        run_rows<K>(q, b, isz, r, r + 1, rw);
      }
    }
    return;
  }
#pragma omp parallel for num_threads(nthreads) schedule(static)
  for (int t = 0; t < nthreads; ++t) {
    Row rw = row;
    run_rows<K>(p, base, isz, rows * t / nthreads, rows * (t + 1) / nthreads, rw);
  }
}

}  // namespace lucid::kernels
