#include "core/threads.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
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

int num_threads() {
  int n = g_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  n = default_num_threads();
  g_threads.store(n, std::memory_order_relaxed);
  return n;
}

void set_num_threads(int n) {
  n = std::max(1, n);
  g_threads.store(n, std::memory_order_relaxed);
  omp_set_num_threads(n);  // regions without an explicit num_threads clause, on this thread
}

bool blas_owns_threads() {
  static const bool owns = env_int("OPENBLAS_NUM_THREADS") > 1;
  return owns;
}

}  // namespace lucid
