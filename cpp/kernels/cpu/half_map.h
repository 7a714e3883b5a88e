// float16 and bfloat16 elementwise work computed through the float32 instantiation of a kernel.
// Half types are storage types (every op computes them in float32 anyway), so instead of
// compiling each functor's loops again for them, the operands are converted to float32 by blocks
// of kHalfBlock elements per row, the float32 kernel runs on the block, and its results are
// rounded back into the half-typed (or bool) output. The block loop is compiled once here.
#pragma once
#include <array>

#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/cpu/loops.h"

namespace lucid {

// float16 and bfloat16: storage types whose elementwise ops compute through float32.
inline bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

// As LUCID_DISPATCH (core/dtype.h) without float16 and bfloat16, for callers that compute those
// through half_map below; reaching the default case for them is a bug.
#define LUCID_DISPATCH_NO_HALF(dtype, opname, ...)                                 \
  switch (dtype) {                                                                 \
    LUCID_DISPATCH_CASE(Bool, bool, __VA_ARGS__)                                   \
    LUCID_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float32, float, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float64, double, __VA_ARGS__)                              \
    default: throw ::lucid::DtypeMismatch(::lucid::str(opname, ": unsupported dtype")); \
  }
// int64, float32 and float64: the dtypes of an op that keeps integers and refuses bool.
#define LUCID_DISPATCH_NUMERIC_NO_HALF(dtype, opname, ...)                         \
  switch (dtype) {                                                                 \
    LUCID_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float32, float, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float64, double, __VA_ARGS__)                              \
    default: throw ::lucid::DtypeMismatch(::lucid::str(                            \
        opname, ": unsupported dtype ", ::lucid::dtype_name(dtype)));               \
  }
// float32 and float64 only, the floating counterpart of LUCID_DISPATCH_NO_HALF.
#define LUCID_DISPATCH_FLOAT_NO_HALF(dtype, opname, ...)                           \
  switch (dtype) {                                                                 \
    LUCID_DISPATCH_CASE(Float32, float, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float64, double, __VA_ARGS__)                              \
    default: throw ::lucid::DtypeMismatch(::lucid::str(                            \
        opname, ": expected a floating dtype, got ", ::lucid::dtype_name(dtype))); \
  }

}  // namespace lucid

namespace lucid::kernels {

inline constexpr int64_t kHalfBlock = 512;

// body(out, in, m): the float32 kernel over m contiguous elements: reads in[k][0:m], writes m
// float32 values to `out` (or m bools when the output is bool).
template <size_t NIn>
using HalfBody = FnRef<void(void*, std::array<const float*, NIn>, int64_t)>;

// out[i] = body(in[0][i], ...) over `shape`. The inputs are of dtype `dt` (float16 or bfloat16)
// with strides `is` (already broadcast: 0 along broadcast dims); the output, with strides `os`,
// is of dtype `dt` or, with out_bool, bool. Large loops split over threads like strided_loop.
template <size_t NIn>
void half_map(DType dt, bool out_bool, const Shape& shape, void* out, const Shape& os,
              std::array<const void*, NIn> in, std::array<const Shape*, NIn> is, HalfBody<NIn> body);

#define LUCID_HALF_MAP_EXTERN(K)                                                                   \
  extern template void half_map<K>(DType, bool, const Shape&, void*, const Shape&,                 \
                                   std::array<const void*, K>, std::array<const Shape*, K>, HalfBody<K>);
LUCID_HALF_MAP_EXTERN(1)
LUCID_HALF_MAP_EXTERN(2)
LUCID_HALF_MAP_EXTERN(3)
#undef LUCID_HALF_MAP_EXTERN

}  // namespace lucid::kernels
