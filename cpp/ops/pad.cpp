#include "ops/pad.h"

#include <algorithm>

#include "kernels/cpu/gather3.h"
#include "ops/grad_graph.h"

namespace lucid {

const OpSchema& PadBackward::schema_v1 = register_schema(
    {.name = "pad", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

namespace {
bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
}  // namespace

TensorImplPtr pad(const TensorImplPtr& x, const std::vector<int64_t>& pads, const std::string& mode, double value,
                  const char* op) {
  LUCID_CHECK(mode == "constant" || mode == "reflect" || mode == "replicate" || mode == "circular", op,
              ": unrecognised padding mode '", mode, "' (expected constant, reflect, replicate or circular)");
  LUCID_CHECK_SHAPE(pads.size() % 2 == 0, op, ": padding length must be divisible by 2, got ", pads.size());
  const int64_t k = int64_t(pads.size()) / 2, nd = x->ndim();
  LUCID_CHECK_SHAPE(k <= nd, op, ": padding length too large: ", pads.size(), " values for an input of shape ",
                    shape_str(x->shape), " (at most ", 2 * nd, ")");
  LUCID_CHECK(k <= 3, op, ": padding more than 3 dims is not supported, got ", pads.size(), " values");
  if (mode != "constant")
    LUCID_CHECK(k >= 1 && (nd == k + 1 || nd == k + 2), op, ": ", mode, " padding of ", k, " dim(s) needs a ", k + 1,
                "-D or ", k + 2, "-D input, got input of shape ", shape_str(x->shape));
  auto node = std::make_shared<PadBackward>();
  Shape out_shape = x->shape;
  int64_t n_out[3] = {1, 1, 1};
  for (int i = 0; i < 3; ++i) node->maps_[i] = {0};
  for (int64_t j = 0; j < k; ++j) {  // pair j pads dim nd-1-j, stored in slot 2-j
    const int64_t dim = nd - 1 - j, n = x->shape[dim], lo = pads[2 * j], hi = pads[2 * j + 1];
    const int64_t m = n + lo + hi;
    if (mode == "constant") {
      LUCID_CHECK_SHAPE(m >= 0, op, ": the input size ", n, " plus padding ", lo, " and ", hi, " at dim ", dim,
                        " gives a negative output size ", m);
    } else {
      LUCID_CHECK_SHAPE(lo >= 0 && hi >= 0, op, ": negative padding (", lo, ", ", hi, ") is only supported in "
                        "constant mode");
      if (mode == "reflect")
        LUCID_CHECK_SHAPE(lo < n && hi < n, op, ": reflect padding size should be less than the corresponding input dimension, "
                          "but got padding (", lo, ", ", hi, ") at dim ", dim, " of input ", shape_str(x->shape));
      else if (mode == "circular")
        LUCID_CHECK_SHAPE(lo <= n && hi <= n, op, ": padding value causes wrapping around more than once: padding (",
                          lo, ", ", hi, ") at dim ", dim, " of input ", shape_str(x->shape));
      else
        LUCID_CHECK_SHAPE(n > 0 || m == 0, op, ": cannot replicate-pad dim ", dim, " of size 0 (input ",
                          shape_str(x->shape), ")");
    }
    std::vector<int64_t> map(size_t(std::max<int64_t>(m, 0)));
    for (int64_t i = 0; i < m; ++i) {
      int64_t s = i - lo;
      if (mode == "constant") s = (s >= 0 && s < n) ? s : -1;
      else if (mode == "reflect") s = s < 0 ? -s : (s >= n ? 2 * (n - 1) - s : s);
      else if (mode == "replicate") s = std::clamp<int64_t>(s, 0, n - 1);
      else s = ((s % n) + n) % n;
      map[size_t(i)] = s;
    }
    out_shape[size_t(dim)] = m;
    node->maps_[2 - j] = std::move(map);
    node->in_[2 - j] = n;
    n_out[2 - j] = m;
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < nd - k; ++d) outer *= x->shape[d];
  auto xc = contiguous_raw(x);
  auto y = empty(out_shape, x->dtype);
  const int64_t* maps[3] = {node->maps_[0].data(), node->maps_[1].data(), node->maps_[2].data()};
  if (y->numel() > 0) {
    LUCID_DISPATCH(x->dtype, op, [&] {
      using T = scalar_t;
      kernels::gather3<T>(xc->data<T>(), outer, node->in_, maps, n_out, T(acc_t<T>(value)), y->data<T>());
    });
  }
  if (any_requires_grad({&x})) {
    node->x_shape_ = x->shape;
    node->x_dtype_ = x->dtype;
    node->outer_ = outer;
    node->set_inputs({x});
    attach_node(y, std::move(node));
  }
  return y;
}

std::vector<TensorImplPtr> PadBackward::apply(const TensorImplPtr& grad_out) {
  LUCID_CHECK_DTYPE(grad_out != nullptr, "PadBackward: grad_out is None");
  if (!needs_input_grad(0)) return {nullptr};
  return {scatter(grad_out)};
}

TensorImplPtr PadBackward::scatter(const TensorImplPtr& grad_out) const {
  const int64_t n_out[3] = {int64_t(maps_[0].size()), int64_t(maps_[1].size()), int64_t(maps_[2].size())};
  LUCID_CHECK_SHAPE(grad_out->numel() == outer_ * n_out[0] * n_out[1] * n_out[2], "PadBackward: grad_out shape ",
                    shape_str(grad_out->shape), " does not match the output");
  const DType wd = is_half(x_dtype_) ? DType::Float32 : x_dtype_;
  auto g = contiguous_raw(cast_raw(grad_out, wd));
  auto dx = empty(x_shape_, wd);
  const int64_t* maps[3] = {maps_[0].data(), maps_[1].data(), maps_[2].data()};
  LUCID_CHECK_DTYPE(wd == DType::Float32 || wd == DType::Float64, name(), ": expected a floating input, got ",
                    dtype_name(wd));
  auto run = [&]<class T>() {
    std::fill(dx->data<T>(), dx->data<T>() + dx->numel(), T(0));
    if (g->numel() > 0) kernels::scatter3_add<T>(g->data<T>(), outer_, in_, maps, n_out, dx->data<T>());
  };
  if (wd == DType::Float32) run.template operator()<float>();
  else run.template operator()<double>();
  return cast_raw(dx, x_dtype_);
}

std::vector<TensorImplPtr> PadBackward::apply_graph(const TensorImplPtr& grad_out) {
  if (!needs_input_grad(0)) return {nullptr};
  auto self = std::static_pointer_cast<PadBackward>(shared_from_this());
  auto map = [self](const TensorImplPtr& t) { return self->scatter(t); };
  auto adjoint = [self, gshape = grad_out->shape, gdt = grad_out->dtype](const TensorImplPtr& u) {
    auto uc = contiguous_raw(cast_raw(u, self->x_dtype_));
    auto y = empty(gshape, self->x_dtype_);
    const int64_t n_out[3] = {int64_t(self->maps_[0].size()), int64_t(self->maps_[1].size()),
                              int64_t(self->maps_[2].size())};
    const int64_t* maps[3] = {self->maps_[0].data(), self->maps_[1].data(), self->maps_[2].data()};
    if (y->numel() > 0) {
      LUCID_DISPATCH(self->x_dtype_, "PadBackward", [&] {
        using T = scalar_t;
        kernels::gather3<T>(uc->data<T>(), self->outer_, self->in_, maps, n_out, T(0), y->data<T>());
      });
    }
    return cast_raw(y, gdt);
  };
  return {linear_map(name(), grad_out, map, adjoint)};
}

}  // namespace lucid
