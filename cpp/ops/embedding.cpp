#include "ops/embedding.h"

#include <cstring>

#include "kernels/cpu/embedding.h"
#include "ops/grad_graph.h"

namespace lucid {

const OpSchema& EmbeddingBackward::schema_v1 = register_schema(
    {.name = "embedding", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

TensorImplPtr embedding(const TensorImplPtr& index, const TensorImplPtr& weight, std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  LUCID_CHECK_DTYPE(index->dtype == DType::Int64, op, ": indices must be int64, got ", dtype_name(index->dtype));
  LUCID_CHECK_SHAPE(weight->ndim() == 2, op, ": weight must be 2-D (num_embeddings, embedding_dim), got shape ",
                    shape_str(weight->shape));
  const int64_t V = weight->shape[0], D = weight->shape[1];
  int64_t pad = -1;
  if (padding_idx) {
    const int64_t p = *padding_idx;
    LUCID_CHECK_INDEX(p >= -V && p < V, op, ": padding_idx ", p, " is out of range for ", V,
                      " embeddings (expected -", V, " <= padding_idx < ", V, ")");
    pad = p < 0 ? p + V : p;
  }
  auto ic = contiguous_raw(index);
  const int64_t* idx = ic->data<int64_t>();
  const int64_t rows = ic->numel();
  for (int64_t r = 0; r < rows; ++r)
    LUCID_CHECK_INDEX(idx[r] >= 0 && idx[r] < V, op, ": index ", idx[r], " is out of range for ", V,
                      " embeddings (expected 0 <= index < ", V, ")");
  Shape shape = index->shape;
  shape.push_back(D);
  auto out = empty(shape, weight->dtype);
  kernels::embedding_gather(idx, rows, static_cast<const char*>(weight->raw()), weight->strides[0], weight->strides[1],
                            D, int64_t(itemsize(weight->dtype)), static_cast<char*>(out->raw()));
  if (any_requires_grad({&weight})) {
    auto n = std::make_shared<EmbeddingBackward>();
    n->num_weights_ = V;
    n->dim_ = D;
    n->padding_idx_ = pad;
    n->weight_dtype_ = weight->dtype;
    n->set_inputs({index, weight});
    n->save(0, ic);
    attach_node(out, std::move(n));
  }
  return out;
}

namespace {
// The dense weight gradient: rows of `grad` scatter-added at the indices `ic` (raw).
TensorImplPtr scatter_rows(const TensorImplPtr& ic, const TensorImplPtr& grad, int64_t V, int64_t D, int64_t pad,
                           DType wdt) {
  auto g = contiguous_raw(cast_raw(grad, wdt));
  // Half weights accumulate in a float32 buffer: many rows can land on one index.
  const DType acc = acc_dtype(wdt);
  auto gw = empty({V, D}, acc);
  std::memset(gw->raw(), 0, size_t(gw->numel()) * itemsize(acc));  // all-zero bits are +0.0
  LUCID_DISPATCH_FLOAT(wdt, "EmbeddingBackward", [&] {
    using T = scalar_t;
    kernels::embedding_scatter_add<acc_t<T>, T>(ic->data<int64_t>(), ic->numel(), g->data<T>(), D, pad,
                                                gw->data<acc_t<T>>());
  });
  return cast_raw(gw, wdt);
}
}  // namespace

std::vector<TensorImplPtr> EmbeddingBackward::apply(const TensorImplPtr& grad_out) {
  return {nullptr, scatter_rows(saved_[0], grad_out, num_weights_, dim_, padding_idx_, weight_dtype_)};
}

std::vector<TensorImplPtr> EmbeddingBackward::apply_graph(const TensorImplPtr& grad_out) {
  const TensorImplPtr& ic = saved_[0];
  auto map = [=, V = num_weights_, D = dim_, pad = padding_idx_, wdt = weight_dtype_](const TensorImplPtr& t) {
    return scatter_rows(ic, t, V, D, pad, wdt);
  };
  // The adjoint: out[r] = u[index[r]] (zero at padding_idx, whose row got no gradient).
  auto adjoint = [=, D = dim_, pad = padding_idx_, gshape = grad_out->shape,
                  gdt = grad_out->dtype](const TensorImplPtr& u) {
    auto uc = contiguous_raw(cast_raw(u, gdt));
    auto out = empty(gshape, gdt);
    const int64_t* idx = ic->data<int64_t>();
    const int64_t rows = ic->numel(), isz = int64_t(itemsize(gdt));
    kernels::embedding_gather(idx, rows, static_cast<const char*>(uc->raw()), uc->strides[0], uc->strides[1], D, isz,
                              static_cast<char*>(out->raw()));
    if (pad >= 0)
      for (int64_t r = 0; r < rows; ++r)
        if (idx[r] == pad) std::memset(static_cast<char*>(out->raw()) + r * D * isz, 0, size_t(D * isz));
    return out;
  };
  return {nullptr, linear_map(name(), grad_out, map, adjoint)};
}

}  // namespace lucid
