#include "ops/view.h"

#include <algorithm>

#include "ops/factory.h"
#include "ops/grad_graph.h"
#include "ops/join.h"
#include "ops/op_utils.h"

namespace lucid {

namespace {

#define LUCID_KEEP_INPUT_SCHEMA(op) \
  register_schema({.name = op, .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true})

// ---- backward nodes ---------------------------------------------------------------------

// view, reshape, flatten, unflatten, squeeze, unsqueeze: the grad takes the input's shape.
enum class ReshapeKind { View, Reshape, Flatten, Unflatten, Squeeze, Unsqueeze };
template <ReshapeKind K>
struct ReshapeBackward final : FuncOp<ReshapeBackward<K>, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape_;
  const char* name() const override {
    static const char* names[] = {"ViewBackward",      "ReshapeBackward", "FlattenBackward",
                                  "UnflattenBackward", "SqueezeBackward", "UnsqueezeBackward"};
    return names[int(K)];
  }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) { return {reshape_raw(g, in_shape_)}; }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) { return {reshape(g, in_shape_)}; }
};
template <> const OpSchema& ReshapeBackward<ReshapeKind::View>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("view");
template <> const OpSchema& ReshapeBackward<ReshapeKind::Reshape>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("reshape");
template <> const OpSchema& ReshapeBackward<ReshapeKind::Flatten>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("flatten");
template <> const OpSchema& ReshapeBackward<ReshapeKind::Unflatten>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("unflatten");
template <> const OpSchema& ReshapeBackward<ReshapeKind::Squeeze>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("squeeze");
template <> const OpSchema& ReshapeBackward<ReshapeKind::Unsqueeze>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("unsqueeze");

// permute, transpose, movedim: out dim i is input dim perm_[i]; the grad goes back through
// the inverse permutation (a view of the grad, no copy).
enum class PermuteKind { Permute, Transpose, MoveDim };
template <PermuteKind K>
struct PermuteBackward final : FuncOp<PermuteBackward<K>, 1> {
  static const OpSchema& schema_v1;
  std::vector<int64_t> perm_;
  const char* name() const override {
    static const char* names[] = {"PermuteBackward", "TransposeBackward", "MovedimBackward"};
    return names[int(K)];
  }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    Shape shape(perm_.size()), strides(perm_.size());
    for (size_t i = 0; i < perm_.size(); ++i) {
      shape[perm_[i]] = g->shape[i];
      strides[perm_[i]] = g->strides[i];
    }
    return {make_view(g, shape, strides, g->offset)};
  }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    std::vector<int64_t> inv(perm_.size());
    for (size_t i = 0; i < perm_.size(); ++i) inv[perm_[i]] = int64_t(i);
    return {permute(g, inv)};
  }
};
template <> const OpSchema& PermuteBackward<PermuteKind::Permute>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("permute");
template <> const OpSchema& PermuteBackward<PermuteKind::Transpose>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("transpose");
template <> const OpSchema& PermuteBackward<PermuteKind::MoveDim>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("movedim");

// expand: every output element that shares an input element contributes to its grad.
struct ExpandBackward final : FuncOp<ExpandBackward, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape_;
  const char* name() const override { return "ExpandBackward"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) { return {sum_to(g, in_shape_)}; }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) { return {sum_to_graph(g, in_shape_)}; }
};
const OpSchema& ExpandBackward::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("expand");

// A strided view's place `rel` in a contiguous tensor of its base's shape, both directions (each
// the other's adjoint): t written through the view into zeros of `shape`, and the view's region
// of a base-shaped t as a contiguous tensor.
TensorImplPtr embed_region(const TensorImplPtr& t, const Shape& shape, const Geom& rel) {
  auto z = full(shape, 0.0, t->dtype);
  copy_into(make_view(z, rel.shape, rel.strides, rel.offset), t);
  return z;
}
TensorImplPtr take_region(const TensorImplPtr& t, const Geom& rel) {
  auto c = contiguous_raw(t);
  return contiguous_raw(make_view(c, rel.shape, rel.strides, c->offset + rel.offset));
}

