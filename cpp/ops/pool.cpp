#include "ops/pool.h"

#include <algorithm>

#include "ops/grad_graph.h"

namespace lucid {

const OpSchema& PoolBackward::schema_v1 = register_schema(
    {.name = "pool", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

namespace {

using kernels::PoolAxis;
using kernels::PoolGeom;

bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
DType work_dtype(DType d) { return is_half(d) ? DType::Float32 : d; }

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// PyTorch's pooling_output_shape: ceil mode rounds up but drops a window starting in the right pad.
int64_t pooled_size(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil_mode) {
  int64_t out = floor_div(in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// Max windows: taps start + t * d for t in [0, k), keeping those inside [0, in).
PoolAxis max_axis(int64_t in, int64_t out, int64_t k, int64_t p, int64_t s, int64_t d) {
  PoolAxis a;
  a.step = d;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * s - p;
    const int64_t t0 = start < 0 ? (-start + d - 1) / d : 0;
    const int64_t t1 = in - 1 - start < 0 ? 0 : std::min(k, (in - 1 - start) / d + 1);
    a.begin.push_back(start + t0 * d);
    a.count.push_back(std::max<int64_t>(0, t1 - t0));
    a.div.push_back(1);
  }
  return a;
}

// Average windows [start, start + k) clipped to the padded input, then to the input; `div` is
// the padded size (count_include_pad) or the clipped one.
PoolAxis avg_axis(int64_t in, int64_t out, int64_t k, int64_t p, int64_t s, bool count_include_pad) {
  PoolAxis a;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * s - p, end = std::min(start + k, in + p);
    const int64_t b = std::max<int64_t>(start, 0), e = std::min(end, in);
    a.begin.push_back(b);
    a.count.push_back(std::max<int64_t>(0, e - b));
    a.div.push_back(count_include_pad ? end - start : std::max<int64_t>(0, e - b));
  }
  return a;
}

PoolAxis adaptive_axis(int64_t in, int64_t out) {
  PoolAxis a;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t b = o * in / out, e = ((o + 1) * in + out - 1) / out;
    a.begin.push_back(b);
    a.count.push_back(e - b);
    a.div.push_back(e - b);
  }
  return a;
}

const char* node_name(PoolKind k, int dims) {
  switch (k) {
    case PoolKind::Max: return dims == 1 ? "MaxPool1DWithIndicesBackward" : "MaxPool2DWithIndicesBackward";
    case PoolKind::Avg: return dims == 1 ? "AvgPool1DBackward" : "AvgPool2DBackward";
    case PoolKind::AdaptiveMax:
      return dims == 1 ? "AdaptiveMaxPool1DBackward" : "AdaptiveMaxPool2DBackward";
    case PoolKind::AdaptiveAvg:
      return dims == 1 ? "AdaptiveAvgPool1DBackward" : "AdaptiveAvgPool2DBackward";
  }
  return "PoolBackward";
}

std::string sizes_str(int dims, int64_t c, int64_t h, int64_t w) {
  return dims == 1 ? str(c, "x", w) : str(c, "x", h, "x", w);
}

std::shared_ptr<PoolPlan> make_plan(const TensorImplPtr& x, const PoolSpec& s, const char* op) {
  const int d = s.dims;
  LUCID_CHECK(d == 1 || d == 2, op, ": only 1-d and 2-d pooling is supported, got ", d, " spatial dims");
  LUCID_CHECK_SHAPE(x->ndim() == d + 1 || x->ndim() == d + 2, op, ": expected a ", d + 1, "-D (unbatched) or ",
                    d + 2, "-D (batched) input, but got input of shape ", shape_str(x->shape));
  const bool batched = x->ndim() == d + 2;
  for (int64_t i = batched ? 1 : 0; i < x->ndim(); ++i)
    LUCID_CHECK_SHAPE(x->shape[size_t(i)] > 0, op, ": expected an input with non-zero sizes except the batch dim, ",
                      "got input of shape ", shape_str(x->shape));
  const bool adaptive = s.kind == PoolKind::AdaptiveMax || s.kind == PoolKind::AdaptiveAvg;
  const bool is_max = s.kind == PoolKind::Max || s.kind == PoolKind::AdaptiveMax;
  auto plan = std::make_shared<PoolPlan>();
  PoolGeom& g = plan->geom;
  const int64_t lead = batched ? 1 : 0, C = x->shape[size_t(lead)];
  g.planes = (batched ? x->shape[0] : 1) * C;
  g.H = d == 2 ? x->shape[size_t(lead + 1)] : 1;
  g.W = x->shape[size_t(lead + d)];
  g.adaptive = adaptive;
  const int64_t in[2] = {g.H, g.W};
  int64_t out[2];
  if (adaptive) {
    for (int i = 2 - d; i < 2; ++i) {
      LUCID_CHECK_SHAPE(s.output_size[i] >= -1, op, ": output_size must be non-negative, got ", s.output_size[i]);
      out[i] = s.output_size[i] < 0 ? in[i] : s.output_size[i];
    }
    if (d == 1) out[0] = 1;
    g.ah = adaptive_axis(in[0], out[0]);
    g.aw = adaptive_axis(in[1], out[1]);
  } else {
    for (int i = 2 - d; i < 2; ++i) {
      LUCID_CHECK(s.kernel[i] > 0, op, ": kernel_size must be greater than zero, got ", s.kernel[i]);
      LUCID_CHECK(s.stride[i] > 0, op, ": stride must be greater than zero, got ", s.stride[i]);
      LUCID_CHECK(s.dilation[i] > 0, op, ": dilation must be greater than zero, got ", s.dilation[i]);
      LUCID_CHECK(s.padding[i] >= 0, op, ": padding must be non-negative, got ", s.padding[i]);
      LUCID_CHECK(s.padding[i] <= (s.dilation[i] * (s.kernel[i] - 1) + 1) / 2, op,
                  ": pad should be at most half of effective kernel size, but got pad=", s.padding[i],
                  ", kernel_size=", s.kernel[i], " and dilation=", s.dilation[i]);
      out[i] = pooled_size(in[i], s.kernel[i], s.padding[i], s.stride[i], s.dilation[i], s.ceil_mode);
    }
    if (d == 1) out[0] = 1;
    LUCID_CHECK_SHAPE(out[0] >= 1 && out[1] >= 1, op, ": given input size: (", sizes_str(d, C, g.H, g.W),
                      "), calculated output size: (", sizes_str(d, C, out[0], out[1]), "); output size is too small");
    if (s.kind == PoolKind::Max) {
      g.ah = max_axis(in[0], out[0], d == 2 ? s.kernel[0] : 1, s.padding[0], s.stride[0], s.dilation[0]);
      g.aw = max_axis(in[1], out[1], s.kernel[1], s.padding[1], s.stride[1], s.dilation[1]);
    } else {
      LUCID_CHECK(s.divisor_override >= 0, op, ": divisor must be positive, got ", s.divisor_override);
      g.ah = avg_axis(in[0], out[0], d == 2 ? s.kernel[0] : 1, s.padding[0], s.stride[0], s.count_include_pad);
      g.aw = avg_axis(in[1], out[1], s.kernel[1], s.padding[1], s.stride[1], s.count_include_pad);
      g.divisor_override = s.divisor_override;
    }
  }
  plan->by_index = is_max;
  plan->x_shape = x->shape;
  Shape y = x->shape;
  if (d == 2) y[size_t(lead + 1)] = out[0];
  y[size_t(lead + d)] = out[1];
  plan->y_shape = y;
  return plan;
}

// The plan's linear map (adjoint = false: x -> y) or its transpose (y -> x), raw, in t's dtype.
TensorImplPtr apply_plan(const PoolPlan& p, const TensorImplPtr& t, bool adjoint) {
  const DType wd = work_dtype(t->dtype);
  auto src = contiguous_raw(cast_raw(t, wd));
  auto dst = empty(adjoint ? p.x_shape : p.y_shape, wd);
  auto run = [&]<class T>() {
    const T* a = src->data<T>();
    T* b = dst->data<T>();
    if (p.by_index) {
      const int64_t* idx = p.indices->data<int64_t>();
      if (adjoint) kernels::index_pool_adj<T>(a, idx, p.geom, b);
      else kernels::index_pool_fwd<T>(a, idx, p.geom, b);
    } else {
      if (adjoint) kernels::avg_pool_adj<T>(a, p.geom, b);
      else kernels::avg_pool_fwd<T>(a, p.geom, b);
    }
  };
  LUCID_CHECK_DTYPE(wd == DType::Float32 || wd == DType::Float64, "pool: expected a floating tensor, got ",
                    dtype_name(t->dtype));
  if (wd == DType::Float32) run.template operator()<float>();
  else run.template operator()<double>();
  return cast_raw(dst, t->dtype);
}

}  // namespace

std::array<TensorImplPtr, 2> pool(const TensorImplPtr& x, const PoolSpec& spec, const char* op) {
  LUCID_CHECK_DTYPE(is_floating(x->dtype), op, ": expected a floating input, got ", dtype_name(x->dtype));
  auto plan = make_plan(x, spec, op);
  const DType wd = work_dtype(x->dtype);
  auto xc = contiguous_raw(cast_raw(x, wd));
  auto y = empty(plan->y_shape, wd);
  if (plan->by_index) {
    plan->indices = empty(plan->y_shape, DType::Int64);
    auto run = [&]<class T>() { kernels::max_pool_fwd<T>(xc->data<T>(), plan->geom, y->data<T>(),
                                                         plan->indices->data<int64_t>()); };
    if (wd == DType::Float32) run.template operator()<float>();
    else run.template operator()<double>();
  } else {
    auto run = [&]<class T>() { kernels::avg_pool_fwd<T>(xc->data<T>(), plan->geom, y->data<T>()); };
    if (wd == DType::Float32) run.template operator()<float>();
    else run.template operator()<double>();
  }
  auto out = cast_raw(y, x->dtype);
  if (any_requires_grad({&x})) {
    auto node = std::make_shared<PoolBackward>();
    node->set_inputs({x});
    node->plan_ = plan;
    node->x_dtype_ = x->dtype;
    node->name_ = node_name(spec.kind, spec.dims);
    attach_node(out, std::move(node));
  }
  return {out, plan->indices};
}

std::vector<TensorImplPtr> PoolBackward::apply(const TensorImplPtr& grad_out) {
  LUCID_CHECK_DTYPE(grad_out != nullptr, name(), ": grad_out is None");
  if (!needs_input_grad(0)) return {nullptr};
  LUCID_CHECK_SHAPE(grad_out->shape == plan_->y_shape, name(), ": grad_out shape ", shape_str(grad_out->shape),
                    " does not match the output shape ", shape_str(plan_->y_shape));
  return {cast_raw(apply_plan(*plan_, grad_out, /*adjoint=*/true), x_dtype_)};
}

std::vector<TensorImplPtr> PoolBackward::apply_graph(const TensorImplPtr& grad_out) {
  if (!needs_input_grad(0)) return {nullptr};
  LUCID_CHECK_SHAPE(grad_out->shape == plan_->y_shape, name(), ": grad_out shape ", shape_str(grad_out->shape),
                    " does not match the output shape ", shape_str(plan_->y_shape));
  std::shared_ptr<const PoolPlan> plan = plan_;
  const DType xd = x_dtype_;
  return {linear_map(
      str(name(), "Backward"), grad_out,
      [plan, xd](const TensorImplPtr& g) { return cast_raw(apply_plan(*plan, g, /*adjoint=*/true), xd); },
      [plan](const TensorImplPtr& u) { return apply_plan(*plan, u, /*adjoint=*/false); })};
}

}  // namespace lucid
