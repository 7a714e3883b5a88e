// Process-wide runtime settings: the thread pool's size (core/threads.h) and the caching
// allocator's statistics and cache (core/allocator.h), with PyTorch's names where it has them.
#include "bindings/common.h"
#include "core/allocator.h"
#include "core/threads.h"
#include "kernels/cpu/cpu_features.h"

namespace lucid::bindings {

LUCID_BINDING(runtime, 40) {
  // The pool starts at the cores this process may use (OMP_NUM_THREADS wins), not OpenMP's
  // count of online CPUs, which ignores a cgroup quota.
  set_num_threads(default_num_threads());
  m.def(
      "set_num_threads",
      [](py::handle n) {
        const int64_t v = int_arg(n, "set_num_threads", "the number of threads");
        LUCID_CHECK(v > 0, "set_num_threads: expected a positive number of threads, got ", v);
        set_num_threads(int(std::min<int64_t>(v, 1024)));
      },
      py::arg("int"),
      "Sets the number of threads pylucid's kernels and its matrix products use (PyTorch's "
      "torch.set_num_threads). The default is the number of cores this process may use.");
  m.def("get_num_threads", &configured_threads, "The number of threads pylucid's kernels and matrix products use.");
  m.def(
      "_hold_one_thread", [](double seconds) { hold_one_thread(int64_t(seconds * 1e9)); }, py::arg("seconds"),
      "Runs kernels on one thread for the next `seconds`, as the contention guard does when another "
      "process keeps a core busy (core/threads.h); 0 ends a hold.");
  m.def("_contention_holds", &contention_holds,
        "How many times the contention guard has held kernels to one thread in this process.");
  m.def(
      "_cpu_capability",
      []() {
        switch (kernels::cpu_level()) {
          case kernels::CpuLevel::V4: return "AVX512";
          case kernels::CpuLevel::V3: return "AVX2";
          default: return "DEFAULT";
        }
      },
      "The widest instruction set pylucid's kernels use on this CPU: AVX512, AVX2 or DEFAULT.");
  m.def(
      "memory_stats",
      []() {
        const alloc::Stats s = alloc::stats();
        py::dict d;
        d["allocated_bytes"] = s.allocated_bytes;
        d["peak_allocated_bytes"] = s.peak_allocated_bytes;
        d["cached_bytes"] = s.cached_bytes;
        d["cache_limit_bytes"] = s.cache_limit_bytes;
        d["num_allocs"] = s.num_allocs;
        d["num_cache_hits"] = s.num_cache_hits;
        d["num_os_allocs"] = s.num_os_allocs;
        d["num_os_frees"] = s.num_os_frees;
        return d;
      },
      "The caching allocator's counters: bytes in live tensors and their peak, bytes cached for "
      "reuse and the cache's limit, requests served, cache hits, and blocks taken from and given "
      "back to the OS.");
  m.def("empty_cache", &alloc::empty_cache,
        "Gives every cached buffer back to the OS (live tensors are untouched).");
  m.def("reset_peak_memory_stats", &alloc::reset_peak_stats,
        "Sets peak_allocated_bytes of memory_stats() to the bytes allocated now.");
  m.def(
      "set_cache_limit",
      [](py::handle n) {
        const int64_t v = int_arg(n, "set_cache_limit", "the limit");
        LUCID_CHECK(v >= 0, "set_cache_limit: expected a limit of 0 bytes or more, got ", v);
        alloc::set_cache_limit(uint64_t(v));
      },
      py::arg("nbytes"),
      "Keeps at most nbytes of freed buffers cached for reuse (0 caches nothing); what is above "
      "the limit is given back to the OS at once.");
}

}  // namespace lucid::bindings
