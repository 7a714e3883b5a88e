// embedding: out[..., :] = weight[index[...], :] for int64 indices of any shape; the output has
// shape index.shape + (D,) and weight's dtype. Backward scatter-adds the incoming rows into a
// dense zero gradient of weight's shape (repeated indices accumulate); the padding_idx row gets
// no gradient. Every index is validated (IndexOutOfRange) before anything is read.
// Saved: the indices (version-checked). AmpPolicy KeepInput.
#pragma once
#include <optional>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

// padding_idx may be negative (counts from the end, as PyTorch); nullopt = none.
TensorImplPtr embedding(const TensorImplPtr& index, const TensorImplPtr& weight, std::optional<int64_t> padding_idx);

// Inputs: (index, weight); slot 0 holds the contiguous indices.
struct EmbeddingBackward : FuncOp<EmbeddingBackward, 2> {
  static const OpSchema& schema_v1;
  int64_t num_weights_ = 0, dim_ = 0;
  int64_t padding_idx_ = -1;  // wrapped; -1 = none
  DType weight_dtype_ = kDefaultFloat;
  const char* name() const override { return "EmbeddingBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the scatter-add is linear in grad_out; its adjoint gathers rows again.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
};

}  // namespace lucid
