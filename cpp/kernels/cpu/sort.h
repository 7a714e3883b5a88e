// Row kernels for sort, argsort and topk over a contiguous (rows, n) array, one row per task.
// Order: NaN is larger than every number (PyTorch: last when ascending, first when descending).
// sort(stable=True) keeps equal values in input order. Without stable (and topk) the order of
// equal values is part of PyTorch's result, so a row holding ties runs PyTorch's CPU algorithm
// step for step: std::sort (sort), std::partial_sort or std::nth_element + std::sort of the
// first k-1 (topk), on (value, index) pairs compared by value only (torch_sort_row,
// torch_topk_row). Rows without ties have one order, found by the fast paths: a radix sort for
// long float rows; for topk with small k a heap of the k best seen so far, compared against its
// worst, so a row costs about one compare per element; larger k selects with nth_element.
// NOTE: libstdc++'s introsort is not stable past 16 elements; the order it leaves equal values
// in is the one PyTorch built with libstdc++ returns.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

// a < b with NaN largest (NaNs compare equal to each other).
template <class A>
inline bool nan_less(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) return !(a != a) && ((b != b) || a < b);
  else return a < b;
}

// A float's sort key as an unsigned integer: keys compare as nan_less orders the floats, with
// -0.0 equal to +0.0 and every NaN equal and largest; descending flips every bit. Sorting the
// keys stably gives the stable float order.
inline uint32_t float_sort_key(float f, bool descending) {
  uint32_t u = f32_to_bits(f);
  if (f != f) u = 0xffffffffu;
  else if (f == 0.0f) u = 0x80000000u;
  else u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return descending ? ~u : u;
}

// Stable LSD radix sort of one row of float keys, 8 bits a pass (passes where every key has the
// same digit are skipped): order[i] receives the input index of the i-th smallest key. `keys`
// (clobbered), `tmp_keys` and `tmp_order` are scratch of length n; returns the sorted keys (one
// of the two key buffers).
inline const uint32_t* radix_sort_row(uint32_t* keys, uint32_t* order, uint32_t* tmp_keys, uint32_t* tmp_order,
                                      int64_t n) {
  uint32_t count[4][257] = {};
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t k = keys[i];
    ++count[0][(k & 0xff) + 1], ++count[1][((k >> 8) & 0xff) + 1];
    ++count[2][((k >> 16) & 0xff) + 1], ++count[3][(k >> 24) + 1];
  }
  uint32_t *k_in = keys, *o_in = order, *k_out = tmp_keys, *o_out = tmp_order;
  for (int64_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  for (int pass = 0; pass < 4; ++pass) {
    uint32_t* c = count[pass];
    if (std::find(c + 1, c + 257, uint32_t(n)) != c + 257) continue;  // one digit value only
    for (int d = 0; d < 256; ++d) c[d + 1] += c[d];
    const int shift = 8 * pass;
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t pos = c[(k_in[i] >> shift) & 0xff]++;
      k_out[pos] = k_in[i];
      o_out[pos] = o_in[i];
    }
    std::swap(k_in, k_out);
    std::swap(o_in, o_out);
  }
  if (o_in != order) std::copy(o_in, o_in + n, order);
  return k_in;
}

// a and b are equivalent under nan_less (equal numbers, -0.0 and +0.0, or two NaNs).
template <class A>
inline bool nan_equiv(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) return a == b || (a != a && b != b);
  else return a == b;
}

// PyTorch's unstable sort of one row: std::sort of (value, index) pairs compared by value.
template <class T, class A>
void torch_sort_row(const T* xr, std::vector<std::pair<A, int64_t>>& buf, int64_t n, bool descending) {
  buf.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = {A(xr[i]), i};
  if (descending)
    std::sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) { return nan_less(b.first, a.first); });
  else
    std::sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) { return nan_less(a.first, b.first); });
}

// PyTorch's topk of one row (its topk_impl_loop): partial_sort when k * 64 <= n, else
// nth_element and, when sorted, std::sort of the first k - 1 (the k-th is already in place).
template <class T, class A>
void torch_topk_row(const T* xr, std::vector<std::pair<A, int64_t>>& buf, int64_t n, int64_t k, bool largest,
                    bool sorted) {
  using P = std::pair<A, int64_t>;
  buf.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = {A(xr[i]), i};
  auto run = [&](auto comp) {
    if (k * 64 <= n) {
      std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), comp);
    } else {
      std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end(), comp);
      if (sorted) std::sort(buf.begin(), buf.begin() + (k - 1), comp);
    }
  };
  if (largest) run([](const P& a, const P& b) { return nan_less(b.first, a.first); });
  else run([](const P& a, const P& b) { return nan_less(a.first, b.first); });
}

