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

TensorImplPtr empty_strided_dense(const Shape& shape, const Shape& strides, DType dtype) {
  auto t = empty(shape, dtype);
  t->strides = strides;
  return t;
}

TensorImplPtr empty_with_layout(const Shape& shape, DType dtype, std::initializer_list<const TensorImpl*> inputs) {
  bool same_shape = true;
  for (const TensorImpl* t : inputs) same_shape = same_shape && t->shape == shape;
  const TensorImpl* first = *inputs.begin();
  if (same_shape && is_dense_permutation(shape, first->strides)) {
    bool same = true;
    for (const TensorImpl* t : inputs) same = same && t->strides == first->strides;
    if (same) return empty_strided_dense(shape, first->strides, dtype);
  }
  // Each input's strides in the output's shape: 0 along a dim it is broadcast over.
  const size_t nd = shape.size();
  std::vector<Shape> st;
  for (const TensorImpl* t : inputs) {
    Shape s(nd, 0);
    const size_t off = nd - t->shape.size();
    for (size_t i = 0; i < t->shape.size(); ++i)
      s[off + i] = (t->shape[i] == 1 && shape[off + i] != 1) ? 0 : t->strides[i];
    st.push_back(std::move(s));
  }
  // > 0: dim a goes inside dim b (PyTorch's should_swap, with perm listing dims innermost first).
  auto should_swap = [&](size_t a, size_t b) {
    for (const Shape& s : st) {
      if (s[a] == 0 || s[b] == 0) continue;
      if (s[a] < s[b]) return -1;
      if (s[a] > s[b]) return 1;
      if (shape[a] > shape[b]) return 1;
    }
    return 0;
  };
  std::vector<size_t> perm(nd);  // innermost first
  for (size_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  for (size_t i = 1; i < nd; ++i) {
    size_t d1 = i;
    for (size_t d0 = i; d0-- > 0;) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape strides(nd);
  int64_t step = 1;
  for (size_t d : perm) {
    strides[d] = step;
    step *= shape[d];
  }
  return strides == contiguous_strides(shape) ? empty(shape, dtype) : empty_strided_dense(shape, strides, dtype);
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
