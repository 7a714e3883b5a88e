// CPU feature dispatch, in one place. The package is built for baseline x86-64 (the wheel must
// run on any x86-64, see CMakeLists.txt, so no -march=native); hot kernels carry a second copy
// compiled for AVX2 and pick it at run time, in one of two ways:
//  - run_best<Body, Isa>(args...): Body::run is an always_inline body (LUCID_ALWAYS_INLINE),
//    compiled once as is and once inside a target(...) wrapper (the inlined body takes the
//    wrapper's ISA); a CPU check made once per process picks the wrapper.
//  - LUCID_CLONES_AVX2 / LUCID_CLONES_AVX2_FMA / LUCID_CLONES_AVX512 on a function: GCC's
//    target_clones, the loader picks the copy. AVX512 adds an x86-64-v4 copy to the AVX2 + FMA
//    one, for kernels whose vectorised transcendental math gains from the wider registers.
//  - cpu_level(): for kernels written per instruction set (`#pragma GCC target` regions with
//    intrinsics, e.g. gelu.cpp), the x86-64 level this CPU runs, checked once per process.
#pragma once

#define LUCID_ALWAYS_INLINE inline __attribute__((always_inline))

#if defined(__x86_64__) && defined(__GNUC__)
#define LUCID_X86_DISPATCH 1
#define LUCID_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#define LUCID_CLONES_AVX2_FMA __attribute__((target_clones("arch=x86-64-v3", "default")))
#define LUCID_CLONES_AVX512 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define LUCID_X86_DISPATCH 0
#define LUCID_CLONES_AVX2
#define LUCID_CLONES_AVX2_FMA
#define LUCID_CLONES_AVX512
#endif

namespace lucid::kernels {

// x86-64 micro-architecture levels: V3 = AVX2 + FMA (+ BMI, F16C), V4 = V3 + AVX-512 F/BW/CD/DQ/VL.
enum class CpuLevel { Base, V3, V4 };

inline CpuLevel cpu_level() {
#if LUCID_X86_DISPATCH
  static const CpuLevel level = __builtin_cpu_supports("x86-64-v4")   ? CpuLevel::V4
                                : __builtin_cpu_supports("x86-64-v3") ? CpuLevel::V3
                                                                      : CpuLevel::Base;
  return level;
#else
  return CpuLevel::Base;
#endif
}

// The second copy's instruction set. Avx2 alone never contracts a * b + c into an FMA, so it
// rounds as the baseline copy does; Avx2Fma may.
// Avx512 (the x86-64-v4 level) falls back to Avx2Fma, then to the baseline copy.
enum class Isa { Avx2, Avx2Fma, Avx512 };

inline bool cpu_has(Isa isa) {
#if LUCID_X86_DISPATCH
  static const bool avx2 = __builtin_cpu_supports("avx2");
  static const bool fma = avx2 && __builtin_cpu_supports("fma");
  static const bool avx512 = fma && cpu_level() == CpuLevel::V4;
  return isa == Isa::Avx2 ? avx2 : isa == Isa::Avx2Fma ? fma : avx512;
#else
  (void)isa;
  return false;
#endif
}

namespace isa_detail {
template <class Body, class... Args>
void run_base(Args... a) {
  Body::run(a...);
}
#if LUCID_X86_DISPATCH
template <class Body, class... Args>
__attribute__((target("avx2"))) void run_avx2(Args... a) {
  Body::run(a...);
}
template <class Body, class... Args>
__attribute__((target("avx2,fma"))) void run_avx2_fma(Args... a) {
  Body::run(a...);
}
template <class Body, class... Args>
__attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))) void run_avx512(Args... a) {
  Body::run(a...);
}
#endif
}  // namespace isa_detail

// Body::run(a...) in the best copy this CPU can run.
template <class Body, Isa I = Isa::Avx2Fma, class... Args>
void run_best(Args... a) {
#if LUCID_X86_DISPATCH
  if constexpr (I == Isa::Avx512) {
    if (cpu_has(Isa::Avx512)) return isa_detail::run_avx512<Body>(a...);
    if (cpu_has(Isa::Avx2Fma)) return isa_detail::run_avx2_fma<Body>(a...);
  } else if (cpu_has(I)) {
    if constexpr (I == Isa::Avx2) return isa_detail::run_avx2<Body>(a...);
    else return isa_detail::run_avx2_fma<Body>(a...);
  }
#endif
  isa_detail::run_base<Body>(a...);
}

}  // namespace lucid::kernels
