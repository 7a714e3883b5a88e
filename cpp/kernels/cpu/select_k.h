// Row kernels for the order statistics that pick one element per row: kthvalue, median,
// nanmedian and mode over a contiguous (rows, n) array. Which element a tie (or a NaN) picks is
// part of the result (the index, and where the gradient goes), so each follows PyTorch's CPU
// algorithm step for step: kthvalue its median-of-three quickselect, median an nth_element over
// indices with ties broken by position, mode a sort of (value, index) pairs by value.
// NOTE: mode's std::sort is not stable past 16 elements; the index it returns among equal
// values is the one libstdc++'s introsort leaves last, as in PyTorch built with it.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "kernels/cpu/loops.h"

namespace lucid::kernels {

template <class A>
inline bool sel_isnan(A v) {
  return v != v;  // false for integers
}

// PyTorch's quick_select_template: partially orders (v, ix) so that position k holds the k-th
// smallest, NaN largest.
template <class A>
void quick_select(std::vector<A>& v, std::vector<int64_t>& ix, int64_t k) {
  auto gt = [](A a, A b) { return (sel_isnan(a) && !sel_isnan(b)) || a > b; };
  auto swp = [&](int64_t i, int64_t j) {
    std::swap(v[size_t(i)], v[size_t(j)]);
    std::swap(ix[size_t(i)], ix[size_t(j)]);
  };
  int64_t L = 0, R = int64_t(v.size()) - 1;
  for (;;) {
    if (R <= L) return;
    if (R == L + 1) {
      if (gt(v[size_t(L)], v[size_t(R)])) swp(L, R);
      return;
    }
    const int64_t P = L + (R - L) / 2;  // median of three as pivot
    swp(P, L + 1);
    if (gt(v[size_t(L + 1)], v[size_t(R)])) swp(L + 1, R);
    if (gt(v[size_t(L)], v[size_t(R)])) swp(L, R);
    if (gt(v[size_t(L + 1)], v[size_t(L)])) swp(L + 1, L);
    int64_t i = L + 1, j = R;
    const A piv = v[size_t(L)];
    for (;;) {
      do ++i;
      while (gt(piv, v[size_t(i)]));
      do --j;
      while (gt(v[size_t(j)], piv));
      if (j < i) break;
      swp(i, j);
    }
    swp(L, j);
    if (j <= k) L = i;
    if (j >= k) R = j - 1;
  }
}

template <class T, class A>
void kthvalue_rows(const T* x, T* vals, int64_t* idx, int64_t rows, int64_t n, int64_t k) {
  const bool par = rows > 1 && rows * n >= kParallelGrain;
#pragma omp parallel if (par) num_threads(lucid::num_threads())
  {
    std::vector<A> v(static_cast<size_t>(n));
    std::vector<int64_t> ix(static_cast<size_t>(n));
#pragma omp for schedule(dynamic, 1)
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < n; ++i) v[size_t(i)] = A(x[r * n + i]);
      std::iota(ix.begin(), ix.end(), int64_t(0));
      quick_select(v, ix, k - 1);
      idx[r] = ix[size_t(k - 1)];
      vals[r] = x[r * n + idx[r]];
    }
  }
}

// median: a row's first NaN if it has one, else the (n - 1) / 2-th smallest with ties in input
// order; nanmedian: the (n - nans - 1) / 2-th smallest of the numbers (a NaN if all are).
// NOTE: PyTorch runs nth_element over indices ordered by (value, index). That order is total
// over the numbers, so any selection over (value, index) pairs gives the same element, which is
// what the fast path does. Only an all-NaN row (nanmedian) leaves the order to the algorithm:
// there libstdc++'s nth_element runs with PyTorch's comparator, as in PyTorch.
template <class T, class A>
void median_rows(const T* x, T* vals, int64_t* idx, int64_t rows, int64_t n, bool ignore_nan) {
  const bool par = rows > 1 && rows * n >= kParallelGrain;
#pragma omp parallel if (par) num_threads(lucid::num_threads())
  {
    std::vector<std::pair<A, int64_t>> e;
    e.reserve(static_cast<size_t>(n));
#pragma omp for schedule(dynamic, 1)
    for (int64_t r = 0; r < rows; ++r) {
      const T* p = x + r * n;
      e.clear();
      int64_t first_nan = -1;
      for (int64_t i = 0; i < n; ++i) {
        const A v = A(p[i]);
        if (!sel_isnan(v)) e.emplace_back(v, i);
        else if (first_nan < 0) first_nan = i;
      }
      int64_t pick;
      if (first_nan >= 0 && !ignore_nan) {
        pick = first_nan;
      } else if (e.empty()) {  // nanmedian of NaNs only
        std::vector<int64_t> ix(static_cast<size_t>(n));
        std::iota(ix.begin(), ix.end(), int64_t(0));
        std::nth_element(ix.begin(), ix.begin(), ix.end(), [&](int64_t i, int64_t j) {
          const A a = A(p[i]), b = A(p[j]);
          return a < b || (a == b && i < j) || (sel_isnan(b) && !sel_isnan(a));
        });
        pick = ix[0];
      } else {
        const auto nth = e.begin() + (int64_t(e.size()) - 1) / 2;
        std::nth_element(e.begin(), nth, e.end(), [](const auto& a, const auto& b) {
          return a.first < b.first || (a.first == b.first && a.second < b.second);
        });
        pick = nth->second;
      }
      idx[r] = pick;
      vals[r] = p[pick];
    }
  }
}

// The most frequent value of each row (the smallest among equally frequent ones) and the
// index its run ends at after sorting (value, index) pairs by value.
template <class T, class A>
void mode_rows(const T* x, T* vals, int64_t* idx, int64_t rows, int64_t n) {
  const bool par = rows > 1 && rows * n >= kParallelGrain;
#pragma omp parallel if (par) num_threads(lucid::num_threads())
  {
    std::vector<std::pair<A, int64_t>> e(static_cast<size_t>(n));
#pragma omp for schedule(dynamic, 1)
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < n; ++i) e[size_t(i)] = {A(x[r * n + i]), i};
      std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      int64_t best = 0, run = 0, best_i = 0;
      for (int64_t i = 0; i < n; ++i) {
        ++run;
        if (i == n - 1 || e[size_t(i)].first != e[size_t(i + 1)].first) {
          if (run > best) best = run, best_i = e[size_t(i)].second;
          run = 0;
        }
      }
      idx[r] = best_i;
      vals[r] = x[r * n + best_i];
    }
  }
}

}  // namespace lucid::kernels
