// Storage: one buffer shared by a tensor and all its views. Memory is 64-byte aligned when
// the core allocates it; foreign memory (numpy, DLPack) is held through an owner whose
// deleter releases it. `version` is the in-place version counter shared by every view,
// checked by backward nodes that saved a tensor (PyTorch's scheme).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/error.h"

namespace lucid {

struct Storage {
  std::shared_ptr<void> data;
  size_t nbytes = 0;
  uint64_t version = 0;

  static std::shared_ptr<Storage> allocate(size_t nbytes) {
    auto s = std::make_shared<Storage>();
    size_t n = (nbytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n ? n : 64);
    LUCID_CHECK(p, "allocate: out of memory for ", nbytes, " bytes");
    s->data = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    s->nbytes = nbytes;
    return s;
  }
};
using StoragePtr = std::shared_ptr<Storage>;

}  // namespace lucid
