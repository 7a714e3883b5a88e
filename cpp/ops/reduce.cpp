#include "ops/reduce.h"

#include <algorithm>

#include "core/autocast.h"
#include "kernels/cpu/reduce.h"
#include "ops/op_utils.h"

namespace lucid {

namespace {

// Sorted, unique, wrapped dims; empty input means all dims.
std::vector<bool> reduced_mask(const TensorImplPtr& x, const std::vector<int64_t>& dims, const char* op) {
  std::vector<bool> m(x->ndim(), dims.empty());
  for (auto d : dims) {
    int64_t w = wrap_dim(d, x->ndim(), op);
    if (x->ndim() == 0) continue;
    LUCID_CHECK_INDEX(!m[w], op, ": dim ", d, " appears more than once");
    m[w] = true;
  }
  return m;
}

kernels::ReduceGeom geom_of(const TensorImplPtr& x, const std::vector<bool>& m) {
  kernels::ReduceGeom g;
  for (int64_t i = 0; i < x->ndim(); ++i) {
    if (m[i]) g.red_shape.push_back(x->shape[i]), g.red_strides.push_back(x->strides[i]);
    else g.kept_shape.push_back(x->shape[i]), g.kept_strides.push_back(x->strides[i]);
  }
  return g;
}

Shape out_shape_of(const TensorImplPtr& x, const std::vector<bool>& m, bool keepdim) {
  Shape s;
  for (int64_t i = 0; i < x->ndim(); ++i) {
    if (!m[i]) s.push_back(x->shape[i]);
    else if (keepdim) s.push_back(1);
  }
  return s;
}

template <class T> struct SumAcc { using type = acc_t<T>; };
template <> struct SumAcc<float> { using type = double; };  // NOTE: float32 sums accumulate in double

TensorImplPtr sum_raw(const TensorImplPtr& x, const std::vector<bool>& m, bool keepdim) {
  DType od = is_floating(x->dtype) ? x->dtype : DType::Int64;
  auto out = empty(out_shape_of(x, m, keepdim), od);
  auto g = geom_of(x, m);
  LUCID_DISPATCH(x->dtype, "sum", [&] {
    using T = scalar_t;
    using A = typename SumAcc<T>::type;
    LUCID_DISPATCH(od, "sum", [&] {
      using O = scalar_t;
      kernels::reduce_loop(g, x->data<T>(), out->data<O>(), A(0),
                           [](A& acc, T v) { acc += A(acc_t<T>(v)); },
                           [](A acc) { return kernels::convert<O>(acc); });
    });
  });
  return out;
}

// The gradient of a reduction, viewed in the input's shape (stride 0 along reduced dims).
TensorImplPtr expand_back(const TensorImplPtr& g, const Shape& in_shape, const std::vector<bool>& m) {
  auto gc = contiguous_raw(g);
  Shape st(in_shape.size(), 0);
  // g has the reduced dims removed (or kept as 1); walk g's dims alongside.
  bool kept_ones = int64_t(g->shape.size()) == int64_t(in_shape.size());
  int64_t gi = 0;
  Shape gstr = gc->strides;
  for (size_t i = 0; i < in_shape.size(); ++i) {
    if (m[i]) {
      if (kept_ones) ++gi;
      continue;
    }
    st[i] = gstr[gi++];
  }
  return make_view(gc, in_shape, st, gc->offset);
}

struct SumBackward : FuncOp<SumBackward, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape;
  DType in_dtype;
  std::vector<bool> mask;
  const char* name() const override { return "SumBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    return {cast_raw(expand_back(g, in_shape, mask), in_dtype)};
  }
};
const OpSchema& SumBackward::schema_v1 = register_schema(
    {.name = "sum", .version = 1, .amp_policy = AmpPolicy::ForceFP32, .produces_grad = true});

}  // namespace

TensorImplPtr sum(const TensorImplPtr& x, std::vector<int64_t> dims, bool keepdim) {
  auto m = reduced_mask(x, dims, "sum");
  auto out = sum_raw(cast_raw(x, compute_dtype(SumBackward::schema_v1, x->dtype)), m, keepdim);
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<SumBackward>();
    n->in_shape = x->shape;
    n->in_dtype = x->dtype;
    n->mask = m;
    n->set_inputs({x});
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr sum_to(const TensorImplPtr& g, const Shape& shape) {
  if (g->shape == shape) return g;
  // Leading dims g has beyond `shape` are summed away; dims where shape has 1 are summed
  // with keepdim.
  size_t lead = g->shape.size() - shape.size();
  std::vector<bool> m(g->shape.size(), false);
  for (size_t i = 0; i < g->shape.size(); ++i)
    m[i] = i < lead || (shape[i - lead] == 1 && g->shape[i] != 1);
  auto r = sum_raw(g, m, /*keepdim=*/true);
  return make_view(r, shape, contiguous_strides(shape), 0);
}

}  // namespace lucid
