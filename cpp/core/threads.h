// The one thread pool: pylucid's OpenMP kernels and the BLAS share the cores this process may use.
// OpenBLAS runs every call on the calling thread (its own pool would spin-wait against OpenMP's
// workers: a 2-thread MLP step measured 2x slower), and large products are split by the gemm
// kernel into blocks that the OpenMP pool runs, one single-threaded BLAS call per block.
// num_threads() is what every kernel sizes its parallel regions by.
#pragma once

namespace lucid {

// The pool size kernels use (>= 1): set_num_threads's value, else the default below.
int num_threads();

// Sets the pool size for OpenMP regions (every thread that calls into pylucid) and the gemm split.
void set_num_threads(int n);

// The cores this process may use: its CPU affinity mask, capped by a cgroup CPU quota
// (cpu.max, v2, or cfs_quota_us / cfs_period_us, v1), rounded up; OMP_NUM_THREADS wins when set.
int default_num_threads();

// True when OpenBLAS keeps its own threads (the user set OPENBLAS_NUM_THREADS > 1): the gemm
// kernel then leaves products whole for it.
bool blas_owns_threads();

}  // namespace lucid
