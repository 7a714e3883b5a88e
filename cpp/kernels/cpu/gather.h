// Indirect loops for indexing: gather reads src at (strided position + an element offset
// taken from an int64 operand), scatter writes or accumulates there. The offsets are computed
// and range-checked by the op before any kernel runs, so kernels never see a bad index.
// Scatter is serial: duplicate offsets must accumulate (index_put with accumulate) and the
// last write must win deterministically, which a thread split would break.
#pragma once
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/cpu/loops.h"

namespace lucid::kernels {

// The same plan as strided_loop, always on the calling thread.
template <size_t K, class Row>
void serial_loop(const Shape& shape, const std::array<const Shape*, K>& strides,
                 std::array<char*, K> base, std::array<int64_t, K> isz, Row row) {
  if (numel_of(shape) == 0) return;
  LoopPlan<K> p = plan_loop<K>(shape, strides);
  run_rows<K>(p, base, isz, 0, numel_of(shape) / p.shape.back(), row);
}

// out[i] = src[pos_src(i) + off[pos_off(i)]] over `shape`.
template <class T>
void gather(const Shape& shape, T* out, const Shape& os, const T* src, const Shape& ss,
            const int64_t* off, const Shape& fs) {
  strided_loop<3>(shape, {&os, &ss, &fs}, {(char*)out, (char*)src, (char*)off},
                  {int64_t(sizeof(T)), int64_t(sizeof(T)), int64_t(sizeof(int64_t))},
                  [](std::array<char*, 3> p, int64_t n, std::array<int64_t, 3> s) {
                    T* o = reinterpret_cast<T*>(p[0]);
                    const T* x = reinterpret_cast<const T*>(p[1]);
                    const int64_t* f = reinterpret_cast<const int64_t*>(p[2]);
                    for (int64_t i = 0; i < n; ++i) o[i * s[0]] = x[i * s[1] + f[i * s[2]]];
                  });
}

// dst[pos_dst(i) + off[pos_off(i)]] = val[pos_val(i)] (or += when accumulate), in order.
template <class T>
void scatter(const Shape& shape, T* dst, const Shape& ds, const int64_t* off, const Shape& fs,
             const T* val, const Shape& vs, bool accumulate) {
  serial_loop<3>(shape, {&ds, &fs, &vs}, {(char*)dst, (char*)off, (char*)val},
                 {int64_t(sizeof(T)), int64_t(sizeof(int64_t)), int64_t(sizeof(T))},
                 [accumulate](std::array<char*, 3> p, int64_t n, std::array<int64_t, 3> s) {
                   T* d = reinterpret_cast<T*>(p[0]);
                   const int64_t* f = reinterpret_cast<const int64_t*>(p[1]);
                   const T* v = reinterpret_cast<const T*>(p[2]);
                   if (accumulate) {
                     using A = acc_t<T>;
                     for (int64_t i = 0; i < n; ++i) {
                       T& t = d[i * s[0] + f[i * s[1]]];
                       t = T(A(t) + A(v[i * s[2]]));
                     }
                   } else {
                     for (int64_t i = 0; i < n; ++i) d[i * s[0] + f[i * s[1]]] = v[i * s[2]];
                   }
                 });
}

}  // namespace lucid::kernels
