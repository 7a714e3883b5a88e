// Row gather and scatter-add for embedding. Gather copies bytes, so it serves every dtype;
// scatter-add accumulates in acc_t (the caller passes a float buffer for half weights).
#pragma once
#include <cstdint>
#include <cstring>

namespace lucid::kernels {

// out row r (contiguous, D elements of `isz` bytes) = weight row idx[r], read at (row stride rs,
// column stride cs) in elements.
inline void embedding_gather(const int64_t* idx, int64_t rows, const char* weight, int64_t rs, int64_t cs,
                             int64_t D, int64_t isz, char* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const char* src = weight + idx[r] * rs * isz;
    char* dst = out + r * D * isz;
    if (cs == 1) {
      std::memcpy(dst, src, size_t(D * isz));
    } else {
      for (int64_t d = 0; d < D; ++d) std::memcpy(dst + d * isz, src + d * cs * isz, size_t(isz));
    }
  }
}

// gw (contiguous V x D, zeroed by the caller) += g rows at their indices; the padding row is skipped.
template <class A, class T>
void embedding_scatter_add(const int64_t* idx, int64_t rows, const T* g, int64_t D, int64_t padding, A* gw) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = idx[r];
    if (i == padding) continue;
    A* dst = gw + i * D;
    const T* src = g + r * D;
    for (int64_t d = 0; d < D; ++d) dst[d] += A(src[d]);
  }
}

}  // namespace lucid::kernels
