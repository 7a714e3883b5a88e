// Views and layout ops. A view shares x's storage (and so its version counter): only shape,
// strides and offset change. Their backward nodes save no tensor, only geometry:
//   reshape-like (view, reshape, flatten, unflatten, squeeze, unsqueeze): grad reshaped back;
//   permute/transpose: grad permuted by the inverse permutation;  expand: grad summed back;
//   strided sub-views (narrow, select, basic indexing): grad written into zeros of x's shape
//   through the same view taken on a contiguous buffer ("rel" geometry);
//   split, chunk, unbind: one node for all pieces, whose gradients it writes into one buffer.
// reshape views when the strides allow it and copies otherwise; view never copies and raises.
// contiguous/clone/to copy (to: the backward casts the grad back to the input's dtype).
#pragma once
#include <optional>
#include <vector>

#include "core/tensor_impl.h"

namespace lucid {

// Where a strided view sits in its storage.
struct Geom {
  Shape shape, strides;
  int64_t offset = 0;
};
inline Geom geom_of(const TensorImplPtr& t) { return {t->shape, t->strides, t->offset}; }
inline Geom contiguous_geom(const Shape& s) { return {s, contiguous_strides(s), 0}; }
// In-place geometry steps shared by narrow/select/indexing (arguments already validated).
inline void geom_select(Geom& g, size_t dim, int64_t i) {
  g.offset += i * g.strides[dim];
  g.shape.erase(g.shape.begin() + dim);
  g.strides.erase(g.strides.begin() + dim);
}
inline void geom_slice(Geom& g, size_t dim, int64_t start, int64_t len, int64_t step) {
  if (len > 0) g.offset += start * g.strides[dim];
  g.shape[dim] = len;
  g.strides[dim] *= step;
}
inline void geom_insert(Geom& g, size_t dim) {
  g.shape.insert(g.shape.begin() + dim, 1);
  g.strides.insert(g.strides.begin() + dim, 1);
}

// Which op produced a strided sub-view: picks the backward node's name and schema.
enum class SliceKind { Narrow, Select, GetItem, Diagonal, AsStrided };
// A view of x with geometry `g`, recording the node that writes the grad through `rel` (the
// same view taken from a contiguous tensor of x's shape) into zeros of x's shape.
// `name`, when given, is the node's name in place of the kind's (basic indexing names its node
// after the last view it applies, as PyTorch does: x[0] is a SelectBackward, x[1:] a SliceBackward).
TensorImplPtr strided_view(const TensorImplPtr& x, const Geom& g, const Geom& rel, SliceKind kind,
                           const char* name = nullptr);

// After an in-place op wrote `result` (x's new value, with its node) into the view x: when x's
// base is alive and contiguous, the base's history becomes a CopySlices node (its old history
// outside x's region, `result`'s inside), as PyTorch rewrites a base after an in-place op on one
// of its views. Returns false when x is no view (or its base is gone or strided): then only x's
// own history moves.
bool rebase_view_base(const TensorImplPtr& x, const TensorImplPtr& result);
// A leaf that requires grad, when x is a view of one (in-place writes into it are refused).
bool is_view_of_grad_leaf(const TensorImplPtr& x);

// Resolves one -1 in `shape` against `numel`; ShapeMismatch naming `op` when impossible.
Shape infer_shape(const Shape& shape, int64_t numel, const char* op);
// Strides that view (old_shape, old_strides) as new_shape without copying, if any exist
// (PyTorch's computeStride: dims may be split or merged only within contiguous chunks).
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides, const Shape& new_shape);
// Reshape without autograd (a view when possible, else a copy): used by backward nodes.
TensorImplPtr reshape_raw(const TensorImplPtr& x, const Shape& shape);

TensorImplPtr view(const TensorImplPtr& x, const Shape& shape);
TensorImplPtr reshape(const TensorImplPtr& x, const Shape& shape);
TensorImplPtr flatten(const TensorImplPtr& x, int64_t start_dim, int64_t end_dim);
TensorImplPtr unflatten(const TensorImplPtr& x, int64_t dim, const Shape& sizes);
// dims empty = every size-1 dim; a listed dim whose size is not 1 is left alone (PyTorch).
TensorImplPtr squeeze(const TensorImplPtr& x, const std::vector<int64_t>& dims);
TensorImplPtr unsqueeze(const TensorImplPtr& x, int64_t dim);
TensorImplPtr permute(const TensorImplPtr& x, const std::vector<int64_t>& dims);
TensorImplPtr transpose(const TensorImplPtr& x, int64_t dim0, int64_t dim1);
TensorImplPtr movedim(const TensorImplPtr& x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst);
// -1 keeps a dim; new leading dims are allowed; only size-1 dims can grow (stride 0).
TensorImplPtr expand(const TensorImplPtr& x, const Shape& sizes);
TensorImplPtr narrow(const TensorImplPtr& x, int64_t dim, int64_t start, int64_t length);
TensorImplPtr select(const TensorImplPtr& x, int64_t dim, int64_t index);
// Pieces of `split_size` along dim (the last may be smaller).
std::vector<TensorImplPtr> split(const TensorImplPtr& x, int64_t split_size, int64_t dim);
// Pieces of the given sizes, which must add up to the dim's size.
std::vector<TensorImplPtr> split_with_sizes(const TensorImplPtr& x, const Shape& sizes, int64_t dim);
std::vector<TensorImplPtr> chunk(const TensorImplPtr& x, int64_t chunks, int64_t dim);
std::vector<TensorImplPtr> unbind(const TensorImplPtr& x, int64_t dim);
// The diagonal of the (dim1, dim2) planes as a view, appended as the last dim; offset > 0 above
// the main diagonal, < 0 below (PyTorch's diagonal; an offset past the edge gives length 0).
TensorImplPtr diagonal(const TensorImplPtr& x, int64_t offset, int64_t dim1, int64_t dim2);
// x itself when already contiguous, else a contiguous copy.
TensorImplPtr contiguous(const TensorImplPtr& x);
TensorImplPtr clone(const TensorImplPtr& x);
// x itself when the dtype already matches (unless copy), else a converted copy.
TensorImplPtr to(const TensorImplPtr& x, DType dtype, bool copy);

}  // namespace lucid
