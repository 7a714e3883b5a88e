// The state the mean/variance norms' backward nodes share (batch, group and layer norm; their
// forward, backward and double backward live in ops/batch_norm.cpp, group_norm.cpp and
// layer_norm.cpp): the saved statistics in the accumulation dtype, eps, the compute dtype, and
// the bias's shape and dtype (its gradient is returned in them). The statistics are freed with
// the saved inputs after a backward without retain_graph.
#pragma once
#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

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
