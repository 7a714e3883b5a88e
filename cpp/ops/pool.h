// Pooling (PyTorch's max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d)
// over (N, C, [H,] W) or unbatched (C, [H,] W) inputs; 1-d pooling is 2-d pooling on H = 1.
// Output size per dim: floor or ceil((in + 2 p - d (k - 1) - 1) / s) + 1, where ceil mode drops a
// last window that would start in the right padding; adaptive windows are
// [floor(o * in / out), ceil((o + 1) * in / out)).
// Given its windows (and, for max, the argmax indices it saves), every pooling is a linear map
// of its input, so one plan serves forward, backward (the adjoint map) and any higher order:
//   max:  y = x[idx],  dx = scatter_add(dy at idx);   avg:  y = A x,  dx = A^T dy.
// Saved: the plan (windows, divisors, indices); no input. AmpPolicy KeepInput.
#pragma once
#include <array>
#include <memory>
#include <string>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"
#include "kernels/cpu/pool.h"

namespace lucid {

enum class PoolKind { Max, Avg, AdaptiveMax, AdaptiveAvg };

// One call's arguments, per spatial dim (index 0 = H, 1 = W; H is 1 for 1-d).
struct PoolSpec {
  int dims = 2;
  PoolKind kind = PoolKind::Max;
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, padding{0, 0}, dilation{1, 1};
  std::array<int64_t, 2> output_size{-1, -1};  // adaptive only; -1 keeps the input's size
  bool ceil_mode = false, count_include_pad = true;
  int64_t divisor_override = 0;  // 0 = none
};

// The windows of one call and, for max pooling, the argmax of each window.
struct PoolPlan {
  kernels::PoolGeom geom;
  bool by_index = false;  // max pooling: y = x[indices]
  TensorImplPtr indices;  // int64, contiguous, shape y_shape
  Shape x_shape, y_shape;
};

struct PoolBackward : FuncOp<PoolBackward, 1> {
  static const OpSchema& schema_v1;  // {pool, 1, KeepInput, produces_grad}
  std::shared_ptr<const PoolPlan> plan_;
  DType x_dtype_ = kDefaultFloat;
  const char* name_ = "PoolBackward";
  const char* name() const override { return name_; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

// {output, indices} (indices null unless max pooling). `op` names the caller in errors.
std::array<TensorImplPtr, 2> pool(const TensorImplPtr& x, const PoolSpec& spec, const char* op);

}  // namespace lucid
