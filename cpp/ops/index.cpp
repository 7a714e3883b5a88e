#include "ops/index.h"

#include <algorithm>

#include "kernels/cpu/gather.h"
#include "ops/binary.h"
#include "ops/factory.h"
#include "ops/grad_graph.h"
#include "ops/op_utils.h"
#include "ops/view.h"

namespace lucid {

namespace {

// ---- index arithmetic -------------------------------------------------------------------

// off[i] = wrap(index[i]) * stride, over index's shape (contiguous). Every value is checked
// against `size` here, before any kernel reads memory through it.
TensorImplPtr index_offsets(const TensorImplPtr& index, int64_t size, int64_t stride, const char* op, int64_t dim) {
  auto c = contiguous_raw(index);
  auto out = empty(c->shape, DType::Int64);
  const int64_t* p = c->data<int64_t>();
  int64_t* o = out->data<int64_t>();
  for (int64_t i = 0, n = c->numel(); i < n; ++i) {
    int64_t v = p[i];
    LUCID_CHECK_INDEX(v >= -size && v < size, op, ": index ", v, " is out of range for dim ", dim, " with size ", size);
    o[i] = (v < 0 ? v + size : v) * stride;
  }
  return out;
}

// An IndexError, as PyTorch's x[float_tensor] (the other index checks are IndexErrors too).
void check_index_dtype(const TensorImplPtr& t, const char* op) {
  LUCID_CHECK_INDEX(t->dtype == DType::Int64 || t->dtype == DType::Bool, op,
                    ": tensors used as indices must be int64 or bool, got ", dtype_name(t->dtype));
}

// The basic view of x that the items select, and the index tensors left for the gather.
struct Plan {
  Geom g, rel;                      // the view in x's storage / in a contiguous layout of x
  std::vector<size_t> adv_dims;     // dims of the view indexed by tensors, ascending
  std::vector<int64_t> adv_xdims;   // the matching dims of x (for messages)
  std::vector<TensorImplPtr> adv;   // int64 indices, one per entry of adv_dims
  // PyTorch applies basic indexing item by item (select, slice, unsqueeze; a slice that keeps the
  // whole dim is skipped unless it is the only item) and names the node after the last one.
  const char* node_name = "AliasBackward";
};

// Dims of x an item consumes (-1: Ellipsis).
int64_t consumed_dims(const IndexItem& it) {
  switch (it.kind) {
    case IndexItem::Kind::Int:
    case IndexItem::Kind::Slice: return 1;
    case IndexItem::Kind::NewAxis: return 0;
    case IndexItem::Kind::Ellipsis: return -1;
    case IndexItem::Kind::Tensor: return it.t->dtype == DType::Bool ? it.t->ndim() : 1;
  }
  return 0;
}

Plan plan_index(const TensorImplPtr& x, std::vector<IndexItem> items, const char* op) {
  int64_t consumed = 0, ellipses = 0;
  for (auto& it : items) {
    if (it.kind == IndexItem::Kind::Tensor) {
      check_index_dtype(it.t, op);
      if (it.t->dtype == DType::Int64 && it.t->ndim() == 0) {  // a 0-d int64 tensor is an int
        it.kind = IndexItem::Kind::Int;
        it.i = *contiguous_raw(it.t)->data<int64_t>();
      }
    }
    int64_t c = consumed_dims(it);
    if (c < 0) ++ellipses;
    else consumed += c;
  }
  LUCID_CHECK_INDEX(ellipses <= 1, op, ": an index can only have a single ellipsis ('...')");
  LUCID_CHECK_INDEX(consumed <= x->ndim(), op, ": too many indices for a tensor of dimension ", x->ndim(),
                    " (the index uses ", consumed, ")");
  Plan p{geom_of(x), contiguous_geom(x->shape), {}, {}, {}};
  size_t vd = 0;   // current dim of the view
  int64_t xd = 0;  // current dim of x
  for (auto& it : items) {
    switch (it.kind) {
      case IndexItem::Kind::Int: {
        int64_t n = p.g.shape[vd];
        LUCID_CHECK_INDEX(it.i >= -n && it.i < n, op, ": index ", it.i, " is out of range for dim ", xd,
                          " with size ", n);
        int64_t i = it.i < 0 ? it.i + n : it.i;
        geom_select(p.g, vd, i);
        geom_select(p.rel, vd, i);
        p.node_name = "SelectBackward";
        ++xd;
        break;
      }
      case IndexItem::Kind::Slice: {
        // ShapeMismatch is the ValueError PyTorch raises for x[::-1].
        LUCID_CHECK_SHAPE(it.step > 0, op, ": slice step must be positive, got ", it.step,
                    " (negative steps are not supported; use flip())");
        int64_t n = p.g.shape[vd];
        auto clamp = [n](bool has, int64_t v, int64_t dflt) {
          if (!has) return dflt;
          if (v < 0) v += n;
          return v < 0 ? int64_t(0) : v > n ? n : v;
        };
        int64_t start = clamp(it.has_start, it.start, 0), stop = clamp(it.has_stop, it.stop, n);
        int64_t len = stop > start ? (stop - start + it.step - 1) / it.step : 0;
        geom_slice(p.g, vd, start, len, it.step);
        geom_slice(p.rel, vd, start, len, it.step);
        if (items.size() == 1 || start != 0 || len != n || it.step != 1) p.node_name = "SliceBackward";
        ++vd, ++xd;
        break;
      }
      case IndexItem::Kind::NewAxis:
        geom_insert(p.g, vd);
        geom_insert(p.rel, vd);
        p.node_name = "UnsqueezeBackward";
        ++vd;
        break;
      case IndexItem::Kind::Ellipsis:
        vd += size_t(x->ndim() - consumed);
        xd += x->ndim() - consumed;
        break;
      case IndexItem::Kind::Tensor: {
        const auto& t = it.t;
        if (t->dtype == DType::Int64) {
          p.adv_dims.push_back(vd++);
          p.adv_xdims.push_back(xd++);
          p.adv.push_back(t);
        } else if (t->ndim() == 0) {  // x[True] adds a dim of size 1, x[False] one of size 0
          geom_insert(p.g, vd);
          geom_insert(p.rel, vd);
          bool on = *contiguous_raw(t)->data<bool>();
          p.adv_dims.push_back(vd++);
          p.adv_xdims.push_back(xd);
          p.adv.push_back(full({on ? 1 : 0}, 0.0, DType::Int64));
        } else {
          Shape covered(p.g.shape.begin() + vd, p.g.shape.begin() + vd + t->ndim());
          LUCID_CHECK_INDEX(t->shape == covered, op, ": the shape of the mask ", shape_str(t->shape),
                            " does not match the shape ", shape_str(covered), " of the indexed dims (starting at dim ",
                            xd, ") of the tensor of shape ", shape_str(x->shape));
          auto coords = nonzero_tuple(t);
          for (int64_t k = 0; k < t->ndim(); ++k) {
            p.adv_dims.push_back(vd++);
            p.adv_xdims.push_back(xd++);
            p.adv.push_back(coords[k]);
          }
        }
        break;
      }
    }
  }
  return p;
}

// Iteration geometry of the gather over the basic view: output dims are view dims (walked
// with the view's strides) and the broadcast index dims (walked through the offsets).
struct Adv {
  Shape shape;        // output shape
  Shape src_strides;  // view strides per output dim (0 on index dims)
  Shape rel_strides;  // the same in the contiguous layout of x
  Shape off_strides;  // offset-operand strides per output dim (0 on view dims)
  TensorImplPtr off, rel_off;
};

Adv adv_geometry(const Plan& p, bool need_rel, const char* op) {
  Shape b = p.adv[0]->shape;
  for (size_t j = 1; j < p.adv.size(); ++j) b = broadcast_shapes(b, p.adv[j]->shape, op);
  Adv a;
  for (size_t j = 0; j < p.adv.size(); ++j) {
    size_t d = p.adv_dims[j];
    auto o = index_offsets(p.adv[j], p.g.shape[d], p.g.strides[d], op, p.adv_xdims[j]);
    a.off = a.off ? add(a.off, o) : o;
    if (need_rel) {
      auto r = index_offsets(p.adv[j], p.g.shape[d], p.rel.strides[d], op, p.adv_xdims[j]);
      a.rel_off = a.rel_off ? add(a.rel_off, r) : r;
    }
  }
  if (a.off->shape != b) {  // b may be larger than every single index only through broadcasting
    auto e = empty(b, DType::Int64);
    copy_into(e, a.off);
    a.off = e;
  }
  if (need_rel && a.rel_off->shape != b) {
    auto e = empty(b, DType::Int64);
    copy_into(e, a.rel_off);
    a.rel_off = e;
  }
  auto push_view = [&](size_t d) {
    a.shape.push_back(p.g.shape[d]);
    a.src_strides.push_back(p.g.strides[d]);
    a.rel_strides.push_back(p.rel.strides[d]);
    a.off_strides.push_back(0);
  };
  auto push_index = [&]() {
    for (size_t k = 0; k < b.size(); ++k) {
      a.shape.push_back(b[k]);
      a.src_strides.push_back(0);
      a.rel_strides.push_back(0);
      a.off_strides.push_back(a.off->strides[k]);
    }
  };
  bool adjacent = true;
  for (size_t j = 1; j < p.adv_dims.size(); ++j) adjacent = adjacent && p.adv_dims[j] == p.adv_dims[j - 1] + 1;
  std::vector<bool> is_adv(p.g.shape.size(), false);
  for (auto d : p.adv_dims) is_adv[d] = true;
  if (!adjacent) push_index();
  for (size_t d = 0; d < p.g.shape.size(); ++d) {
    if (!is_adv[d]) push_view(d);
    else if (adjacent && d == p.adv_dims[0]) push_index();
  }
  return a;
}

// ---- backward nodes ---------------------------------------------------------------------

// Scatter-adds the grad (iterated over the gather's output) into zeros of the input's shape.
// Half grads accumulate in float32 so repeated indices do not round at every step.
TensorImplPtr scatter_grad(const TensorImplPtr& g, const Shape& in_shape, DType in_dtype, const Shape& it_shape,
                           int64_t base, const Shape& dst_strides, const TensorImplPtr& off, const Shape& off_strides) {
  DType acc = g->dtype == DType::Float16 || g->dtype == DType::BFloat16 ? DType::Float32 : g->dtype;
  auto z = full(in_shape, 0.0, acc);
  auto gg = cast_raw(g, acc);
  Shape gs = broadcast_strides(gg->shape, gg->strides, it_shape);
  LUCID_DISPATCH_FLOAT(acc, "index_backward", [&] {
    using T = scalar_t;
    kernels::scatter<T>(it_shape, z->data<T>() + base, dst_strides, off->data<int64_t>(), off_strides,
                        gg->data<T>(), gs, /*accumulate=*/true);
  });
  return cast_raw(z, in_dtype);
}

enum class IndexKind { Index, IndexSelect };
template <IndexKind K>
struct IndexBackward final : FuncOp<IndexBackward<K>, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape_, it_shape_, rel_strides_, off_strides_;
  DType in_dtype_ = kDefaultFloat;
  int64_t rel_offset_ = 0;
  TensorImplPtr rel_off_;  // element offsets of the gathered positions in x's contiguous layout
  const char* name() const override { return K == IndexKind::Index ? "IndexBackward" : "IndexSelectBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    return {scatter_grad(g, in_shape_, in_dtype_, it_shape_, rel_offset_, rel_strides_, rel_off_, off_strides_)};
  }
  void release_saved() override {
    rel_off_.reset();
    FuncOp<IndexBackward<K>, 1>::release_saved();
  }
  // Linear in g; the adjoint gathers the same positions again (the forward's gather).
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const Shape in_shape = in_shape_, it_shape = it_shape_, rel_strides = rel_strides_, off_strides = off_strides_;
    const DType in_dtype = in_dtype_;
    const int64_t base = rel_offset_;
    const TensorImplPtr off = rel_off_;
    return {linear_map(
        str(name(), "Backward"), g,
        [=](const TensorImplPtr& t) {
          return scatter_grad(t, in_shape, in_dtype, it_shape, base, rel_strides, off, off_strides);
        },
        [=](const TensorImplPtr& u) {
          auto c = contiguous_raw(u);
          auto out = empty(it_shape, c->dtype);
          LUCID_DISPATCH_FLOAT(c->dtype, "index_backward", [&] {
            using T = scalar_t;
            kernels::gather<T>(it_shape, out->data<T>(), out->strides, c->data<T>() + base, rel_strides,
                               off->data<int64_t>(), off_strides);
          });
          return out;
        })};
  }
};
template <> const OpSchema& IndexBackward<IndexKind::Index>::schema_v1 = register_schema(
    {.name = "index", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});
