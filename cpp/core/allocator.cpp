#include "core/allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace lucid::alloc {

namespace {

constexpr size_t kHugeMin = size_t(4) << 20;  // from here: 2 MiB aligned, huge pages
constexpr size_t kHuge = size_t(2) << 20;

size_t size_class(size_t n) {
  if (n < kCachedMin) return (std::max<size_t>(n, 1) + 63) / 64 * 64;
  const int top = 63 - __builtin_clzll(uint64_t(n));
  size_t step = size_t(1) << (top - 2);
  if (n >= kHugeMin) step = std::max(step, kHuge);
  return (n + step - 1) / step * step;
}

void* os_alloc(size_t cap) {
  const size_t align = cap >= kHugeMin ? kHuge : 64;
  void* p = std::aligned_alloc(align, cap);
  LUCID_CHECK(p, "allocate: out of memory for ", cap, " bytes");
#ifdef MADV_HUGEPAGE
  if (align == kHuge) madvise(p, cap, MADV_HUGEPAGE);
#endif
  return p;
}

uint64_t default_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t ram = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : uint64_t(8) << 30;
  return std::min<uint64_t>(ram / 4, uint64_t(4) << 30);
}

struct Cache {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free;  // size class -> cached blocks
  uint64_t cached = 0, limit = default_limit(), os_allocs = 0, os_frees = 0, hits = 0;
  std::atomic<uint64_t> allocated{0}, peak{0}, allocs{0};

  // Frees cached blocks, largest classes first, until at most `keep` bytes stay. Holds mu.
  void trim(uint64_t keep) {
    for (auto it = free.end(); cached > keep && it != free.begin();) {
      --it;
      auto& v = it->second;
      while (!v.empty() && cached > keep) {
        std::free(v.back());
        v.pop_back();
        cached -= it->first;
        ++os_frees;
      }
    }
  }
};

// Never destroyed: tensors freed during interpreter teardown still find it.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

void note_alloc(Cache& c, size_t cap) {
  c.allocs.fetch_add(1, std::memory_order_relaxed);
  const uint64_t now = c.allocated.fetch_add(cap, std::memory_order_relaxed) + cap;
  uint64_t p = c.peak.load(std::memory_order_relaxed);
  while (now > p && !c.peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

void* allocate(size_t nbytes, size_t* capacity) {
  Cache& c = cache();
  const size_t cap = size_class(nbytes);
  *capacity = cap;
  if (cap < kCachedMin) {
    void* p = std::aligned_alloc(64, cap);
    LUCID_CHECK(p, "allocate: out of memory for ", nbytes, " bytes");
    note_alloc(c, cap);
    return p;
  }
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free.find(cap);
    if (it != c.free.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      c.cached -= cap;
      ++c.hits;
    } else {
      ++c.os_allocs;
    }
  }
  if (!p) {
    try {
      p = os_alloc(cap);
    } catch (const LucidError&) {  // out of memory: give the cache back and try once more
      empty_cache();
      p = os_alloc(cap);
    }
  }
  note_alloc(c, cap);
  return p;
}

void release(void* p, size_t cap) {
  if (!p) return;
  Cache& c = cache();
  c.allocated.fetch_sub(cap, std::memory_order_relaxed);
  if (cap < kCachedMin) return std::free(p);
  std::lock_guard<std::mutex> lock(c.mu);
  if (cap > c.limit) {
    std::free(p);
    ++c.os_frees;
    return;
  }
  c.trim(c.limit - cap);
  c.free[cap].push_back(p);
  c.cached += cap;
}

Stats stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return {c.allocated.load(), c.peak.load(), c.cached, c.limit, c.allocs.load(), c.hits, c.os_allocs, c.os_frees};
}

void reset_peak_stats() {
  Cache& c = cache();
  c.peak.store(c.allocated.load());
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.trim(0);
  c.free.clear();
}

void set_cache_limit(uint64_t bytes) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.limit = bytes;
  c.trim(bytes);
}

}  // namespace lucid::alloc
