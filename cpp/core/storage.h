// Storage: one buffer shared by a tensor and all its views. Memory is 64-byte aligned when
// the core allocates it; foreign memory (numpy, DLPack) is held through an owner whose
// deleter releases it. `version` is the in-place version counter shared by every view,
// checked by backward nodes that saved a tensor (PyTorch's scheme).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include <sys/mman.h>

#include "core/error.h"

namespace lucid {

struct Storage {
  std::shared_ptr<void> data;
  size_t nbytes = 0;
  uint64_t version = 0;

  static std::shared_ptr<Storage> allocate(size_t nbytes) {
    auto s = std::make_shared<Storage>();
    // NOTE: big buffers are 2 MiB aligned and asked to use huge pages, as numpy does: the first
    // write of a fresh 64 MiB buffer otherwise costs more page faults than a norm kernel's pass.
    const size_t align = nbytes >= (size_t(4) << 20) ? (size_t(2) << 20) : 64;
    size_t n = (nbytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, n ? n : align);
    LUCID_CHECK(p, "allocate: out of memory for ", nbytes, " bytes");
#ifdef MADV_HUGEPAGE
    if (align > 64) madvise(p, n, MADV_HUGEPAGE);
#endif
    s->data = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    s->nbytes = nbytes;
    return s;
  }
};
using StoragePtr = std::shared_ptr<Storage>;

}  // namespace lucid
