#include "kernels/cpu/gelu.h"

#include <algorithm>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/vmath.h"

namespace lucid::kernels {

namespace {

// g is unused (null) for the forward; 4 then 8 lanes of the branch-free normal_cdf_pdf_f32.
template <bool Backward>
struct GeluBody {
  static LUCID_ALWAYS_INLINE void run(const float* x, const float* g, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const NormalCdfPdf c = normal_cdf_pdf_f32(x[i]);
      if constexpr (Backward) out[i] = float(double(g[i]) * (c.cdf + double(x[i]) * c.pdf));
      else out[i] = float(double(x[i]) * c.cdf);
    }
  }
};

// One block, compiled for AVX-512, AVX2 + FMA and baseline x86-64 (the double-precision tail
// math runs twice as wide in AVX-512 registers).
LUCID_CLONES_AVX512 void gelu_block_forward(const float* x, float* y, int64_t n) {
  GeluBody<false>::run(x, nullptr, y, n);
}
LUCID_CLONES_AVX512 void gelu_block_backward(const float* x, const float* g, float* dx, int64_t n) {
  GeluBody<true>::run(x, g, dx, n);
}

template <bool Backward>
void gelu_block(const float* x, const float* g, float* out, int64_t n) {
  if constexpr (Backward) gelu_block_backward(x, g, out, n);
  else gelu_block_forward(x, out, n);
}

template <bool Backward>
void gelu_f32(const float* x, const float* g, float* out, int64_t n) {
  if (n < 2 * kParallelGrain) return gelu_block<Backward>(x, g, out, n);
  constexpr int64_t kBlock = 8192;  // elements per scheduling unit; a multiple of the vector width
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(threads_for_work(n)) schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t i0 = b * kBlock, m = std::min(kBlock, n - i0);
    gelu_block<Backward>(x + i0, Backward ? g + i0 : nullptr, out + i0, m);
  }
}

}  // namespace

void gelu_forward_f32(const float* x, float* y, int64_t n) { gelu_f32<false>(x, nullptr, y, n); }
void gelu_backward_f32(const float* g, const float* x, float* dx, int64_t n) { gelu_f32<true>(x, g, dx, n); }

}  // namespace lucid::kernels
