#include "core/threads.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

namespace lucid {

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return 0;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);  // OMP_NUM_THREADS may be a list ("4,2"): its first entry
  return end != v && n > 0 ? int(std::min<long>(n, 1024)) : 0;
}

// Cores allowed by a cgroup CPU quota, or 0 when there is none.
int cgroup_cores() {
  double quota = 0, period = 0;
  if (std::ifstream f("/sys/fs/cgroup/cpu.max"); f) {
    std::string q;
    if (f >> q >> period && q != "max") quota = std::atof(q.c_str());
  } else {
    std::ifstream fq("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), fp("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
    if (fq && fp) fq >> quota, fp >> period;
  }
  return quota > 0 && period > 0 ? std::max(1, int(std::ceil(quota / period))) : 0;
}

std::atomic<int> g_threads{0};

// The contention guard's state: until when kernels run on one thread (0: not held), and the next
// hold's length.
constexpr int64_t kLateRegionNs = 500'000, kLateWindowNs = 50'000'000;
constexpr int64_t kFirstHoldNs = 50'000'000, kLongestHoldNs = 6'400'000'000;
std::atomic<int64_t> g_hold_until{0};
std::atomic<int64_t> g_next_hold{kFirstHoldNs};
std::atomic<int64_t> g_holds{0};                         // holds so far, for benchmarks and tests
std::atomic<int64_t> g_last_late{-(int64_t(1) << 62)};  // when the last late region ended

}  // namespace

int default_num_threads() {
  if (int n = env_int("OMP_NUM_THREADS")) return n;
  int n = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = omp_get_num_procs();
  if (int q = cgroup_cores()) n = std::min(n, q);
  return std::max(1, n);
}

int configured_threads() {
  int n = g_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  n = default_num_threads();
  g_threads.store(n, std::memory_order_relaxed);
  return n;
}

int num_threads() {
  const int n = configured_threads();
  if (n > 1 && g_hold_until.load(std::memory_order_relaxed) != 0) {
    if (now_ns() < g_hold_until.load(std::memory_order_relaxed)) return 1;
    g_hold_until.store(0, std::memory_order_relaxed);  // try the whole pool again
  }
  return n;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t contention_holds() { return g_holds.load(std::memory_order_relaxed); }

void hold_one_thread(int64_t ns) { g_hold_until.store(ns > 0 ? now_ns() + ns : 0, std::memory_order_relaxed); }

void note_region_wait(int64_t own_ns, int64_t waited_ns) {
  const int64_t hold = g_next_hold.load(std::memory_order_relaxed);
  if (waited_ns > kLateRegionNs && 2 * waited_ns > own_ns) {
    // One late region alone may be a hiccup (a page fault, the host pausing this virtual CPU):
    // hold only when another came shortly before.
    const int64_t now = now_ns(), prev = g_last_late.exchange(now, std::memory_order_relaxed);
    if (now - prev > kLateWindowNs) return;
    g_hold_until.store(now + hold, std::memory_order_relaxed);
    g_holds.fetch_add(1, std::memory_order_relaxed);
    g_next_hold.store(std::min(kLongestHoldNs, 2 * hold), std::memory_order_relaxed);
  } else if (hold > kFirstHoldNs) {  // a clean region: the next hold is shorter
    g_next_hold.store(std::max(kFirstHoldNs, hold / 2), std::memory_order_relaxed);
  }
}

void set_num_threads(int n) {
  n = std::max(1, n);
  g_threads.store(n, std::memory_order_relaxed);
  g_hold_until.store(0, std::memory_order_relaxed);
  omp_set_num_threads(n);  // regions without an explicit num_threads clause, on this thread
}

bool blas_owns_threads() {
  static const bool owns = env_int("OPENBLAS_NUM_THREADS") > 1;
  return owns;
}

}  // namespace lucid
