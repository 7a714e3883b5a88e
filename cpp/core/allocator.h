// Caching allocator for tensor buffers. Buffers of kCachedMin bytes and more are rounded up to a
// size class (a quarter of their power of two; 2 MiB steps from 4 MiB, where they are also 2 MiB
// aligned and asked to use huge pages) and, when freed, kept in a per-class free list for the
// next request of that class: a training loop in steady state takes its buffers from the cache,
// already paged in, instead of from the OS (a fresh 64 MiB buffer costs ~16k page faults, more
// than a norm kernel's pass over it). Smaller buffers go to malloc, which keeps its own arenas.
// The cache is returned to the OS by empty_cache(), and a freed block that would take the cache
// above its limit goes back at once. Thread-safe; blocks may be freed from any thread.
#pragma once
#include <cstddef>
#include <cstdint>

namespace lucid::alloc {

constexpr size_t kCachedMin = size_t(128) << 10;

// A block of at least nbytes (64-byte aligned; 2 MiB aligned from 4 MiB). *capacity receives
// the block's size, which release() must be given back. Throws LucidError when out of memory.
void* allocate(size_t nbytes, size_t* capacity);
void release(void* p, size_t capacity);

struct Stats {
  uint64_t allocated_bytes;       // in live buffers (their capacity), cached classes and malloc'd alike
  uint64_t peak_allocated_bytes;  // the most allocated_bytes has been since the last reset
  uint64_t cached_bytes;          // freed blocks kept for reuse
  uint64_t cache_limit_bytes;
  uint64_t num_allocs;            // requests served
  uint64_t num_cache_hits;        // of those, served from the cache
  uint64_t num_os_allocs;         // blocks of cached classes taken from the OS
  uint64_t num_os_frees;          // blocks of cached classes given back
};
Stats stats();
void reset_peak_stats();
// Gives every cached block back to the OS.
void empty_cache();
// Cached bytes are kept at most at `bytes` (0: cache nothing); excess is freed at once.
void set_cache_limit(uint64_t bytes);

}  // namespace lucid::alloc