// Strided sub-views: zeros of the input's shape with the grad written through the view.
template <SliceKind K>
struct SliceBackward final : FuncOp<SliceBackward<K>, 1> {
  static const OpSchema& schema_v1;
  Shape in_shape_;
  Geom rel_;
  const char* name_ = nullptr;  // overrides the kind's name (getitem)
  const char* name() const override {
    static const char* names[] = {"NarrowBackward", "SelectBackward", "GetitemBackward", "DiagonalBackward",
                                  "AsStridedBackward"};
    return name_ ? name_ : names[int(K)];
  }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) { return {embed_region(g, in_shape_, rel_)}; }
  // Linear in g; the adjoint takes the same view of the input-shaped gradient.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const Geom rel = rel_;
    const Shape in_shape = in_shape_;
    return {linear_map(
        std::string(name()) + "Backward", g,
        [rel, in_shape](const TensorImplPtr& t) { return embed_region(t, in_shape, rel); },
        [rel](const TensorImplPtr& u) { return take_region(u, rel); })};
  }
};
template <> const OpSchema& SliceBackward<SliceKind::Narrow>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("narrow");
template <> const OpSchema& SliceBackward<SliceKind::Select>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("select");
template <> const OpSchema& SliceBackward<SliceKind::GetItem>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("getitem");
template <> const OpSchema& SliceBackward<SliceKind::Diagonal>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("diagonal");
template <> const OpSchema& SliceBackward<SliceKind::AsStrided>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("as_strided");

// split, chunk, unbind: one node shared by all the pieces (PyTorch's SplitBackward0,
// SplitWithSizesBackward0, UnbindBackward0), piece i being output i. Its backward writes every
// piece's gradient into one buffer of x's shape and zeroes only the pieces no gradient reached;
// under create_graph it is the differentiable cat (unbind: stack) of the pieces' gradients.
enum class PiecesKind { Split, SplitWithSizes, Unbind };
// The piece [start, start + len) along dim of geometry g (unbind: index start, dim dropped).
Geom piece_geom(Geom g, PiecesKind kind, int64_t dim, int64_t start, int64_t len) {
  if (kind == PiecesKind::Unbind) geom_select(g, size_t(dim), start);
  else geom_slice(g, size_t(dim), start, len, 1);
  return g;
}
struct PiecesBackward final : Node {
  static const OpSchema &split_schema, &chunk_schema, &unbind_schema;
  PiecesKind kind_ = PiecesKind::Split;
  const OpSchema* schema_ = &split_schema;  // the op that made the pieces
  Shape in_shape_;
  DType in_dtype_ = kDefaultFloat;
  int64_t dim_ = 0;
  Shape sizes_;  // each piece's length along dim_ (unbind: 1, and the piece has no dim_)
  bool released_ = false;
  std::vector<PreHooks> later_pre_hooks_;  // those of outputs 1, 2, ... (pre_hooks: output 0's)

  PreHooks& output_pre_hooks(uint32_t output_nr) override {
    return output_nr == 0 ? pre_hooks : later_pre_hooks_.at(output_nr - 1);
  }
  const char* name() const override {
    static const char* names[] = {"SplitBackward", "SplitWithSizesBackward", "UnbindBackward"};
    return names[int(kind_)];
  }
  const OpSchema* schema() const override { return schema_; }
  std::vector<TensorImplPtr> run(const TensorImplPtr& g) override { return run_outputs({g}); }
  std::vector<TensorImplPtr> run_outputs(const std::vector<TensorImplPtr>& grads) override {
    LUCID_CHECK(!released_, kFreedGraphMessage);
    const bool graph = GradMode::is_enabled();
    std::vector<TensorImplPtr> parts;  // create_graph: each piece's gradient, zeros where missing
    auto dx = graph ? nullptr : empty(in_shape_, in_dtype_);
    int64_t start = 0;
    for (size_t i = 0; i < sizes_.size(); start += sizes_[i], ++i) {
      const Geom p = piece_geom(contiguous_geom(in_shape_), kind_, dim_, start, sizes_[i]);
      if (graph) parts.push_back(grads[i] ? grads[i] : full(p.shape, 0.0, in_dtype_));
      else copy_into(make_view(dx, p.shape, p.strides, p.offset), grads[i] ? grads[i] : scalar_tensor(0.0, in_dtype_));
    }
    if (graph) dx = kind_ == PiecesKind::Unbind ? stack(parts, dim_) : cat(parts, dim_);
    return {dx};
  }
  void release_saved() override {
    next_edges.clear();
    released_ = true;
  }
};
const OpSchema& PiecesBackward::split_schema = LUCID_KEEP_INPUT_SCHEMA("split");
const OpSchema& PiecesBackward::chunk_schema = LUCID_KEEP_INPUT_SCHEMA("chunk");
const OpSchema& PiecesBackward::unbind_schema = LUCID_KEEP_INPUT_SCHEMA("unbind");

