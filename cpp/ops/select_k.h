// Order statistics that pick one element (per row along a dim, or of the whole tensor), and the
// two ways PyTorch routes their gradient:
//  - SelectBackward (max(dim), min(dim), median(dim), nanmedian(dim), kthvalue, mode): the
//    gradient goes to the returned index alone, zeros elsewhere; saved: the indices.
//  - EvenSplitBackward (amax/amin over dims; max(), min(), median(), nanmedian() of all elements):
//    the gradient is split evenly among the elements equal to the result (per reduced slice):
//    dx = (g / count(mask)) * mask; for max/min/median/nanmedian the mask is the NaNs when the
//    result is NaN (amax/amin compare, so a NaN result gives NaN gradients, as PyTorch).
//    Saved: x and the result.
// Node names are PyTorch's, overload number included (MaxBackward0 is max(dim), MaxBackward1 max()).
// kthvalue/median/mode values and indices follow PyTorch's CPU algorithms, ties and NaN included
// (kernels/cpu/select_k.h). A zero-size reduced dim raises IndexError, k outside [1, n] LucidError.
#pragma once
#include <utility>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

enum class SelectKind { MaxDim, MinDim, MedianDim, NanmedianDim, Kthvalue, Mode };
enum class SplitKind { Max, Min, Median, Nanmedian, Amax, Amin };

template <SelectKind K>
struct SelectBackward : FuncOp<SelectBackward<K>, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape_;
  DType in_dtype_ = DType::Float32;
  int64_t dim_ = 0;
  bool keepdim_ = false;
  TensorImplPtr indices_;
  const char* name() const override;
  // zeros(in_shape).scatter_add(dim, indices, g), recorded under create_graph.
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g);
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) { return apply(g); }
  void release_saved() override {
    indices_.reset();
    FuncOp<SelectBackward<K>, 1>::release_saved();
  }
};

template <SplitKind K>
struct EvenSplitBackward : FuncOp<EvenSplitBackward<K>, 2> {
  static const OpSchema& schema_v1;
  DType in_dtype_ = DType::Float32;
  Shape in_shape_;
  std::vector<int64_t> dims_;  // the reduced dims (all of them but for amax/amin)
  const char* name() const override;
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g);  // fused, first order
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g);  // the same with recorded ops
 private:
  Shape keep_shape() const;
  bool nan_result() const;
};

// Each node's schema (max/min's are defined by ops/reduce.cpp, the rest by ops/select_k.cpp).
template <> const OpSchema& SelectBackward<SelectKind::MaxDim>::schema_v1;
template <> const OpSchema& SelectBackward<SelectKind::MinDim>::schema_v1;
template <> const OpSchema& SelectBackward<SelectKind::MedianDim>::schema_v1;
template <> const OpSchema& SelectBackward<SelectKind::NanmedianDim>::schema_v1;
template <> const OpSchema& SelectBackward<SelectKind::Kthvalue>::schema_v1;
template <> const OpSchema& SelectBackward<SelectKind::Mode>::schema_v1;
template <> const OpSchema& EvenSplitBackward<SplitKind::Max>::schema_v1;
template <> const OpSchema& EvenSplitBackward<SplitKind::Min>::schema_v1;
template <> const OpSchema& EvenSplitBackward<SplitKind::Median>::schema_v1;
template <> const OpSchema& EvenSplitBackward<SplitKind::Nanmedian>::schema_v1;
template <> const OpSchema& EvenSplitBackward<SplitKind::Amax>::schema_v1;
template <> const OpSchema& EvenSplitBackward<SplitKind::Amin>::schema_v1;

// Attach the nodes (when grad mode is on and x requires grad). `xs` is the tensor whose
// elements are compared with `out` (x itself, or x in the op's compute dtype); `dims`: the
// reduced dims (empty: all).
void record_select(SelectKind kind, const TensorImplPtr& x, const TensorImplPtr& values,
                   const TensorImplPtr& indices, int64_t dim, bool keepdim);
void record_even_split(SplitKind kind, const TensorImplPtr& x, const TensorImplPtr& xs, const TensorImplPtr& out,
                       std::vector<int64_t> dims = {});

std::pair<TensorImplPtr, TensorImplPtr> kthvalue(const TensorImplPtr& x, int64_t k, int64_t dim, bool keepdim);
std::pair<TensorImplPtr, TensorImplPtr> median(const TensorImplPtr& x, int64_t dim, bool keepdim, bool ignore_nan);
// Of all elements: NaN when x is empty.
TensorImplPtr median(const TensorImplPtr& x, bool ignore_nan);
std::pair<TensorImplPtr, TensorImplPtr> mode(const TensorImplPtr& x, int64_t dim, bool keepdim);

}  // namespace lucid
