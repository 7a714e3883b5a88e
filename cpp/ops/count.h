// Counting and searching (none records a gradient, as in PyTorch):
//   unique: the sorted distinct values of the flattened input, with the inverse (each element's
//     position in them, input's shape) and the counts; NaNs are all distinct, sorted last;
//   bincount: occurrences (or summed weights) of each value of a 1-D non-negative int64 tensor;
//   histc: a histogram of `bins` equal bins over [min, max] (the data's range when min == max;
//     elements outside are ignored, max falls in the last bin);
//   searchsorted: for each value, its insertion index into the last dim of a sorted sequence
//     (leading dims of the sequence match the values'), leftmost (right=false) or rightmost.
#pragma once
#include <optional>
#include <tuple>

#include "core/tensor_impl.h"

namespace lucid {

std::tuple<TensorImplPtr, TensorImplPtr, TensorImplPtr> unique(const TensorImplPtr& x);
TensorImplPtr bincount(const TensorImplPtr& x, const TensorImplPtr& weights, int64_t minlength);
TensorImplPtr histc(const TensorImplPtr& x, int64_t bins, double min, double max);
TensorImplPtr searchsorted(const TensorImplPtr& sorted, const TensorImplPtr& values, bool right);

}  // namespace lucid