template <class T, class A>
void sort_rows(const T* x, T* vals, int64_t* idx, int64_t rows, int64_t n, bool descending, bool stable) {
  const bool par = rows > 1 && rows * n >= kParallelGrain;
  // Rows of float (or half) keys long enough to repay the histograms are radix sorted.
  if constexpr (std::is_same_v<A, float>) {
    if (n >= 256 && n < (int64_t(1) << 31)) {
#pragma omp parallel if (par) num_threads(lucid::num_threads())
      {
        std::vector<uint32_t> buf(static_cast<size_t>(4 * n));
        std::vector<std::pair<A, int64_t>> pairs;
        uint32_t *keys = buf.data(), *order = keys + n, *tk = order + n, *to = tk + n;
#pragma omp for schedule(dynamic, 1)
        for (int64_t r = 0; r < rows; ++r) {
          const T* xr = x + r * n;
          for (int64_t i = 0; i < n; ++i) keys[i] = float_sort_key(float(xr[i]), descending);
          const uint32_t* sorted = radix_sort_row(keys, order, tk, to, n);
          bool ties = false;
          if (!stable)  // equal keys sit next to each other once sorted
            for (int64_t i = 1; i < n && !ties; ++i) ties = sorted[i] == sorted[i - 1];
          if (ties) {
            torch_sort_row<T, A>(xr, pairs, n, descending);
            for (int64_t i = 0; i < n; ++i) {
              if (vals) vals[r * n + i] = xr[pairs[size_t(i)].second];
              idx[r * n + i] = pairs[size_t(i)].second;
            }
            continue;
          }
          for (int64_t i = 0; i < n; ++i) {
            if (vals) vals[r * n + i] = xr[order[i]];
            idx[r * n + i] = order[i];
          }
        }
      }
      return;
    }
  }
#pragma omp parallel if (par) num_threads(lucid::num_threads())
  {
    std::vector<std::pair<A, int64_t>> buf(static_cast<size_t>(n));
#pragma omp for schedule(dynamic, 1)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * n;
      if (!stable) {
        torch_sort_row<T, A>(xr, buf, n, descending);
      } else {
        for (int64_t i = 0; i < n; ++i) buf[size_t(i)] = {A(xr[i]), i};
        if (descending)
          std::stable_sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) { return nan_less(b.first, a.first); });
        else
          std::stable_sort(buf.begin(), buf.end(), [](const auto& a, const auto& b) { return nan_less(a.first, b.first); });
      }
      for (int64_t i = 0; i < n; ++i) {
        if (vals) vals[r * n + i] = xr[buf[size_t(i)].second];
        idx[r * n + i] = buf[size_t(i)].second;
      }
    }
  }
}

template <class T, class A>
void topk_rows(const T* x, T* vals, int64_t* idx, int64_t rows, int64_t n, int64_t k, bool largest, bool sorted) {
  if (k == 0) return;
  using P = std::pair<A, int64_t>;
  // better(a, b): a ranks before b (ties by the lower index).
  auto better = [largest](const P& a, const P& b) {
    if (largest ? nan_less(b.first, a.first) : nan_less(a.first, b.first)) return true;
    if (largest ? nan_less(a.first, b.first) : nan_less(b.first, a.first)) return false;
    return a.second < b.second;
  };
  const bool heap = k * 16 <= n;
  const bool par = rows > 1 && rows * n >= kParallelGrain;
#pragma omp parallel if (par) num_threads(lucid::num_threads())
  {
    std::vector<P> buf, pairs;
    buf.reserve(size_t(heap ? k : n));
#pragma omp for schedule(dynamic, 1)
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * n;
      buf.clear();
      if (heap) {
        for (int64_t i = 0; i < k; ++i) buf.push_back({A(xr[i]), i});
        std::make_heap(buf.begin(), buf.end(), better);  // front: the worst of the k kept
        A worst = buf.front().first;
        bool worst_nan = worst != worst;
        auto visit = [&](int64_t i) {
          const A v = A(xr[i]);
          // Strictly better than the worst kept (an equal value has a higher index: not better);
          // one compare per element while the worst is a number.
          const bool take = largest ? (!worst_nan && !(v <= worst)) : (worst_nan ? !(v != v) : v < worst);
          if (take) {
            std::pop_heap(buf.begin(), buf.end(), better);
            buf.back() = {v, i};
            std::push_heap(buf.begin(), buf.end(), better);
            worst = buf.front().first;
            worst_nan = worst != worst;
          }
        };
        // Blocks of 32 are first screened with one branch-free pass (vectorised): most blocks
        // hold nothing better than the worst kept and are skipped whole.
        constexpr int64_t kBlock = 32;
        int64_t i = k;
        for (; i + kBlock <= n; i += kBlock) {
          bool any = worst_nan;
          if (!worst_nan) {
            const T* xb = xr + i;
            int hits = 0;
            if (largest) {
              for (int64_t j = 0; j < kBlock; ++j) hits |= !(A(xb[j]) <= worst);  // NaN is taken too
            } else {
              for (int64_t j = 0; j < kBlock; ++j) hits |= A(xb[j]) < worst;
            }
            any = hits != 0;
          }
          if (any)
            for (int64_t j = 0; j < kBlock; ++j) visit(i + j);
        }
        for (; i < n; ++i) visit(i);
      } else {
        for (int64_t i = 0; i < n; ++i) buf.push_back({A(xr[i]), i});
        if (k < n) std::nth_element(buf.begin(), buf.begin() + (k - 1), buf.end(), better);
        buf.resize(size_t(k));
      }
      std::sort(buf.begin(), buf.end(), better);
      // A tie among the k kept, or between the k-th and one left out, makes PyTorch's order
      // (which equal value comes first, which one is kept) that of its algorithm; so does
      // sorted=False, whose order is nth_element's.
      bool ties = !sorted;
      for (int64_t i = 1; i < k && !ties; ++i) ties = nan_equiv(buf[size_t(i - 1)].first, buf[size_t(i)].first);
      if (!ties && k < n) {
        const A w = buf[size_t(k - 1)].first;
        int64_t same = 0;
        if (w != w) {
          for (int64_t i = 0; i < n; ++i) same += A(xr[i]) != A(xr[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) same += A(xr[i]) == w;
        }
        ties = same > 1;
      }
      const std::vector<P>& out = ties ? (torch_topk_row<T, A>(xr, pairs, n, k, largest, sorted), pairs) : buf;
      for (int64_t i = 0; i < k; ++i) {
        vals[r * k + i] = xr[out[size_t(i)].second];
        idx[r * k + i] = out[size_t(i)].second;
      }
    }
  }
}

}  // namespace lucid::kernels