// contiguous, clone, to: the grad passes through, cast back to the input's dtype.
enum class CopyKind { Contiguous, Clone, To };
template <CopyKind K>
struct CopyBackward final : FuncOp<CopyBackward<K>, 1> {
  static const OpSchema& schema_v1;
  DType in_dtype_ = kDefaultFloat;
  const char* name() const override {
    static const char* names[] = {"ContiguousBackward", "CloneBackward", "ToCopyBackward"};
    return names[int(K)];
  }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) { return {cast_raw(g, in_dtype_)}; }
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    return {to(g, in_dtype_, false)};
  }
};
template <> const OpSchema& CopyBackward<CopyKind::Contiguous>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("contiguous");
template <> const OpSchema& CopyBackward<CopyKind::Clone>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("clone");
template <> const OpSchema& CopyBackward<CopyKind::To>::schema_v1 = LUCID_KEEP_INPUT_SCHEMA("to");

#undef LUCID_KEEP_INPUT_SCHEMA

// Attaches a node of type N (set up by `init`) to out when x requires grad.
// A view (reshape may have copied) remembers its first base. Not under no_grad: that fast path
// pays nothing, and PyTorch refuses in-place writes with grad through views made there anyway.
void note_view(const TensorImplPtr& out, const TensorImplPtr& x) {
  if (GradMode::is_enabled() && out->storage == x->storage) {
    auto root = x->view_base.lock();
    out->view_base = root ? root : x;
    out->view_gen = x->storage->history_gen;
  }
}

template <class N, class Init>
void record(const TensorImplPtr& out, const TensorImplPtr& x, Init init) {
  note_view(out, x);
  if (!any_requires_grad({&x})) return;
  auto n = std::make_shared<N>();
  init(*n);
  n->set_inputs({x});
  attach_node(out, std::move(n));
}

template <ReshapeKind K>
TensorImplPtr reshape_as_kind(const TensorImplPtr& x, TensorImplPtr out) {
  record<ReshapeBackward<K>>(out, x, [&](auto& n) { n.in_shape_ = x->shape; });
  return out;
}

template <SliceKind K>
void record_slice(const TensorImplPtr& out, const TensorImplPtr& x, const Geom& rel, const char* name = nullptr) {
  record<SliceBackward<K>>(out, x, [&](auto& n) {
    n.in_shape_ = x->shape;
    n.rel_ = rel;
    n.name_ = name;
  });
}

template <PermuteKind K>
TensorImplPtr permute_as_kind(const TensorImplPtr& x, const std::vector<int64_t>& perm) {
  Shape shape(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape[i] = x->shape[perm[i]];
    strides[i] = x->strides[perm[i]];
  }
  auto out = make_view(x, shape, strides, x->offset);
  record<PermuteBackward<K>>(out, x, [&](auto& n) { n.perm_ = perm; });
  return out;
}

template <CopyKind K>
TensorImplPtr copy_as_kind(const TensorImplPtr& x, DType dtype) {
  // clone/to keep x's layout as PyTorch's preserve_format does (NOTE [elementwise output layout])
  auto out = K == CopyKind::Contiguous ? empty(x->shape, dtype) : empty_elementwise(x->shape, dtype, {x.get()});
  copy_into(out, x);
  if (is_floating(dtype)) record<CopyBackward<K>>(out, x, [&](auto& n) { n.in_dtype_ = x->dtype; });
  return out;
}

// x viewed (or, when allow_copy, copied) into `shape`; no autograd.
TensorImplPtr reshape_impl(const TensorImplPtr& x, const Shape& shape, const char* op, bool allow_copy) {
  Shape s = infer_shape(shape, x->numel(), op);
  if (auto st = view_strides(x->shape, x->strides, s)) return make_view(x, s, *st, x->offset);
  LUCID_CHECK(allow_copy, op, ": the strides ", shape_str(x->strides), " of the input of shape ",
              shape_str(x->shape), " do not allow viewing it as shape ", shape_str(s),
              " (at least one dimension spans across two contiguous subspaces); use .reshape(...) instead");
  auto c = contiguous_raw(x);
  return make_view(c, s, contiguous_strides(s), c->offset);
}

