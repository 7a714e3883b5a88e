#include "ops/unfold.h"

#include "autograd/grad_mode.h"
#include "ops/factory.h"
#include "ops/grad_graph.h"

namespace lucid {

const OpSchema& UnfoldBackward::schema_v1 = register_schema(
    {.name = "unfold", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

namespace {
bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
}  // namespace

TensorImplPtr unfold(const TensorImplPtr& x, int64_t dim, int64_t size, int64_t step) {
  const int64_t nd = x->ndim();
  const int64_t d = wrap_dim(dim, nd > 0 ? nd : 1, "unfold");
  const int64_t n = nd > 0 ? x->shape[size_t(d)] : 1;
  const int64_t stride = nd > 0 ? x->strides[size_t(d)] : 1;
  LUCID_CHECK_SHAPE(size >= 0, "unfold: size is ", size, " but must be >= 0");
  LUCID_CHECK_SHAPE(size <= n, "unfold: maximum size for tensor at dimension ", d, " is ", n, " but size is ", size);
  LUCID_CHECK(step > 0, "unfold: step is ", step, " but must be > 0");
  const int64_t count = (n - size) / step + 1;
  Shape shape = x->shape, strides = x->strides;
  if (nd > 0) {
    shape[size_t(d)] = count;
    strides[size_t(d)] = stride * step;
  }
  shape.push_back(size);
  strides.push_back(stride);
  auto out = make_view(x, shape, strides, x->offset);
  // A view remembers its first base (for in-place writes through it), as every view op does.
  if (GradMode::is_enabled()) {
    auto root = x->view_base.lock();
    out->view_base = root ? root : x;
    out->view_gen = x->storage->history_gen;
  }
  if (any_requires_grad({&x})) {
    auto node = std::make_shared<UnfoldBackward>();
    node->in_shape_ = x->shape;
    node->in_dtype_ = x->dtype;
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d && i < nd; ++i) outer *= x->shape[size_t(i)];
    for (int64_t i = d + 1; i < nd; ++i) inner *= x->shape[size_t(i)];
    node->outer_ = outer;
    node->n_ = n;
    node->inner_ = inner;
    node->count_ = count;
    node->size_ = size;
    node->step_ = step;
    node->set_inputs({x});
    attach_node(out, std::move(node));
  }
  return out;
}

TensorImplPtr UnfoldBackward::accumulate(const TensorImplPtr& grad_out) const {
  LUCID_CHECK_SHAPE(grad_out->numel() == outer_ * count_ * inner_ * size_, "UnfoldBackward: grad_out shape ",
                    shape_str(grad_out->shape), " does not match the output");
  const DType wd = is_half(in_dtype_) ? DType::Float32 : in_dtype_;
  LUCID_CHECK_DTYPE(wd == DType::Float32 || wd == DType::Float64, name(), ": expected a floating input, got ",
                    dtype_name(wd));
  auto g = contiguous_raw(cast_raw(grad_out, wd));
  auto dx = full(in_shape_, 0.0, wd);
  auto run = [&]<class T>() {
    const T* src = g->data<T>();
    T* dst = dx->data<T>();
    // g is laid out as [outer, count, inner, size]; window i's element j sits at i * step + j.
    for (int64_t o = 0; o < outer_; ++o)
      for (int64_t i = 0; i < count_; ++i)
        for (int64_t k = 0; k < inner_; ++k) {
          const T* s = src + ((o * count_ + i) * inner_ + k) * size_;
          T* t = dst + (o * n_ + i * step_) * inner_ + k;
          for (int64_t j = 0; j < size_; ++j) t[j * inner_] += s[j];
        }
  };
  if (wd == DType::Float32) run.template operator()<float>();
  else run.template operator()<double>();
  return cast_raw(dx, in_dtype_);
}

TensorImplPtr UnfoldBackward::windows(const TensorImplPtr& u) const {
  auto c = contiguous_raw(u);
  Shape shape = {outer_, count_, inner_, size_};
  Shape strides = {n_ * inner_, step_ * inner_, 1, inner_};
  return contiguous_raw(make_view(c, shape, strides, c->offset));
}

std::vector<TensorImplPtr> UnfoldBackward::apply(const TensorImplPtr& grad_out) {
  LUCID_CHECK_DTYPE(grad_out != nullptr, "UnfoldBackward: grad_out is None");
  if (!needs_input_grad(0)) return {nullptr};
  return {accumulate(grad_out)};
}

std::vector<TensorImplPtr> UnfoldBackward::apply_graph(const TensorImplPtr& grad_out) {
  if (!needs_input_grad(0)) return {nullptr};
  auto self = std::static_pointer_cast<UnfoldBackward>(shared_from_this());
  auto map = [self](const TensorImplPtr& t) { return self->accumulate(t); };
  auto adjoint = [self, gshape = grad_out->shape, gdt = grad_out->dtype](const TensorImplPtr& u) {
    auto w = self->windows(cast_raw(u, gdt));
    return make_view(w, gshape, contiguous_strides(gshape), w->offset);
  };
  return {linear_map(name(), grad_out, map, adjoint)};
}

}  // namespace lucid
