// Storage: one buffer shared by a tensor and all its views. Memory the core allocates comes
// from the caching allocator (core/allocator.h); foreign memory (numpy, DLPack) is held through
// an owner whose deleter releases it. `version` is the in-place version counter shared by every view,
// checked by backward nodes that saved a tensor (PyTorch's scheme).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/allocator.h"
#include "core/error.h"

namespace lucid {

struct Storage {
  std::shared_ptr<void> data;
  size_t nbytes = 0;
  uint64_t version = 0;
  // Bumped when an in-place op through a view rewrites the base's autograd history: views of
  // this storage made before then get a grad_fn reading from the new history when next used
  // (TensorImpl::view_gen, gradient_edge).
  uint64_t history_gen = 0;

  // Buffers come from the caching allocator (core/allocator.h): 64-byte aligned, large ones
  // reused from its cache; the deleter hands them back to it.
  static std::shared_ptr<Storage> allocate(size_t nbytes) {
    auto s = std::make_shared<Storage>();
    size_t cap = 0;
    void* p = alloc::allocate(nbytes, &cap);
    s->data = std::shared_ptr<void>(p, [cap](void* q) { alloc::release(q, cap); });
    s->nbytes = nbytes;
    return s;
  }
};
using StoragePtr = std::shared_ptr<Storage>;

}  // namespace lucid
