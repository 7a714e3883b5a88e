// scaled_dot_product_attention: out = softmax(scale * q k^T + mask) v as one fused op.
//   q (*, L, E), k (*, S, E), v (*, S, Ev) -> (*, L, Ev); the batch dims (*) broadcast, and with
//   enable_gqa the head dim (-3) of k/v may divide q's (query head h reads kv head h / (Hq/Hk)).
//   attn_mask broadcasts to (*, L, S): bool (True = attend) or additive floating; is_causal
//   keeps key j <= query i (top-left aligned, combined with attn_mask); scale defaults to
//   1/sqrt(E); dropout_p drops probabilities with the global generator.
// A query row with no attended key gives zeros (and zero gradient), as PyTorch's CPU kernel.
// Saved: q, k, v, the additive mask, the output, logsumexp per row and the dropout keep mask;
// the backward recomputes the probabilities block by block. AmpPolicy Promote; half types
// compute in float32 and return in their own dtype.
#pragma once
#include <optional>

#include "autograd/func_op.h"
#include "core/tensor_impl.h"

namespace lucid {

TensorImplPtr scaled_dot_product_attention(const TensorImplPtr& q, const TensorImplPtr& k, const TensorImplPtr& v,
                                           const TensorImplPtr& attn_mask, double dropout_p, bool is_causal,
                                           std::optional<double> scale, bool enable_gqa);

// saved_: q, k, v in the compute dtype, the additive mask (or null). Inputs: q, k, v, attn_mask
// (a gradient for the mask only when it is floating and requires grad).
struct ScaledDotProductAttentionBackward : FuncOp<ScaledDotProductAttentionBackward, 4> {
  static const OpSchema& schema_v1;
  TensorImplPtr saved_out_, saved_lse_, saved_keep_;  // out: detached alias of the kernel output
  uint64_t out_version_ = 0;
  double scale_ = 1, keep_scale_ = 1;
  bool causal_ = false, gqa_ = false;
  Shape in_shapes_[4];
  DType in_dtypes_[4] = {};
  const char* name() const override { return "ScaledDotProductAttentionBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& grad_out);
  // create_graph: the probabilities recomputed with recorded ops (matmul, softmax) and the
  // standard attention backward written on them: dv = P^T g, dP = g v^T, dS = P (dP - rowsum(dP P)),
  // dq = scale dS k, dk = scale dS^T q, d mask = dS.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& grad_out);
  void release_saved() override {
    saved_out_.reset(), saved_lse_.reset(), saved_keep_.reset();
    FuncOp::release_saved();
  }
};

}  // namespace lucid
