#include "core/tensor_impl.h"

#include "kernels/cpu/elementwise.h"

namespace lucid {

bool TensorImpl::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

TensorImplPtr empty(const Shape& shape, DType dtype) {
  check_shape_size(shape, int64_t(itemsize(dtype)), "empty");
  auto t = std::make_shared<TensorImpl>();
  t->storage = Storage::allocate(size_t(numel_of(shape)) * itemsize(dtype));
  t->shape = shape;
  t->strides = contiguous_strides(shape);
  t->dtype = dtype;
  return t;
}

TensorImplPtr make_view(const TensorImplPtr& base, Shape shape, Shape strides, int64_t offset) {
  check_shape_size(shape, 1, "view");
  auto t = std::make_shared<TensorImpl>();
  t->storage = base->storage;
  t->shape = std::move(shape);
  t->strides = std::move(strides);
  t->offset = offset;
  t->dtype = base->dtype;
  return t;
}

void copy_into(const TensorImplPtr& dst, const TensorImplPtr& src) {
  Shape ss = broadcast_strides(src->shape, src->strides, dst->shape);
  LUCID_DISPATCH(dst->dtype, "copy", [&] {
    using D = scalar_t;
    D* o = dst->data<D>();
    LUCID_DISPATCH(src->dtype, "copy", [&] {
      using S = scalar_t;
      kernels::map1(dst->shape, o, dst->strides, src->data<S>(), ss,
                    [](S v) { return kernels::convert<D>(v); });
    });
  });
}

TensorImplPtr contiguous_raw(const TensorImplPtr& t) {
  if (t->is_contiguous()) return t;
  auto out = empty(t->shape, t->dtype);
  copy_into(out, t);
  return out;
}

TensorImplPtr cast_raw(const TensorImplPtr& t, DType dtype) {
  if (t->dtype == dtype) return t;
  auto out = empty(t->shape, dtype);
  copy_into(out, t);
  return out;
}

TensorImplPtr scalar_tensor(double v, DType dtype) {
  auto t = empty({}, dtype);
  LUCID_DISPATCH(dtype, "scalar_tensor", [&] { *t->data<scalar_t>() = kernels::convert<scalar_t>(v); });
  return t;
}

double item_as_double(const TensorImplPtr& t, const char* op) {
  LUCID_CHECK_SHAPE(t->numel() == 1, op, ": only a one-element tensor can be converted to a Python scalar, got shape ", shape_str(t->shape));
  double v = 0;
  LUCID_DISPATCH(t->dtype, op, [&] { v = kernels::convert<double>(*t->data<scalar_t>()); });
  return v;
}

}  // namespace lucid
