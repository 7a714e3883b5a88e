// DType: the six element types, their C++ storage types, promotion, and the one dtype switch.
// float16 and bfloat16 are storage types: kernels load them as float and accumulate in float
// (acc_t<T>), so no arithmetic is ever done in 16 bits. Conversions round to nearest even.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.h"

namespace lucid {

enum class DType : int8_t { Bool = 0, Int64, Float16, BFloat16, Float32, Float64 };

inline uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(from_float(f)) {}  // NOLINT: implicit like a builtin float type
  operator float() const { return to_float(x); }
  static uint16_t from_float(float f) {
    uint32_t u = f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
    if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: overflow to inf
    if (a < 0x38800000u) {  // subnormal or zero in half: scale into the integer range, round
      float v = bits_f32(a) * 16777216.0f;  // 2^24: one half subnormal ulp becomes 1
      return uint16_t(sign | uint32_t(std::nearbyint(v)));
    }
    uint32_t mant_odd = (a >> 13) & 1u;
    a += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return uint16_t(sign | (a >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) return bits_f32(sign) + (sign ? -1.f : 1.f) * float(m) * 5.9604644775390625e-8f;
    if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
    return bits_f32(sign | ((e + 112) << 23) | (m << 13));
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}  // NOLINT
  operator float() const { return bits_f32(uint32_t(x) << 16); }
  static uint16_t from_float(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // keep NaN a NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return uint16_t(u >> 16);
  }
};

template <class T> struct Acc { using type = T; };
template <> struct Acc<Half> { using type = float; };
template <> struct Acc<BFloat16> { using type = float; };
template <> struct Acc<bool> { using type = int64_t; };
template <class T> using acc_t = typename Acc<T>::type;

inline size_t itemsize(DType d) {
  switch (d) {
    case DType::Bool: return 1;
    case DType::Float16: case DType::BFloat16: return 2;
    case DType::Float32: return 4;
    default: return 8;
  }
}
inline const char* dtype_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}
inline bool is_floating(DType d) { return d >= DType::Float16; }

// PyTorch's promotion lattice: bool < int64 < floating; among floats the wider wins,
// and float16 with bfloat16 gives float32.
inline DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  return a > b ? a : b;
}

inline constexpr DType kDefaultFloat = DType::Float32;

// The dtype a floating dtype accumulates in (acc_t's DType): float64 for float64, else float32.
inline DType acc_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

// The one dtype switch: binds `scalar_t` to the storage type of `dtype` and runs the body.
#define LUCID_DISPATCH_CASE(enum_v, ctype, ...) \
  case ::lucid::DType::enum_v: { using scalar_t = ctype; __VA_ARGS__(); break; }
#define LUCID_DISPATCH(dtype, opname, ...)                                         \
  switch (dtype) {                                                                 \
    LUCID_DISPATCH_CASE(Bool, bool, __VA_ARGS__)                                   \
    LUCID_DISPATCH_CASE(Int64, int64_t, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float16, ::lucid::Half, __VA_ARGS__)                       \
    LUCID_DISPATCH_CASE(BFloat16, ::lucid::BFloat16, __VA_ARGS__)                  \
    LUCID_DISPATCH_CASE(Float32, float, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float64, double, __VA_ARGS__)                              \
    default: throw ::lucid::DtypeMismatch(::lucid::str(opname, ": unsupported dtype")); \
  }
// Floating dtypes only; anything else is a DtypeMismatch naming the op.
#define LUCID_DISPATCH_FLOAT(dtype, opname, ...)                                   \
  switch (dtype) {                                                                 \
    LUCID_DISPATCH_CASE(Float16, ::lucid::Half, __VA_ARGS__)                       \
    LUCID_DISPATCH_CASE(BFloat16, ::lucid::BFloat16, __VA_ARGS__)                  \
    LUCID_DISPATCH_CASE(Float32, float, __VA_ARGS__)                               \
    LUCID_DISPATCH_CASE(Float64, double, __VA_ARGS__)                              \
    default: throw ::lucid::DtypeMismatch(::lucid::str(                            \
        opname, ": expected a floating dtype, got ", ::lucid::dtype_name(dtype))); \
  }

}  // namespace lucid
