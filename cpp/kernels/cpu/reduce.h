// Reduction over a sub-space: for each output element (iterated over the kept dims) the
// reduced dims are walked with their own strides. `visit(acc&, value)` folds one element;
// `finish(acc)` produces the stored value. Threads split the output elements.
#pragma once
#include "core/shape.h"
#include "kernels/cpu/loops.h"

namespace lucid::kernels {

struct ReduceGeom {
  Shape kept_shape, kept_strides;  // input strides along the kept dims
  Shape red_shape, red_strides;    // input strides along the reduced dims
};

template <class T, class Acc, class Visit, class Finish, class O>
void reduce_loop(const ReduceGeom& g, const T* x, O* out, Acc init, Visit visit, Finish finish) {
  Shape out_strides = contiguous_strides(g.kept_shape);
  LoopPlan<1> red = plan_loop<1>(g.red_shape, {&g.red_strides});
  const int64_t rn = red.shape.back(), rs = red.strides[0].back();
  int64_t red_total = numel_of(g.red_shape);
  int64_t red_rows = rn ? red_total / rn : 0;
  auto reduce_one = [&](const T* base) {
    Acc acc = init;
    if (red_total == 0) return finish(acc);
    auto row = [&](std::array<char*, 1> p, int64_t n, std::array<int64_t, 1> s) {
      const T* q = reinterpret_cast<const T*>(p[0]);
      if (s[0] == 1)
        for (int64_t i = 0; i < n; ++i) visit(acc, q[i]);
      else
        for (int64_t i = 0; i < n; ++i) visit(acc, q[i * s[0]]);
    };
    if (rs == 1 && red_rows == 1) {
      for (int64_t i = 0; i < rn; ++i) visit(acc, base[i]);
    } else {
      run_rows<1>(red, {reinterpret_cast<char*>(const_cast<T*>(base))}, {int64_t(sizeof(T))}, 0, red_rows, row);
    }
    return finish(acc);
  };
  strided_loop<2>(g.kept_shape, {&out_strides, &g.kept_strides},
                  {reinterpret_cast<char*>(out), reinterpret_cast<char*>(const_cast<T*>(x))},
                  {int64_t(sizeof(O)), int64_t(sizeof(T))},
                  [&](std::array<char*, 2> p, int64_t n, std::array<int64_t, 2> s) {
                    O* o = reinterpret_cast<O*>(p[0]);
                    const T* xi = reinterpret_cast<const T*>(p[1]);
                    for (int64_t i = 0; i < n; ++i) o[i * s[0]] = reduce_one(xi + i * s[1]);
                  });
}

}  // namespace lucid::kernels
