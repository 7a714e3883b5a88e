// Elementwise maps over strided operands of one iteration shape (inputs already broadcast:
// their strides are 0 along broadcast dims). The functor sees storage-type values; functors
// for half types convert to float themselves (see ops/ for acc_t use).
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"

namespace lucid::kernels {

// Value conversion between storage types; float -> int64 saturates (NaN -> 0) instead of UB.
template <class D, class S>
inline D convert(S s) {
  using A = acc_t<S>;
  if constexpr (std::is_same_v<D, int64_t> && std::is_floating_point_v<A>) {
    A v = A(s);
    if (!(v == v)) return 0;
    if (v >= A(9.2233720368547758e18)) return std::numeric_limits<int64_t>::max();
    if (v <= A(-9.2233720368547758e18)) return std::numeric_limits<int64_t>::min();
    return int64_t(v);
  } else if constexpr (std::is_same_v<D, bool>) {
    return A(s) != A(0);
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    return D(float(A(s)));
  } else {
    return static_cast<D>(A(s));
  }
}

// Flat loops for the common case: every operand contiguous with the output's shape. They skip
// the loop planning (a measurable share of a 4x4 op) and split over threads when large:
// run_flat runs chunk(i0, i1) over [0, n), whole on this thread when small.
template <class Chunk>
void run_flat(int64_t n, Chunk&& chunk) {
  if (n < 2 * kParallelGrain) return chunk(int64_t(0), n);
  parallel_chunks(threads_for_work(n), n, chunk);
}

// The flat loops' bodies. Each calls a local copy of the functor: see map1. Every dense loop here
// is marked `omp simd`: the op files that instantiate them compile at -O2 (cpp/CMakeLists.txt),
// whose vectoriser takes only loops so marked with the full cost model. (An output may alias an
// input only element for element, which a vector loop keeps.)
template <class O, class A, class F>
struct Map1Loop {
  static LUCID_ALWAYS_INLINE void run(int64_t i0, int64_t i1, O* out, const A* a, const F* f) {
    const F g = *f;
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) out[i] = g(a[i]);
  }
};
template <class O, class A, class B, class F>
struct Map2Loop {
  static LUCID_ALWAYS_INLINE void run(int64_t i0, int64_t i1, O* out, const A* a, const B* b, const F* f) {
    const F g = *f;
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) out[i] = g(a[i], b[i]);
  }
};

template <class O, class A, class F>
void map1_flat(int64_t n, O* out, const A* a, F f) {
  run_flat(n, [&](int64_t i0, int64_t i1) { Map1Loop<O, A, F>::run(i0, i1, out, a, &f); });
}
template <class O, class A, class B, class F>
void map2_flat(int64_t n, O* out, const A* a, const B* b, F f) {
  run_flat(n, [&](int64_t i0, int64_t i1) { Map2Loop<O, A, B, F>::run(i0, i1, out, a, b, &f); });
}
template <class O, class A, class B, class C, class F>
void map3_flat(int64_t n, O* out, const A* a, const B* b, const C* c, F f) {
  run_flat(n, [&](int64_t i0, int64_t i1) {
    const F g = f;
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) out[i] = g(a[i], b[i], c[i]);
  });
}

// map1_flat / map2_flat with the loop also compiled for AVX-512 and for AVX2 + FMA, the best
// picked at run time: for bodies of branch-free float math (vmath.h: exp, sigmoid, tanh, ...)
// that vectorise to the register width (4x the baseline's SSE2 lanes on AVX-512).
template <class O, class A, class F>
void map1_flat_wide(int64_t n, O* out, const A* a, F f) {
  run_flat(n, [&](int64_t i0, int64_t i1) { run_best<Map1Loop<O, A, F>, Isa::Avx512>(i0, i1, out, a, &f); });
}
template <class O, class A, class B, class F>
void map2_flat_wide(int64_t n, O* out, const A* a, const B* b, F f) {
  run_flat(n, [&](int64_t i0, int64_t i1) { run_best<Map2Loop<O, A, B, F>, Isa::Avx512>(i0, i1, out, a, b, &f); });
}

