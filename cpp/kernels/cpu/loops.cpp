// The loop drivers of loops.h, compiled once per operand count.
#include "kernels/cpu/loops.h"

#include "core/threads.h"

namespace lucid::kernels {

void parallel_threads(int nt, FnRef<void(int)> body) {
  if (nt <= 1) return body(0);
  const int64_t start = now_ns();
  int64_t own_end = start;  // when the calling thread finished its share (NOTE [contention guard])
#pragma omp parallel num_threads(nt)
  {
#pragma omp for schedule(static) nowait
    for (int t = 0; t < nt; ++t) body(t);
    if (omp_get_thread_num() == 0) own_end = now_ns();
  }
  note_region_wait(own_end - start, now_ns() - own_end);
}

// Runs rows [r0, r1) of the plan; `base` are the operands' element pointers (as char* with size).
template <size_t K>
void run_rows(const LoopPlan<K>& p, std::array<char*, K> base, const std::array<int64_t, K>& isz,
              int64_t r0, int64_t r1, RowFn<K> row) {
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

template <size_t K>
void strided_loop(const std::vector<int64_t>& shape,
                  const std::array<const std::vector<int64_t>*, K>& strides,
                  std::array<char*, K> base, std::array<int64_t, K> isz, RowFn<K> row) {
  int64_t total = 1;
  for (auto d : shape) total *= d;
  if (total == 0) return;
  const LoopPlan<K> p = plan_loop<K>(shape, strides);
  const int64_t n = p.shape.back();
  const int64_t rows = total / n;
  const int nt = int(std::min<int64_t>(lucid::num_threads(), total / kParallelGrain));
  if (nt <= 1) return run_rows<K>(p, base, isz, 0, rows, row);
  if (rows >= nt) {
    parallel_threads(nt, [&](int t) { run_rows<K>(p, base, isz, rows * t / nt, rows * (t + 1) / nt, row); });
    return;
  }
  // Few long rows: each thread takes a slice [c0, c1) of the inner dim of every row.
  parallel_threads(nt, [&](int t) {
    const int64_t c0 = n * t / nt, c1 = n * (t + 1) / nt;
    LoopPlan<K> q = p;
    q.shape.back() = c1 - c0;
    std::array<char*, K> b = base;
    for (size_t k = 0; k < K; ++k) b[k] += c0 * p.strides[k].back() * isz[k];
    run_rows<K>(q, b, isz, 0, rows, row);
  });
}

namespace {

// Rows [r0, r1) of the plan in blocks along its second-innermost dim (see strided_blocks).
template <size_t K>
void run_blocks(const LoopPlan<K>& p, std::array<char*, K> base, const std::array<int64_t, K>& isz, int64_t r0,
                int64_t r1, BlockFn<K> body) {
  const int64_t nd = int64_t(p.shape.size());
  const int64_t n = p.shape[nd - 1];
  std::array<int64_t, K> inner, outer{};
  for (size_t k = 0; k < K; ++k) inner[k] = p.strides[k][nd - 1];
  if (nd == 1) return body(base, n, inner, r1 - r0, outer);  // one row: r0 = 0, r1 = 1
  for (size_t k = 0; k < K; ++k) outer[k] = p.strides[k][nd - 2];
  const int64_t rows_per = p.shape[nd - 2];
  std::vector<int64_t> idx(size_t(nd - 1), 0);  // index of the current row over dims [0, nd - 1)
  int64_t r = r0;
  for (int64_t d = nd - 2; d >= 0; --d) idx[size_t(d)] = r % p.shape[size_t(d)], r /= p.shape[size_t(d)];
  std::array<char*, K> ptr;
  for (size_t k = 0; k < K; ++k) {
    int64_t off = 0;
    for (int64_t d = 0; d < nd - 1; ++d) off += idx[size_t(d)] * p.strides[k][size_t(d)];
    ptr[k] = base[k] + off * isz[k];
  }
  for (int64_t rr = r0; rr < r1;) {
    const int64_t j = idx[size_t(nd - 2)];
    const int64_t m = std::min(rows_per - j, r1 - rr);
    body(ptr, n, inner, m, outer);
    rr += m;
    if (rr >= r1) break;
    // Step to the next block: back to the start of this dim, then carry into the outer dims.
    for (size_t k = 0; k < K; ++k) ptr[k] -= j * outer[k] * isz[k];
    idx[size_t(nd - 2)] = 0;
    for (int64_t d = nd - 3; d >= 0; --d) {
      for (size_t k = 0; k < K; ++k) ptr[k] += p.strides[k][size_t(d)] * isz[k];
      if (++idx[size_t(d)] < p.shape[size_t(d)]) break;
      for (size_t k = 0; k < K; ++k) ptr[k] -= p.strides[k][size_t(d)] * p.shape[size_t(d)] * isz[k];
      idx[size_t(d)] = 0;
    }
  }
}

}  // namespace

template <size_t K>
void strided_blocks(const std::vector<int64_t>& shape,
                    const std::array<const std::vector<int64_t>*, K>& strides,
                    std::array<char*, K> base, std::array<int64_t, K> isz, BlockFn<K> body) {
  int64_t total = 1;
  for (auto d : shape) total *= d;
  if (total == 0) return;
  const LoopPlan<K> p = plan_loop<K>(shape, strides);
  const int64_t n = p.shape.back();
  const int64_t rows = total / n;
  const int nt = int(std::min<int64_t>(lucid::num_threads(), total / kParallelGrain));
  if (nt <= 1) return run_blocks<K>(p, base, isz, 0, rows, body);
  if (rows >= nt) {
    parallel_threads(nt, [&](int t) { run_blocks<K>(p, base, isz, rows * t / nt, rows * (t + 1) / nt, body); });
    return;
  }
  parallel_threads(nt, [&](int t) {  // few long rows: a slice of the inner dim each
    const int64_t c0 = n * t / nt, c1 = n * (t + 1) / nt;
    LoopPlan<K> q = p;
    q.shape.back() = c1 - c0;
    std::array<char*, K> b = base;
    for (size_t k = 0; k < K; ++k) b[k] += c0 * p.strides[k].back() * isz[k];
    run_blocks<K>(q, b, isz, 0, rows, body);
  });
}

#define LUCID_LOOPS_INSTANTIATE(K)                                                     \
  template void run_rows<K>(const LoopPlan<K>&, std::array<char*, K>,                  \
                            const std::array<int64_t, K>&, int64_t, int64_t, RowFn<K>); \
  template void strided_loop<K>(const std::vector<int64_t>&,                           \
                                const std::array<const std::vector<int64_t>*, K>&,     \
                                std::array<char*, K>, std::array<int64_t, K>, RowFn<K>); \
  template void strided_blocks<K>(const std::vector<int64_t>&,                         \
                                  const std::array<const std::vector<int64_t>*, K>&,   \
                                  std::array<char*, K>, std::array<int64_t, K>, BlockFn<K>);
LUCID_LOOPS_INSTANTIATE(1)
LUCID_LOOPS_INSTANTIATE(2)
LUCID_LOOPS_INSTANTIATE(3)
LUCID_LOOPS_INSTANTIATE(4)

}  // namespace lucid::kernels
