// Pooling kernels over `planes` contiguous H x W planes (1-d pooling is H = 1). Each output
// position (oh, ow) reads a window that is separable: rows ah.begin[oh] + i * ah.step for i in
// [0, ah.count[oh]), columns likewise; windows are clipped to the image beforehand, so a kernel
// never tests bounds. Max windows keep PyTorch's rule: a NaN wins, else the first largest value;
// the index saved is h * W + w within the plane (PyTorch's `indices`).
// Average windows divide the sum by `divisor_override` when it is non-zero, else by
// ah.div[oh] * aw.div[ow] (the padded or clipped window size, chosen by the op); the adaptive
// form divides by the two clipped counts in turn (sum / kh / kw), as PyTorch does.
#pragma once
#include <cstdint>
#include <vector>

namespace lucid::kernels {

struct PoolAxis {
  std::vector<int64_t> begin, count, div;  // per output position along this axis
  int64_t step = 1;
};

struct PoolGeom {
  int64_t planes = 0, H = 0, W = 0;
  PoolAxis ah, aw;
  int64_t divisor_override = 0;
  bool adaptive = false;
  int64_t OH() const { return int64_t(ah.begin.size()); }
  int64_t OW() const { return int64_t(aw.begin.size()); }
};

// y (planes, OH, OW) = window maxima of x (planes, H, W); idx the argmax (h * W + w).
template <class T>
void max_pool_fwd(const T* x, const PoolGeom& g, T* y, int64_t* idx);

// y (planes, OH, OW) = window averages of x.
template <class T>
void avg_pool_fwd(const T* x, const PoolGeom& g, T* y);

// The adjoint of avg_pool_fwd: gx (planes, H, W) = sum over windows of gy / divisor (overwrites gx).
template <class T>
void avg_pool_adj(const T* gy, const PoolGeom& g, T* gx);

// The adjoint of the gather y = x[idx]: gx (planes, H, W) = scatter-add of gy at idx (overwrites gx).
template <class T>
void index_pool_adj(const T* gy, const int64_t* idx, const PoolGeom& g, T* gx);

// y (planes, OH, OW) = x[idx] per plane (max pooling with fixed indices: its linear part).
template <class T>
void index_pool_fwd(const T* x, const int64_t* idx, const PoolGeom& g, T* y);

}  // namespace lucid::kernels
