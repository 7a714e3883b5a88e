// The state the mean/variance norms' backward nodes share (batch, group and layer norm; their
// forward, backward and double backward live in ops/batch_norm.cpp, group_norm.cpp and
// layer_norm.cpp): the saved statistics in the accumulation dtype, eps, the compute dtype, and
// the bias's shape and dtype (its gradient is returned in them). The statistics are freed with
// the saved inputs after a backward without retain_graph.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

// The norms' fused double backward kernels (kernels/cpu/norm_double.h) exist for float32 and
// float64 only. A float16/bfloat16 compute dtype runs the float32 kernel: operands are rounded to
// the compute dtype first, then widened (exactly), and results are rounded back to it, which gives
// the values a half-typed kernel computing in float32 would.
struct DoubleBackwardDtypes {
  DType cd, kd;  // compute dtype, kernel dtype
  explicit DoubleBackwardDtypes(DType compute)
      : cd(compute), kd(compute == DType::Float16 || compute == DType::BFloat16 ? DType::Float32 : compute) {}
  // A contiguous kernel operand (null stays null).
  TensorImplPtr in(const TensorImplPtr& t) const {
    return t ? contiguous_raw(cast_raw(cast_raw(t, cd), kd)) : nullptr;
  }
  // A kernel result in dtype `out` (null stays null).
  TensorImplPtr out(const TensorImplPtr& t, DType out) const {
    return t ? cast_raw(cast_raw(t, cd), out) : nullptr;
  }
};

template <class Derived>
struct MeanVarNormBackward : FuncOp<Derived, 3> {
  TensorImplPtr saved_mean_, saved_rstd_;
  double eps_ = 0;
  DType compute_dtype_ = kDefaultFloat;
  Shape bias_shape_;
  DType bias_dtype_ = kDefaultFloat;

  void release_saved() override {
    saved_mean_.reset();
    saved_rstd_.reset();
    FuncOp<Derived, 3>::release_saved();
  }
};

}  // namespace lucid
