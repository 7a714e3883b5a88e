// The reducers of ops/reduce.cpp, run by kernels::reduce_dense (or reduce_loop): each folds
// values into an accumulator (Acc) and finishes one output element. Accumulation types:
// float32 sums in double (SumAcc), half types in float, float64 in double, integers in int64.
// NaN propagates through the extrema (the first NaN wins argmax/argmin), as in PyTorch.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/dtype.h"
#include "core/shape.h"  // elementwise.h uses Shape
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

template <class T> struct SumAcc { using type = acc_t<T>; };
template <> struct SumAcc<float> { using type = double; };  // NOTE: float32 sums accumulate in double

template <class A> bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(v);
  else return false;
}

template <class T, class O = T>
struct SumR {
  using In = T;
  using Out = O;
  using Acc = typename SumAcc<T>::type;
  Acc div = Acc(1);  // the mean divides by the count
  Acc init(int64_t) const { return Acc(0); }
  void visit(Acc& a, T v, int64_t) const { a += Acc(acc_t<T>(v)); }
  void combine(Acc& a, const Acc& b) const { a += b; }
  Out finish(const Acc& a, int64_t) const { return convert<O>(Acc(a / div)); }
};

template <class T>
struct ProdR {
  using In = T;
  using Out = std::conditional_t<std::is_floating_point_v<acc_t<T>>, T, int64_t>;
  using Acc = typename SumAcc<T>::type;
  Acc init(int64_t) const { return Acc(1); }
  void visit(Acc& a, T v, int64_t) const { a *= Acc(acc_t<T>(v)); }
  void combine(Acc& a, const Acc& b) const { a *= b; }
  Out finish(const Acc& a, int64_t) const { return convert<Out>(a); }
};

// Extremum value; NaN wins (propagates) as in PyTorch.
template <class T, bool IsMax, class O = T>
struct ExtR {
  using In = T;
  using Out = O;
  using Acc = acc_t<T>;
  static Acc identity() {
    if constexpr (std::is_floating_point_v<Acc>)
      return IsMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    else
      return IsMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
  }
  static void fold(Acc& a, Acc v) { a = ((IsMax ? v > a : v < a) || is_nan(v)) ? v : a; }
  Acc init(int64_t) const { return identity(); }
  void visit(Acc& a, T v, int64_t) const { fold(a, Acc(v)); }
  void combine(Acc& a, const Acc& b) const { fold(a, b); }
  Out finish(const Acc& a, int64_t) const { return convert<O>(a); }
};

// Index of the first extremal element (first NaN if any); optionally stores the value too.
template <class T, bool IsMax>
struct ArgR {
  using In = T;
  using Out = int64_t;
  using A = acc_t<T>;
  struct Acc {
    A v;
    int64_t i;
  };
  T* vals = nullptr;
  static bool better(A v, A a) { return (IsMax ? v > a : v < a) || (is_nan(v) && !is_nan(a)); }
  Acc init(int64_t) const { return {A(0), -1}; }
  void visit(Acc& a, T v, int64_t k) const {
    A x = A(v);
    if (a.i < 0 || better(x, a.v)) a = {x, k};
  }
  void combine(Acc& a, const Acc& b) const {
    if (b.i < 0) return;
    if (a.i < 0 || better(b.v, a.v) || (!better(a.v, b.v) && b.i < a.i)) a = b;
  }
  Out finish(const Acc& a, int64_t o) const {
    if (vals) vals[o] = convert<T>(a.v);
    return a.i;
  }
};

// Sum of squared deviations from a precomputed per-output centre (the mean), corrected by
// the residual sum: m2 = sum d^2 - (sum d)^2 / n, the two-pass algorithm that stays accurate
// when the mean is large relative to the spread.
template <class T>
struct VarR {
  using In = T;
  using Out = T;
  using A = typename SumAcc<T>::type;
  struct Acc {
    A c, s, ss;
  };
  const A* centre;
  A n, div;
  bool take_sqrt;
  Acc init(int64_t o) const { return {centre[o], A(0), A(0)}; }
  void visit(Acc& a, T v, int64_t) const {
    A d = A(acc_t<T>(v)) - a.c;
    a.s += d;
    a.ss += d * d;
  }
  void combine(Acc& a, const Acc& b) const { a.s += b.s, a.ss += b.ss; }
  Out finish(const Acc& a, int64_t) const {
    A m2 = a.ss - a.s * a.s / n;
    if (m2 < A(0)) m2 = A(0);  // rounding; NaN (from a NaN or an infinite element) stays NaN
    if (n == A(0)) m2 = std::numeric_limits<A>::quiet_NaN();
    A v = m2 / div;
    return convert<T>(take_sqrt ? std::sqrt(v) : v);
  }
};

template <class T>
struct LseR {
  using In = T;
  using Out = T;
  using M = acc_t<T>;
  using S = typename SumAcc<T>::type;
  struct Acc {
    M m;
    S s;
  };
  const M* mx;
  Acc init(int64_t o) const { return {mx[o], S(0)}; }
  void visit(Acc& a, T v, int64_t) const {
    if constexpr (std::is_same_v<M, float>) a.s += S(exp_f32(M(v) - a.m));
    else a.s += S(std::exp(M(v) - a.m));
  }
  void combine(Acc& a, const Acc& b) const { a.s += b.s; }
  Out finish(const Acc& a, int64_t) const {
    if (!std::isfinite(a.m)) return convert<T>(a.m);  // +-inf or NaN decide alone
    return convert<T>(S(std::log(a.s)) + S(a.m));
  }
};

enum class NormKind { L0, L1, L2, Lp, LInf, LNegInf };

template <class T>
struct NormR {
  using In = T;
  using Out = T;
  using Acc = typename SumAcc<T>::type;
  NormKind kind;
  Acc p;
  Acc init(int64_t) const {
    return kind == NormKind::LNegInf ? std::numeric_limits<Acc>::infinity() : Acc(0);
  }
  void combine(Acc& a, const Acc& b) const {
    if (kind == NormKind::LInf) a = (b > a || std::isnan(b)) ? b : a;
    else if (kind == NormKind::LNegInf) a = (b < a || std::isnan(b)) ? b : a;
    else a += b;
  }
  void visit(Acc& a, T v, int64_t) const {
    Acc x = std::abs(Acc(acc_t<T>(v)));
    switch (kind) {
      case NormKind::L0: a += Acc(x != Acc(0)); break;
      case NormKind::L1: a += x; break;
      case NormKind::L2: a += x * x; break;
      case NormKind::Lp: a += std::pow(x, p); break;
      default: combine(a, x);
    }
  }
  Out finish(const Acc& a, int64_t) const {
    if (kind == NormKind::L2) return convert<T>(std::sqrt(a));
    if (kind == NormKind::Lp) return convert<T>(std::pow(a, Acc(1) / p));
    return convert<T>(a);
  }
};

}  // namespace lucid::kernels