int64_t checked_dim_size(const TensorImplPtr& x, int64_t& dim, const char* op) {
  LUCID_CHECK_INDEX(x->ndim() > 0, op, ": cannot be applied to a 0-d tensor");
  dim = wrap_dim(dim, x->ndim(), op);
  return x->shape[dim];
}

// One piece [start, start + len) along dim as a strided view recorded as kind K.
template <SliceKind K>
TensorImplPtr piece(const TensorImplPtr& x, int64_t dim, int64_t start, int64_t len) {
  Geom g = geom_of(x), rel = contiguous_geom(x->shape);
  geom_slice(g, dim, start, len, 1);
  geom_slice(rel, dim, start, len, 1);
  auto out = make_view(x, g.shape, g.strides, g.offset);
  record_slice<K>(out, x, rel);
  return out;
}

// The pieces of x along dim (of `sizes`; unbind: every index), views sharing one node.
std::vector<TensorImplPtr> pieces(const TensorImplPtr& x, const Shape& sizes, int64_t dim, PiecesKind kind,
                                  const OpSchema& schema) {
  std::vector<TensorImplPtr> out;
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); start += sizes[i], ++i) {
    const Geom g = piece_geom(geom_of(x), kind, dim, start, sizes[i]);
    out.push_back(make_view(x, g.shape, g.strides, g.offset));
    note_view(out.back(), x);
  }
  if (out.empty() || !any_requires_grad({&x})) return out;
  auto n = std::make_shared<PiecesBackward>();
  n->kind_ = kind;
  n->schema_ = &schema;
  n->in_shape_ = x->shape;
  n->in_dtype_ = x->dtype;
  n->dim_ = dim;
  n->sizes_ = sizes;
  n->num_outputs = uint32_t(out.size());
  n->later_pre_hooks_.resize(out.size() - 1);
  n->next_edges = {gradient_edge(x)};
  for (size_t i = 0; i < out.size(); ++i) attach_node(out[i], n, uint32_t(i));
  return out;
}

// The base of a view after an in-place op on the view: in x's region (`rel`, within the
// contiguous base) the value is the op's result, elsewhere the base's old value. So the grad
// goes to the old base with the region zeroed, and to the result as the region's gradient.
struct CopySlices final : FuncOp<CopySlices, 2> {
  static const OpSchema& schema_v1;
  Shape base_shape_;
  Geom rel_;
  const char* name() const override { return "CopySlices"; }
  std::vector<TensorImplPtr> apply(const TensorImplPtr& g) {
    TensorImplPtr gb, gr;
    if (needs_input_grad(1)) gr = take_region(g, rel_);
    if (needs_input_grad(0)) gb = zero_region(g, rel_);
    return {gb, gr};
  }
  // Both maps are linear in g: zeroing the region is its own adjoint; taking the region's
  // adjoint writes it into zeros.
  std::vector<TensorImplPtr> apply_graph(const TensorImplPtr& g) {
    const Geom rel = rel_;
    const Shape base_shape = base_shape_;
    TensorImplPtr gb, gr;
    if (needs_input_grad(0)) {
      auto zero = [rel](const TensorImplPtr& t) { return zero_region(t, rel); };
      gb = linear_map("CopySlicesBackward", g, zero, zero);
    }
    if (needs_input_grad(1))
      gr = linear_map(
          "CopySlicesBackward", g, [rel](const TensorImplPtr& t) { return take_region(t, rel); },
          [rel, base_shape](const TensorImplPtr& u) { return embed_region(u, base_shape, rel); });
    return {gb, gr};
  }
  // A contiguous copy of g with the region `rel` set to zero.
  static TensorImplPtr zero_region(const TensorImplPtr& g, const Geom& rel) {
    auto out = empty(g->shape, g->dtype);
    copy_into(out, g);
    copy_into(make_view(out, rel.shape, rel.strides, rel.offset), scalar_tensor(0.0, g->dtype));
    return out;
  }
};
const OpSchema& CopySlices::schema_v1 = register_schema(
    {.name = "copy_slices", .version = 1, .amp_policy = AmpPolicy::KeepInput, .produces_grad = true});

}  // namespace

TensorImplPtr strided_view(const TensorImplPtr& x, const Geom& g, const Geom& rel, SliceKind kind,
                           const char* name) {
  auto out = make_view(x, g.shape, g.strides, g.offset);
  switch (kind) {
    case SliceKind::Narrow: record_slice<SliceKind::Narrow>(out, x, rel); break;
    case SliceKind::Select: record_slice<SliceKind::Select>(out, x, rel); break;
    case SliceKind::GetItem: record_slice<SliceKind::GetItem>(out, x, rel, name); break;
    case SliceKind::Diagonal: record_slice<SliceKind::Diagonal>(out, x, rel); break;
    case SliceKind::AsStrided: record_slice<SliceKind::AsStrided>(out, x, rel); break;
  }
  return out;
}