// The strided maps walk blocks of rows (strided_blocks): the checks on the inner strides are made
// once per block, and each row's loop is a plain (vectorisable) one when its operands are dense.
// NOTE: every loop calls a local copy g of the functor: a value it captures (masked_fill's fill
// value, a scalar operand) then cannot alias the output, so it stays in a register and the loop
// vectorises; read through the closure, each store to a float output forced a reload.
template <class O, class A, class F>
void map1(const Shape& shape, O* out, const Shape& os, const A* a, const Shape& as, F f) {
  strided_blocks<2>(shape, {&os, &as}, {reinterpret_cast<char*>(out), (char*)(a)},
                    {int64_t(sizeof(O)), int64_t(sizeof(A))},
                    [f](std::array<char*, 2> p, int64_t n, std::array<int64_t, 2> s, int64_t m,
                        std::array<int64_t, 2> t) {
                      O* o = reinterpret_cast<O*>(p[0]);
                      const A* x = reinterpret_cast<const A*>(p[1]);
                      const F g = f;
                      if (s[0] == 1 && s[1] == 1) {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1])
#pragma omp simd
                          for (int64_t i = 0; i < n; ++i) o[i] = g(x[i]);
                      } else if (s[0] == 1 && s[1] == 0) {  // a row of one broadcast value (expand)
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1]) {
                          const O v = g(*x);
#pragma omp simd
                          for (int64_t i = 0; i < n; ++i) o[i] = v;
                        }
                      } else {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1])
                          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = g(x[i * s[1]]);
                      }
                    });
}

template <class O, class A, class B, class F>
void map2(const Shape& shape, O* out, const Shape& os, const A* a, const Shape& as, const B* b,
          const Shape& bs, F f) {
  strided_blocks<3>(shape, {&os, &as, &bs},
                    {reinterpret_cast<char*>(out), (char*)(a), (char*)(b)},
                    {int64_t(sizeof(O)), int64_t(sizeof(A)), int64_t(sizeof(B))},
                    [f](std::array<char*, 3> p, int64_t n, std::array<int64_t, 3> s, int64_t m,
                        std::array<int64_t, 3> t) {
                      O* o = reinterpret_cast<O*>(p[0]);
                      const A* x = reinterpret_cast<const A*>(p[1]);
                      const B* y = reinterpret_cast<const B*>(p[2]);
                      const F g = f;
                      if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1], y += t[2])
#pragma omp simd
                          for (int64_t i = 0; i < n; ++i) o[i] = g(x[i], y[i]);
                      } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1], y += t[2]) {
                          const B yv = *y;
#pragma omp simd
                          for (int64_t i = 0; i < n; ++i) o[i] = g(x[i], yv);
                        }
                      } else if (s[0] == 1 && s[1] == 0 && s[2] == 0) {  // both broadcast along the row
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1], y += t[2]) {
                          const O v = g(*x, *y);
#pragma omp simd
                          for (int64_t i = 0; i < n; ++i) o[i] = v;
                        }
                      } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1], y += t[2]) {
                          const A xv = *x;
#pragma omp simd
                          for (int64_t i = 0; i < n; ++i) o[i] = g(xv, y[i]);
                        }
                      } else {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1], y += t[2])
                          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = g(x[i * s[1]], y[i * s[2]]);
                      }
                    });
}

template <class O, class A, class B, class C, class F>
void map3(const Shape& shape, O* out, const Shape& os, const A* a, const Shape& as, const B* b,
          const Shape& bs, const C* c, const Shape& cs, F f) {
  strided_blocks<4>(shape, {&os, &as, &bs, &cs},
                    {reinterpret_cast<char*>(out), (char*)(a), (char*)(b), (char*)(c)},
                    {int64_t(sizeof(O)), int64_t(sizeof(A)), int64_t(sizeof(B)), int64_t(sizeof(C))},
                    [f](std::array<char*, 4> p, int64_t n, std::array<int64_t, 4> s, int64_t m,
                        std::array<int64_t, 4> t) {
                      O* o = reinterpret_cast<O*>(p[0]);
                      const A* x = reinterpret_cast<const A*>(p[1]);
                      const B* y = reinterpret_cast<const B*>(p[2]);
                      const C* z = reinterpret_cast<const C*>(p[3]);
                      const F g = f;
                      if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1], y += t[2], z += t[3])
#pragma omp simd
                          for (int64_t i = 0; i < n; ++i) o[i] = g(x[i], y[i], z[i]);
                      } else {
                        for (int64_t j = 0; j < m; ++j, o += t[0], x += t[1], y += t[2], z += t[3])
                          for (int64_t i = 0; i < n; ++i) o[i * s[0]] = g(x[i * s[1]], y[i * s[2]], z[i * s[3]]);
                      }
                    });
}

}  // namespace lucid::kernels
