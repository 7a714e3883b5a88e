#include "ops/dropout.h"

#include <cstring>

#include "kernels/cpu/dropout.h"
#include "ops/factory.h"
#include "ops/grad_graph.h"

namespace lucid {

const OpSchema& DropoutBackward::schema_v1 = register_schema(
    {.name = "dropout", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

TensorImplPtr dropout(const TensorImplPtr& x, double p, bool training) {
  LUCID_CHECK(p >= 0.0 && p <= 1.0, "dropout: probability p must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  LUCID_CHECK_DTYPE(is_floating(x->dtype), "dropout: expected a floating input, got ", dtype_name(x->dtype));
  const int64_t n = x->numel();
  auto mask = empty(x->shape, DType::Bool);
  if (p == 1.0) {
    std::memset(mask->raw(), 0, size_t(n));
  } else if (x->is_contiguous() || !is_dense_permutation(x->shape, x->strides)) {
    bernoulli_fill(mask->data<bool>(), n, 1.0 - p);
  } else {
    // NOTE: PyTorch draws the mask into empty_like(x), which keeps the strides of a permuted
    // dense x (the output of a batch_first MultiheadAttention is one), so its draws follow x's
    // memory order; draw them in that order too, then read the mask in logical order.
    auto drawn = empty({n}, DType::Bool);
    bernoulli_fill(drawn->data<bool>(), n, 1.0 - p);
    mask = contiguous_raw(make_view(drawn, x->shape, x->strides, 0));
  }
  const double scale = p == 1.0 ? 0.0 : 1.0 / (1.0 - p);
  auto xc = contiguous_raw(x);
  auto out = empty(x->shape, x->dtype);
  LUCID_DISPATCH_FLOAT(x->dtype, "dropout", [&] {
    kernels::dropout_apply<scalar_t>(n, xc->data<scalar_t>(), mask->data<bool>(), scale, out->data<scalar_t>());
  });
  if (any_requires_grad({&x})) {
    auto node = std::make_shared<DropoutBackward>();
    node->scale_ = scale;
    node->in_dtype_ = x->dtype;
    node->set_inputs({x});
    node->save(0, mask);
    attach_node(out, std::move(node));
  }
  return out;
}

namespace {
// g * mask * scale in `dt` (raw).
TensorImplPtr masked_scale(const TensorImplPtr& mask, const TensorImplPtr& grad, double scale, DType dt) {
  auto g = contiguous_raw(cast_raw(grad, dt));
  auto gx = empty(mask->shape, dt);
  LUCID_DISPATCH_FLOAT(dt, "DropoutBackward", [&] {
    kernels::dropout_apply<scalar_t>(gx->numel(), g->data<scalar_t>(), mask->data<bool>(), scale, gx->data<scalar_t>());
  });
  return gx;
}
}  // namespace

std::vector<TensorImplPtr> DropoutBackward::apply(const TensorImplPtr& grad_out) {
  return {masked_scale(saved_[0], grad_out, scale_, in_dtype_)};
}

std::vector<TensorImplPtr> DropoutBackward::apply_graph(const TensorImplPtr& grad_out) {
  auto map = [mask = saved_[0], scale = scale_, dt = in_dtype_](const TensorImplPtr& t) {
    return masked_scale(mask, t, scale, dt);
  };
  return {linear_map(name(), grad_out, map, map)};
}

}  // namespace lucid