template <> const OpSchema& IndexBackward<IndexKind::IndexSelect>::schema_v1 = register_schema(
    {.name = "index_select", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

template <IndexKind K>
TensorImplPtr index_impl(const TensorImplPtr& x, const std::vector<IndexItem>& items, const char* op) {
  Plan p = plan_index(x, items, op);
  if (p.adv.empty()) return strided_view(x, p.g, p.rel, SliceKind::GetItem, p.node_name);
  bool grad = any_requires_grad({&x});
  Adv a = adv_geometry(p, grad, op);
  auto out = empty(a.shape, x->dtype);
  LUCID_DISPATCH(x->dtype, op, [&] {
    using T = scalar_t;
    kernels::gather<T>(a.shape, out->data<T>(), out->strides, static_cast<const T*>(x->storage->data.get()) + p.g.offset,
                       a.src_strides, a.off->data<int64_t>(), a.off_strides);
  });
  if (grad) {
    auto n = std::make_shared<IndexBackward<K>>();
    n->in_shape_ = x->shape;
    n->in_dtype_ = x->dtype;
    n->it_shape_ = a.shape;
    n->rel_strides_ = a.rel_strides;
    n->off_strides_ = a.off_strides;
    n->rel_offset_ = p.rel.offset;
    n->rel_off_ = a.rel_off;
    n->set_inputs({x});
    attach_node(out, std::move(n));
  }
  return out;
}

// ---- gather / scatter_add along one dim ---------------------------------------------------

void check_dim_index(const TensorImplPtr& x, const TensorImplPtr& index, int64_t dim, const char* op,
                     const TensorImplPtr& src = nullptr) {
  LUCID_CHECK_DTYPE(index->dtype == DType::Int64, op, ": index must be an int64 tensor, got ", dtype_name(index->dtype));
  LUCID_CHECK_SHAPE(index->ndim() == x->ndim(), op, ": index of shape ", shape_str(index->shape),
                    " must have as many dims as the input of shape ", shape_str(x->shape));
  for (int64_t d = 0; d < x->ndim(); ++d)
    LUCID_CHECK_SHAPE(d == dim || index->shape[d] <= x->shape[d], op, ": index of shape ", shape_str(index->shape),
                      " is larger than the input of shape ", shape_str(x->shape), " at dim ", d,
                      " (only dim ", dim, " may differ)");
  if (!src) return;
  LUCID_CHECK_SHAPE(src->ndim() == index->ndim(), op, ": src of shape ", shape_str(src->shape),
                    " must have as many dims as the index of shape ", shape_str(index->shape));
  for (int64_t d = 0; d < src->ndim(); ++d)
    LUCID_CHECK_SHAPE(index->shape[d] <= src->shape[d], op, ": index of shape ", shape_str(index->shape),
                      " is larger than src of shape ", shape_str(src->shape), " at dim ", d);
}

// Offsets along dim of `t` (0-d tensors act as one element along dim 0), and t's strides with
// that dim zeroed: the gather/scatter iterate over the index's shape.
std::pair<TensorImplPtr, Shape> dim_offsets(const TensorImplPtr& t, const TensorImplPtr& index, int64_t dim, const char* op) {
  int64_t size = t->ndim() ? t->shape[dim] : 1, stride = t->ndim() ? t->strides[dim] : 0;
  Shape strides = t->strides;
  if (t->ndim()) strides[dim] = 0;
  return {index_offsets(index, size, stride, op, dim), strides};
}

TensorImplPtr gather_raw(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index, const char* op) {
  auto r = dim_offsets(x, index, dim, op);
  const auto& off = r.first;
  const auto& xs = r.second;
  auto out = empty(index->shape, x->dtype);
  LUCID_DISPATCH(x->dtype, op, [&] {
    using T = scalar_t;
    kernels::gather<T>(index->shape, out->data<T>(), out->strides, x->data<T>(), xs, off->data<int64_t>(), off->strides);
  });
  return out;
}

// dst[.. index ..] += src over index's shape (dst modified in place; same dtype).
void scatter_add_raw(const TensorImplPtr& dst, int64_t dim, const TensorImplPtr& index, const TensorImplPtr& src,
                     const char* op) {
  auto r = dim_offsets(dst, index, dim, op);
  const auto& off = r.first;
  const auto& ds = r.second;
  LUCID_DISPATCH(dst->dtype, op, [&] {
    using T = scalar_t;
    kernels::scatter<T>(index->shape, dst->data<T>(), ds, off->data<int64_t>(), off->strides, src->data<T>(),
                        src->strides, /*accumulate=*/true);
  });
}

struct GatherBackward final : FuncOp<GatherBackward, 2> {
  static const OpSchema& schema_v1;
  Shape in_shape_;
  DType in_dtype_ = kDefaultFloat;
  int64_t dim_ = 0;
  const char* name() const override { return "GatherBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    DType acc = is_floating(g->dtype) && itemsize(g->dtype) == 2 ? DType::Float32 : g->dtype;
    auto z = full(in_shape_, 0.0, acc);
    scatter_add_raw(z, dim_, saved_[1], cast_raw(g, acc), "gather_backward");
    return {cast_raw(z, in_dtype_), nullptr};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const TensorImplPtr index = saved_[1];
    const int64_t dim = dim_;
    const Shape in_shape = in_shape_;
    const DType in_dtype = in_dtype_;
    return {linear_map(
                "GatherBackwardBackward", g,
                [=](const TensorImplPtr& t) {
                  auto z = full(in_shape, 0.0, t->dtype);
                  scatter_add_raw(z, dim, index, t, "gather_backward");
                  return cast_raw(z, in_dtype);
                },
                [index, dim](const TensorImplPtr& u) { return gather_raw(u, dim, index, "gather_backward"); }),
            nullptr};
  }
};
const OpSchema& GatherBackward::schema_v1 = register_schema(
    {.name = "gather", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

struct ScatterAddBackward final : FuncOp<ScatterAddBackward, 3> {
  static const OpSchema& schema_v1;
  Shape src_shape_;
  int64_t dim_ = 0;
  const char* name() const override { return "ScatterAddBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    TensorImplPtr gsrc;
    if (needs_input_grad(2)) {
      // src elements beyond the index's extent were never added: their grad stays zero.
      const auto& index = saved_[1];
      gsrc = full(src_shape_, 0.0, g->dtype);
      auto region = make_view(gsrc, index->shape, gsrc->strides, 0);
      copy_into(region, gather_raw(g, dim_, index, "scatter_add_backward"));
    }
    return {needs_input_grad(0) ? g : nullptr, nullptr, gsrc};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    TensorImplPtr gsrc;
    if (needs_input_grad(2)) {
      const TensorImplPtr index = saved_[1];
      const int64_t dim = dim_;
      const Shape src_shape = src_shape_, g_shape = g->shape;
      gsrc = linear_map(
          "ScatterAddBackwardBackward", g,
          [=](const TensorImplPtr& t) {
            auto r = full(src_shape, 0.0, t->dtype);
            copy_into(make_view(r, index->shape, r->strides, 0), gather_raw(t, dim, index, "scatter_add_backward"));
            return r;
          },
          [=](const TensorImplPtr& u) {
            auto c = contiguous_raw(u);
            auto z = full(g_shape, 0.0, c->dtype);
            scatter_add_raw(z, dim, index, contiguous_raw(make_view(c, index->shape, c->strides, c->offset)),
                            "scatter_add_backward");
            return z;
          });
    }
    return {needs_input_grad(0) ? g : nullptr, nullptr, gsrc};
  }
};
const OpSchema& ScatterAddBackward::schema_v1 = register_schema(
    {.name = "scatter_add", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

const OpSchema& kIndexPutSchema = register_schema(
    {.name = "index_put", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});
const OpSchema& kNonzeroSchema = register_schema(
    {.name = "nonzero", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = false});

bool broadcastable_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

TensorImplPtr fresh_copy(const TensorImplPtr& t) {
  auto c = empty(t->shape, t->dtype);
  copy_into(c, t);
  return c;
}

// In-place writes never record a node: a value that requires grad would silently lose it.
void check_value_no_grad(const TensorImplPtr& v, const char* op) {
  LUCID_CHECK(!(GradMode::is_enabled() && v->requires_grad), op,
              ": the value requires grad, but in-place writes are not recorded by autograd; "
              "detach() it, or build the result out of place (where, cat, masked_fill)");
}

}  // namespace

TensorImplPtr index(const TensorImplPtr& x, const std::vector<IndexItem>& items) {
  return index_impl<IndexKind::Index>(x, items, "index");
}

namespace {
// x[items] = value without checks or autograd; returns the value's shape with the leading size-1
// dims PyTorch drops removed (what the written elements broadcast from).
Shape index_put_raw(const TensorImplPtr& x, const std::vector<IndexItem>& items, const TensorImplPtr& value) {
  const char* op = "setitem";
  Plan p = plan_index(x, items, op);
  Adv a;
  if (!p.adv.empty()) a = adv_geometry(p, false, op);
  const Shape& target = p.adv.empty() ? p.g.shape : a.shape;
  // A value that shares memory with x (x[1:] = x[:-1]) is read in full before any write.
  auto v = value->storage == x->storage ? fresh_copy(value) : value;
  // Leading size-1 dims of the value are dropped, as PyTorch does (x[0] = t of shape (1, n)).
  size_t lead = 0;
  while (v->shape.size() - lead > target.size() && v->shape[lead] == 1) ++lead;
  if (lead)
    v = make_view(v, Shape(v->shape.begin() + lead, v->shape.end()), Shape(v->strides.begin() + lead, v->strides.end()),
                  v->offset);
  LUCID_CHECK_SHAPE(broadcastable_to(v->shape, target), op, ": value of shape ", shape_str(value->shape),
                    " cannot be broadcast to the indexed shape ", shape_str(target));
  if (p.adv.empty()) {
    copy_into(make_view(x, p.g.shape, p.g.strides, p.g.offset), v);
  } else {
    v = cast_raw(v, x->dtype);
    Shape vs = broadcast_strides(v->shape, v->strides, a.shape);
    LUCID_DISPATCH(x->dtype, op, [&] {
      using T = scalar_t;
      kernels::scatter<T>(a.shape, static_cast<T*>(x->storage->data.get()) + p.g.offset, a.src_strides,
                          a.off->data<int64_t>(), a.off_strides, v->data<T>(), vs, /*accumulate=*/false);
    });
  }
  return v->shape;
}

// out = x with out[items] = value: x's gradient is g with the written positions zeroed, value's
// is g[items] summed back to the value's shape. Both are linear maps of g written with
// index_put / index themselves, so they are differentiable again.
struct IndexPutBackward final : FuncOp<IndexPutBackward, 2> {
  static const OpSchema& schema_v1;
  std::vector<IndexItem> items;
  Shape x_shape, v_shape, v_used_shape;  // v_used_shape: v_shape without the dropped leading 1s
  DType x_dtype = kDefaultFloat, v_dtype = kDefaultFloat;
  const char* name() const override { return "IndexPutBackward"; }
  std::vector<TensorImplPtr> grads(const TensorImplPtr& g) {
    TensorImplPtr gx, gv;
    if (needs_input_grad(0)) gx = to(index_put(g, items, scalar_tensor(0.0, g->dtype)), x_dtype, false);
    if (needs_input_grad(1)) {
      auto sel = index(g, items);
      auto summed = GradMode::is_enabled() ? sum_to_graph(sel, v_used_shape) : sum_to(sel, v_used_shape);
      gv = to(reshape(summed, v_shape), v_dtype, false);
    }
    return {gx, gv};
  }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) { return grads(g); }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) { return grads(g); }
};
const OpSchema& IndexPutBackward::schema_v1 = kIndexPutSchema;
}  // namespace

TensorImplPtr index_put(const TensorImplPtr& x, const std::vector<IndexItem>& items, const TensorImplPtr& value) {
  auto out = fresh_copy(x);
  Shape used = index_put_raw(out, items, value);
  if (any_requires_grad({&x, &value})) {
    auto n = std::make_shared<IndexPutBackward>();
    n->items = items;
    n->x_shape = x->shape, n->v_shape = value->shape, n->v_used_shape = used;
    n->x_dtype = x->dtype, n->v_dtype = value->dtype;
    n->set_inputs({x, value});
    attach_node(out, std::move(n));
  }
  return out;
}

void index_put_(const TensorImplPtr& x, const std::vector<IndexItem>& items, const TensorImplPtr& value) {
  const char* op = "setitem";
  // PyTorch writes x[ints/slices] = v through a view of x, so a leaf refuses it as a view of a leaf.
  const bool basic = std::none_of(items.begin(), items.end(),
                                  [](const IndexItem& it) { return it.kind == IndexItem::Kind::Tensor; });
  LUCID_CHECK(!(basic && GradMode::is_enabled() && x->requires_grad && x->is_leaf()),
              "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  if (inplace_records(x, {value}, op)) {
    rebase_inplace(x, index_put(x, items, value), op);
    return;
  }
  index_put_raw(x, items, value);
  x->bump_version();
}

TensorImplPtr index_select(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index) {
  const char* op = "index_select";
  LUCID_CHECK_DTYPE(index->dtype == DType::Int64, op, ": index must be an int64 tensor, got ", dtype_name(index->dtype));
  LUCID_CHECK_SHAPE(index->ndim() <= 1, op, ": index must be 0-d or 1-d, got shape ", shape_str(index->shape));
  LUCID_CHECK_INDEX(x->ndim() > 0, op, ": cannot index a 0-d tensor along a dim");
  int64_t d = wrap_dim(dim, x->ndim(), op);
  std::vector<IndexItem> items(d);
  for (auto& it : items) it.kind = IndexItem::Kind::Slice;
  IndexItem t;
  t.kind = IndexItem::Kind::Tensor;
  t.t = index->ndim() == 1 ? index : make_view(index, {1}, {1}, index->offset);
  items.push_back(t);
  return index_impl<IndexKind::IndexSelect>(x, items, op);
}

namespace {

// PyTorch takes a 0-d index (and a 0-d input or src) along a vector as a 1-element vector:
// x.gather(0, torch.tensor(2)), zeros(10).scatter_add_(0, torch.tensor(y), ones(())).
bool scalar_index_case(const TensorImplPtr& x, const TensorImplPtr& index) { return index->ndim() == 0 && x->ndim() <= 1; }
TensorImplPtr as_vector(const TensorImplPtr& t) { return t->ndim() == 0 ? reshape(t, {1}) : t; }

}  // namespace

TensorImplPtr gather(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index) {
  if (scalar_index_case(x, index)) {
    wrap_dim(dim, 1, "gather");
    return reshape(gather(as_vector(x), 0, as_vector(index)), {});
  }
  int64_t d = wrap_dim(dim, x->ndim(), "gather");
  check_dim_index(x, index, d, "gather");
  auto out = gather_raw(x, d, index, "gather");
  if (any_requires_grad({&x})) {
    auto n = std::make_shared<GatherBackward>();
    n->in_shape_ = x->shape;
    n->in_dtype_ = x->dtype;
    n->dim_ = d;
    n->set_inputs({x, index});
    n->save(1, index);
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr scatter_add(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index, const TensorImplPtr& src) {
  if (scalar_index_case(x, index)) {
    wrap_dim(dim, 1, "scatter_add");
    auto out = scatter_add(as_vector(x), 0, as_vector(index), as_vector(src));
    return x->ndim() == 0 ? reshape(out, {}) : out;
  }
  int64_t d = wrap_dim(dim, x->ndim(), "scatter_add");
  LUCID_CHECK_DTYPE(x->dtype == src->dtype, "scatter_add: src dtype ", dtype_name(src->dtype),
                    " must match the input's dtype ", dtype_name(x->dtype));
  check_dim_index(x, index, d, "scatter_add", src);
  auto out = empty(x->shape, x->dtype);
  copy_into(out, x);
  scatter_add_raw(out, d, index, src, "scatter_add");
  if (any_requires_grad({&x, &src})) {
    auto n = std::make_shared<ScatterAddBackward>();
    n->src_shape_ = src->shape;
    n->dim_ = d;
    n->set_inputs({x, index, src});
    n->save(1, index);
    attach_node(out, std::move(n));
  }
  return out;
}

TensorImplPtr scatter_add_(const TensorImplPtr& x, int64_t dim, const TensorImplPtr& index, const TensorImplPtr& src) {
  if (x->ndim() == 1 && index->ndim() == 0) {
    wrap_dim(dim, 1, "scatter_add_");
    return scatter_add_(x, 0, as_vector(index), as_vector(src));
  }
  int64_t d = wrap_dim(dim, x->ndim(), "scatter_add_");
  check_inplace(x, "scatter_add_");
  check_value_no_grad(src, "scatter_add_");
  LUCID_CHECK_DTYPE(x->dtype == src->dtype, "scatter_add_: src dtype ", dtype_name(src->dtype),
                    " must match the input's dtype ", dtype_name(x->dtype));
  check_dim_index(x, index, d, "scatter_add_", src);
  auto s = src->storage == x->storage ? fresh_copy(src) : src;
  scatter_add_raw(x, d, index, s, "scatter_add_");
  x->bump_version();
  return x;
}

TensorImplPtr nonzero(const TensorImplPtr& x) {
  (void)kNonzeroSchema;
  auto c = cast_raw(contiguous_raw(x), DType::Bool);
  const bool* p = c->data<bool>();
  const int64_t n = c->numel(), nd = x->ndim();
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += p[i];
  auto out = empty({count, nd}, DType::Int64);
  int64_t* o = out->data<int64_t>();
  Shape idx(nd, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i]) o = std::copy(idx.begin(), idx.end(), o);
    for (int64_t d = nd - 1; d >= 0; --d) {  // row-major counter
      if (++idx[d] < x->shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<TensorImplPtr> nonzero_tuple(const TensorImplPtr& x) {
  auto nz = nonzero(x);
  std::vector<TensorImplPtr> cols;
  for (int64_t d = 0; d < x->ndim(); ++d)
    cols.push_back(make_view(nz, {nz->shape[0]}, {x->ndim()}, d));
  return cols;
}

}  // namespace lucid