Shape infer_shape(const Shape& shape, int64_t numel, const char* op) {
  Shape s = shape;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      LUCID_CHECK_SHAPE(infer < 0, op, ": only one dimension can be inferred (-1), got shape ", shape_str(shape));
      infer = int64_t(i);
    } else {
      LUCID_CHECK_SHAPE(s[i] >= 0, op, ": invalid size ", s[i], " in shape ", shape_str(shape));
      known *= s[i];
    }
  }
  if (infer >= 0) {
    LUCID_CHECK_SHAPE(known != 0 && numel % known == 0, op, ": shape ", shape_str(shape),
                      " is invalid for input of size ", numel,
                      known == 0 ? " (the -1 is ambiguous next to a 0)" : "");
    s[infer] = numel / known;
  }
  LUCID_CHECK_SHAPE(numel_of(s) == numel, op, ": shape ", shape_str(shape), " is invalid for input of size ", numel);
  return s;
}

std::optional<Shape> view_strides(const Shape& os, const Shape& ost, const Shape& ns) {
  if (os.empty()) return contiguous_strides(ns);  // one element: any all-ones shape views it
  if (numel_of(os) == 0) return os == ns ? ost : contiguous_strides(ns);
  // Walk the old dims from the back in "chunks" that are contiguous among themselves; the
  // new dims must tile each chunk exactly (size-1 new dims fit anywhere).
  Shape nst(ns.size(), 1);
  int64_t view_d = int64_t(ns.size()) - 1;
  int64_t chunk_base = ost.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(os.size()) - 1; d >= 0; --d) {
    tensor_numel *= os[d];
    if (d == 0 || (os[d - 1] != 1 && ost[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || ns[view_d] == 1)) {
        nst[view_d] = view_numel * chunk_base;
        view_numel *= ns[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = ost[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return nst;
}

TensorImplPtr reshape_raw(const TensorImplPtr& x, const Shape& shape) {
  if (x->shape == shape) return x;
  return reshape_impl(x, shape, "reshape", /*allow_copy=*/true);
}

TensorImplPtr view(const TensorImplPtr& x, const Shape& shape) {
  return reshape_as_kind<ReshapeKind::View>(x, reshape_impl(x, shape, "view", /*allow_copy=*/false));
}

TensorImplPtr reshape(const TensorImplPtr& x, const Shape& shape) {
  return reshape_as_kind<ReshapeKind::Reshape>(x, reshape_impl(x, shape, "reshape", /*allow_copy=*/true));
}

TensorImplPtr flatten(const TensorImplPtr& x, int64_t start_dim, int64_t end_dim) {
  if (x->ndim() == 0) return reshape_as_kind<ReshapeKind::Flatten>(x, reshape_impl(x, {1}, "flatten", true));
  int64_t s = wrap_dim(start_dim, x->ndim(), "flatten"), e = wrap_dim(end_dim, x->ndim(), "flatten");
  LUCID_CHECK_INDEX(s <= e, "flatten: start_dim ", start_dim, " comes after end_dim ", end_dim,
                    " for a tensor of shape ", shape_str(x->shape));
  if (s == e) return x;
  Shape shape(x->shape.begin(), x->shape.begin() + s);
  int64_t n = 1;
  for (int64_t d = s; d <= e; ++d) n *= x->shape[d];
  shape.push_back(n);
  shape.insert(shape.end(), x->shape.begin() + e + 1, x->shape.end());
  return reshape_as_kind<ReshapeKind::Flatten>(x, reshape_impl(x, shape, "flatten", true));
}

TensorImplPtr unflatten(const TensorImplPtr& x, int64_t dim, const Shape& sizes) {
  int64_t n = checked_dim_size(x, dim, "unflatten");
  LUCID_CHECK_SHAPE(!sizes.empty(), "unflatten: sizes must be non-empty");
  Shape inner = infer_shape(sizes, n, "unflatten");
  Shape shape(x->shape.begin(), x->shape.begin() + dim);
  shape.insert(shape.end(), inner.begin(), inner.end());
  shape.insert(shape.end(), x->shape.begin() + dim + 1, x->shape.end());
  return reshape_as_kind<ReshapeKind::Unflatten>(x, reshape_impl(x, shape, "unflatten", true));
}

TensorImplPtr squeeze(const TensorImplPtr& x, const std::vector<int64_t>& dims) {
  std::vector<bool> drop(x->ndim(), dims.empty());
  std::vector<bool> seen(std::max<int64_t>(x->ndim(), 1), false);
  for (auto d : dims) {
    int64_t w = wrap_dim(d, x->ndim(), "squeeze");
    LUCID_CHECK_INDEX(!seen[w], "squeeze: dim ", d, " appears more than once in ", shape_str(dims));
    seen[w] = true;
    if (x->ndim() > 0) drop[w] = true;
  }
  Shape shape, strides;
  for (int64_t i = 0; i < x->ndim(); ++i) {
    if (drop[i] && x->shape[i] == 1) continue;
    shape.push_back(x->shape[i]);
    strides.push_back(x->strides[i]);
  }
  return reshape_as_kind<ReshapeKind::Squeeze>(x, make_view(x, shape, strides, x->offset));
}

TensorImplPtr unsqueeze(const TensorImplPtr& x, int64_t dim) {
  int64_t d = wrap_dim(dim, x->ndim() + 1, "unsqueeze");
  Geom g = geom_of(x);
  geom_insert(g, d);
  if (d < x->ndim()) g.strides[d] = x->shape[d] * x->strides[d];
  return reshape_as_kind<ReshapeKind::Unsqueeze>(x, make_view(x, g.shape, g.strides, g.offset));
}

namespace {
std::vector<int64_t> checked_perm(const TensorImplPtr& x, const std::vector<int64_t>& dims, const char* op) {
  LUCID_CHECK_SHAPE(int64_t(dims.size()) == x->ndim(), op, ": got ", dims.size(), " dims ", shape_str(dims),
                    " for a tensor of shape ", shape_str(x->shape), " (expected ", x->ndim(), ")");
  std::vector<int64_t> perm(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    perm[i] = wrap_dim(dims[i], x->ndim(), op);
    LUCID_CHECK_INDEX(!seen[perm[i]], op, ": dim ", dims[i], " appears more than once in ", shape_str(dims));
    seen[perm[i]] = true;
  }
  return perm;
}
}  // namespace

TensorImplPtr permute(const TensorImplPtr& x, const std::vector<int64_t>& dims) {
  return permute_as_kind<PermuteKind::Permute>(x, checked_perm(x, dims, "permute"));
}

TensorImplPtr transpose(const TensorImplPtr& x, int64_t dim0, int64_t dim1) {
  int64_t a = wrap_dim(dim0, x->ndim(), "transpose"), b = wrap_dim(dim1, x->ndim(), "transpose");
  std::vector<int64_t> perm(x->ndim());
  for (int64_t i = 0; i < x->ndim(); ++i) perm[i] = i;
  if (x->ndim() > 0) std::swap(perm[a], perm[b]);
  return permute_as_kind<PermuteKind::Transpose>(x, perm);
}

TensorImplPtr movedim(const TensorImplPtr& x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  LUCID_CHECK_SHAPE(src.size() == dst.size(), "movedim: source ", shape_str(src), " and destination ",
                    shape_str(dst), " must have the same number of dims");
  const int64_t n = x->ndim();
  std::vector<int64_t> perm(n, -1);
  std::vector<bool> used_src(std::max<int64_t>(n, 1), false), used_dst(std::max<int64_t>(n, 1), false);
  for (size_t i = 0; i < src.size(); ++i) {
    int64_t s = wrap_dim(src[i], n, "movedim"), d = wrap_dim(dst[i], n, "movedim");
    LUCID_CHECK_INDEX(!used_src[s], "movedim: repeated dim in source ", shape_str(src));
    LUCID_CHECK_INDEX(!used_dst[d], "movedim: repeated dim in destination ", shape_str(dst));
    used_src[s] = used_dst[d] = true;
    if (n > 0) perm[d] = s;
  }
  // The dims not moved keep their order in the free destination slots.
  int64_t next = 0;
  for (int64_t d = 0; d < n; ++d) {
    if (perm[d] >= 0) continue;
    while (used_src[next]) ++next;
    perm[d] = next++;
  }
  return permute_as_kind<PermuteKind::MoveDim>(x, perm);
}

TensorImplPtr expand(const TensorImplPtr& x, const Shape& sizes) {
  LUCID_CHECK_SHAPE(int64_t(sizes.size()) >= x->ndim(), "expand: the target sizes ", shape_str(sizes),
                    " have fewer dims than the tensor of shape ", shape_str(x->shape));
  const size_t lead = sizes.size() - x->shape.size();
  Shape shape(sizes.size()), strides(sizes.size(), 0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i < lead) {
      LUCID_CHECK_SHAPE(sizes[i] >= 0, "expand: size ", sizes[i], " is not allowed in a leading, new dim (target sizes ",
                        shape_str(sizes), ")");
      shape[i] = sizes[i];
      continue;
    }
    int64_t have = x->shape[i - lead], want = sizes[i] == -1 ? have : sizes[i];
    LUCID_CHECK_SHAPE(want >= 0, "expand: invalid size ", sizes[i], " in target sizes ", shape_str(sizes));
    LUCID_CHECK_SHAPE(want == have || have == 1, "expand: the expanded size ", want, " must match the existing size ",
                      have, " at non-singleton dim ", i, " (target sizes ", shape_str(sizes), ", tensor shape ",
                      shape_str(x->shape), ")");
    shape[i] = want;
    strides[i] = want == have ? x->strides[i - lead] : 0;
  }
  check_shape_size(shape, 1, "expand");
  auto out = make_view(x, shape, strides, x->offset);
  record<ExpandBackward>(out, x, [&](ExpandBackward& n) { n.in_shape_ = x->shape; });
  return out;
}

TensorImplPtr narrow(const TensorImplPtr& x, int64_t dim, int64_t start, int64_t length) {
  int64_t n = checked_dim_size(x, dim, "narrow");
  int64_t s = start < 0 ? start + n : start;
  LUCID_CHECK_INDEX(s >= 0 && s <= n, "narrow: start ", start, " out of range for dim ", dim, " of size ", n);
  LUCID_CHECK_INDEX(length >= 0 && s + length <= n, "narrow: start (", start, ") + length (", length,
                    ") exceeds dim ", dim, " of size ", n);
  return piece<SliceKind::Narrow>(x, dim, s, length);
}

TensorImplPtr select(const TensorImplPtr& x, int64_t dim, int64_t index) {
  int64_t n = checked_dim_size(x, dim, "select");
  LUCID_CHECK_INDEX(index >= -n && index < n, "select: index ", index, " is out of range for dim ", dim,
                    " with size ", n);
  int64_t i = index < 0 ? index + n : index;
  Geom g = geom_of(x), rel = contiguous_geom(x->shape);
  geom_select(g, dim, i);
  geom_select(rel, dim, i);
  return strided_view(x, g, rel, SliceKind::Select);
}

std::vector<TensorImplPtr> split(const TensorImplPtr& x, int64_t split_size, int64_t dim) {
  int64_t n = checked_dim_size(x, dim, "split");
  LUCID_CHECK(split_size > 0 || (split_size == 0 && n == 0), "split: split_size must be positive, got ",
              split_size, " for dim ", dim, " of size ", n);
  Shape sizes;
  for (int64_t s = 0; s < n; s += split_size) sizes.push_back(std::min(split_size, n - s));
  if (sizes.empty()) sizes.push_back(0);
  return pieces(x, sizes, dim, PiecesKind::Split, PiecesBackward::split_schema);
}

std::vector<TensorImplPtr> split_with_sizes(const TensorImplPtr& x, const Shape& sizes, int64_t dim) {
  int64_t n = checked_dim_size(x, dim, "split");
  int64_t total = 0;
  for (auto s : sizes) {
    LUCID_CHECK_SHAPE(s >= 0, "split: split sizes must be non-negative, got ", shape_str(sizes));
    total += s;
  }
  LUCID_CHECK_SHAPE(total == n, "split: split sizes ", shape_str(sizes), " add up to ", total, ", but dim ", dim,
                    " has size ", n, " (shape ", shape_str(x->shape), ")");
  return pieces(x, sizes, dim, PiecesKind::SplitWithSizes, PiecesBackward::split_schema);
}

std::vector<TensorImplPtr> chunk(const TensorImplPtr& x, int64_t chunks, int64_t dim) {
  LUCID_CHECK(chunks > 0, "chunk: chunks must be positive, got ", chunks);
  int64_t n = checked_dim_size(x, dim, "chunk");
  // As PyTorch: pieces of ceil(n / chunks), so fewer than `chunks` may come back.
  int64_t size = (n + chunks - 1) / chunks;
  Shape sizes;
  if (n == 0) sizes.assign(chunks, 0);
  for (int64_t s = 0; s < n; s += size) sizes.push_back(std::min(size, n - s));
  // PyTorch's chunk is a split, or a split_with_sizes for an empty dim.
  return pieces(x, sizes, dim, n == 0 ? PiecesKind::SplitWithSizes : PiecesKind::Split, PiecesBackward::chunk_schema);
}

std::vector<TensorImplPtr> unbind(const TensorImplPtr& x, int64_t dim) {
  int64_t n = checked_dim_size(x, dim, "unbind");
  return pieces(x, Shape(size_t(n), 1), dim, PiecesKind::Unbind, PiecesBackward::unbind_schema);
}

TensorImplPtr contiguous(const TensorImplPtr& x) {
  if (x->is_contiguous()) return x;
  return copy_as_kind<CopyKind::Contiguous>(x, x->dtype);
}

TensorImplPtr clone(const TensorImplPtr& x) { return copy_as_kind<CopyKind::Clone>(x, x->dtype); }

TensorImplPtr to(const TensorImplPtr& x, DType dtype, bool copy) {
  if (dtype == x->dtype && !copy) return x;
  return copy_as_kind<CopyKind::To>(x, dtype);
}

TensorImplPtr diagonal(const TensorImplPtr& x, int64_t offset, int64_t dim1, int64_t dim2) {
  LUCID_CHECK_SHAPE(x->ndim() >= 2, "diagonal: expected a tensor with at least 2 dims, got shape ", shape_str(x->shape));
  const int64_t d1 = wrap_dim(dim1, x->ndim(), "diagonal"), d2 = wrap_dim(dim2, x->ndim(), "diagonal");
  LUCID_CHECK(d1 != d2, "diagonal: dim1 and dim2 cannot be the same dim, got ", dim1, " and ", dim2);
  const int64_t n1 = x->shape[size_t(d1)], n2 = x->shape[size_t(d2)];
  const int64_t len = std::max<int64_t>(0, offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2));
  auto take = [&](Geom g) {
    const int64_t s1 = g.strides[size_t(d1)], s2 = g.strides[size_t(d2)];
    if (len > 0) g.offset += offset >= 0 ? offset * s2 : -offset * s1;
    for (int64_t d : {std::max(d1, d2), std::min(d1, d2)}) {
      g.shape.erase(g.shape.begin() + d);
      g.strides.erase(g.strides.begin() + d);
    }
    g.shape.push_back(len);
    g.strides.push_back(s1 + s2);
    return g;
  };
  return strided_view(x, take(geom_of(x)), take(contiguous_geom(x->shape)), SliceKind::Diagonal);
}

bool is_view_of_grad_leaf(const TensorImplPtr& x) {
  auto base = x->view_base.lock();
  return base && base->requires_grad && base->is_leaf();
}

bool rebase_view_base(const TensorImplPtr& x, const TensorImplPtr& result) {
  auto base = x->view_base.lock();
  if (!base || !base->is_contiguous() || !(base->requires_grad || result->requires_grad)) return false;
  auto n = std::make_shared<CopySlices>();
  n->base_shape_ = base->shape;
  n->rel_ = {x->shape, x->strides, x->offset - base->offset};
  n->set_inputs({base, result});  // the base's old history, before attach_node replaces it
  attach_node(base, std::move(n));
  x->view_gen = ++x->storage->history_gen;  // x's own grad_fn is the result's (set by the caller)
  return true;
}

namespace {
// A view made before its base's history was rewritten through another view reads from the new
// history: its grad_fn becomes the view's region of the base (PyTorch's AsStridedBackward).
void refresh_view_history(const TensorImplPtr& t) {
  t->view_gen = t->storage->history_gen;
  auto base = t->view_base.lock();
  if (!base || !base->is_contiguous() || !base->requires_grad) return;
  auto n = std::make_shared<SliceBackward<SliceKind::AsStrided>>();
  n->in_shape_ = base->shape;
  n->rel_ = {t->shape, t->strides, t->offset - base->offset};
  n->set_inputs({base});
  attach_node(t, std::move(n));
}
const bool kViewRefreshInstalled = (set_view_refresh(&refresh_view_history), true);
}  // namespace


}  // namespace lucid
