// TensorImpl: a strided view (shape, strides in elements, offset) of a shared Storage, plus the
// autograd fields PyTorch keeps in AutogradMeta: requires_grad, grad, grad_fn.
// Invariants: strides.size() == shape.size(); every index reachable through shape/strides lies
// inside storage; a tensor with a grad_fn is not a leaf.
#pragma once
#include <atomic>
#include <functional>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace lucid {

struct Node;
struct TensorImpl;
using TensorImplPtr = std::shared_ptr<TensorImpl>;

struct TensorImpl {
  // Live TensorImpl objects in the process: lets tests prove graphs and saved tensors are freed.
  static inline std::atomic<int64_t> live{0};
  TensorImpl() { live.fetch_add(1, std::memory_order_relaxed); }
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
  ~TensorImpl() { live.fetch_sub(1, std::memory_order_relaxed); }

  StoragePtr storage;
  Shape shape;
  Shape strides;
  int64_t offset = 0;
  DType dtype = kDefaultFloat;

  // For the output of a view op (view, slicing, transpose, expand, ...): the tensor it aliases,
  // always the first base (views of views point past the middle one). An in-place op on the view
  // rewrites the base's autograd history too (see rebase_view_base in ops/view.h). Weak: a view
  // must not keep its base's graph alive, and a dead base has no history anyone could use.
  std::weak_ptr<TensorImpl> view_base;
  uint64_t view_gen = 0;  // storage->history_gen when this view's grad_fn was set

  bool requires_grad = false;
  bool retains_grad = false;
  TensorImplPtr grad;
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;  // which output of grad_fn this tensor is (split pieces: their index)
  // A leaf's AccumulateGrad while some graph holds it (one per leaf, as PyTorch's grad_accumulator).
  std::weak_ptr<Node> grad_accumulator;
  // Tensor.register_hook on a leaf: each maps the leaf's gradient to a replacement (or nullptr to
  // keep it) before it is accumulated or captured. Keyed by handle id.
  std::vector<std::pair<uint64_t, std::function<TensorImplPtr(const TensorImplPtr&)>>> hooks;

  int64_t numel() const { return numel_of(shape); }
  int64_t ndim() const { return int64_t(shape.size()); }
  bool is_leaf() const { return !grad_fn; }
  bool is_contiguous() const;
  void* raw() const { return static_cast<char*>(storage->data.get()) + offset * int64_t(itemsize(dtype)); }
  template <class T> T* data() const { return static_cast<T*>(raw()); }
  uint64_t version() const { return storage->version; }
  void bump_version() { ++storage->version; }
};

// A new contiguous, uninitialised tensor.
TensorImplPtr empty(const Shape& shape, DType dtype);
// A fresh tensor with the given dense (non-overlapping) strides.
TensorImplPtr empty_strided_dense(const Shape& shape, const Shape& strides, DType dtype);

// NOTE [elementwise output layout]: PyTorch lays out an elementwise op's new output as its
// inputs are laid out (TensorIterator), so `x.t() * 2` is transposed in memory, not row-major.
// That layout decides the order a later random op (dropout) draws in, and what .stride(),
// .is_contiguous() and .view() see. The rule: contiguous when every input is; an input's own
// strides when all inputs have the output's shape and the same dense strides; else the dims
// sorted as the inputs' strides order them (the first input that orders a pair decides; a
// broadcast dim orders nothing), laid out densely in that order. Python-facing elementwise ops
// follow it inside a KeepLayout scope (set by the bindings); ops called from C++ (backward
// formulas, composite kernels that read raw buffers) keep getting row-major outputs.
struct KeepLayout {
  // initial-exec: read with one fs-relative load on the per-op path (no __tls_get_addr call)
  static inline thread_local bool on __attribute__((tls_model("initial-exec"))) = false;
  bool prev;
  KeepLayout() : prev(on) { on = true; }
  ~KeepLayout() { on = prev; }
  KeepLayout(const KeepLayout&) = delete;
  KeepLayout& operator=(const KeepLayout&) = delete;
};
// Whether x and out, of one shape, cover their elements in the same order as one dense block each,
// so an elementwise loop may run over both as flat arrays.
inline bool same_dense_layout(const TensorImpl& x, const TensorImpl& out) {
  if (x.is_contiguous() && out.is_contiguous()) return true;
  return x.strides == out.strides && is_dense_permutation(out.shape, out.strides);
}
// The output of an elementwise op over `inputs` (broadcast to `shape`): see the note above.
// Row-major outside a KeepLayout scope and when every input is contiguous (the per-op fast path,
// inline); empty_with_layout works out the rest.
TensorImplPtr empty_with_layout(const Shape& shape, DType dtype, std::initializer_list<const TensorImpl*> inputs);
inline TensorImplPtr empty_elementwise(const Shape& shape, DType dtype,
                                       std::initializer_list<const TensorImpl*> inputs) {
  if (KeepLayout::on && shape.size() >= 2)
    for (const TensorImpl* t : inputs)
      if (!t->is_contiguous()) return empty_with_layout(shape, dtype, inputs);
  return empty(shape, dtype);
}
// A view sharing `base`'s storage (no autograd; the op that calls it records its node).
TensorImplPtr make_view(const TensorImplPtr& base, Shape shape, Shape strides, int64_t offset);
// `t` itself when contiguous, else a contiguous copy (no autograd).
TensorImplPtr contiguous_raw(const TensorImplPtr& t);
// A contiguous copy converted to `dtype` (no autograd); `t` itself when nothing changes.
TensorImplPtr cast_raw(const TensorImplPtr& t, DType dtype);
// Copy src (broadcast to dst's shape, any dtype) into dst's elements (no autograd).
void copy_into(const TensorImplPtr& dst, const TensorImplPtr& src);
// A 0-d tensor holding `v` converted to `dtype`.
TensorImplPtr scalar_tensor(double v, DType dtype);
// Read element 0 of a one-element tensor as double.
double item_as_double(const TensorImplPtr& t, const char* op);

}  // namespace lucid
