// The one thread pool: pylucid's OpenMP kernels and the BLAS share the cores this process may use.
// OpenBLAS runs every call on the calling thread (its own pool would spin-wait against OpenMP's
// workers: a 2-thread MLP step measured 2x slower), and large products are split by the gemm
// kernel into blocks that the OpenMP pool runs, one single-threaded BLAS call per block.
// num_threads() is what every kernel sizes its parallel regions by.
#pragma once
#include <cstdint>

namespace lucid {

// The pool size kernels use (>= 1): set_num_threads's value, else the default below, except
// while the contention guard holds kernels to one thread (see NOTE [contention guard]).
int num_threads();

// set_num_threads's value, else the default below: what get_num_threads reports.
int configured_threads();

// NOTE [contention guard]: a parallel region ends only when every thread of its team has done
// its share. When another process keeps a core busy, the worker on that core (which spins
// between regions and so has used up its fair share of it) waits for the scheduler's next slice,
// a few milliseconds, and every region of a training step pays that: a 2-thread MLP step took
// 40-50 ms instead of 1.2 ms (1 thread: 1.8 ms). So the region drivers report how long the
// calling thread waited for the others after its own share (or, where threads meet at barriers,
// how late the last one started). A wait of more than kLateRegionNs (0.5 ms) that is also more
// than half the share's own time means a worker was not running (the shares are equal, so a
// machine to ourselves waits microseconds). Two such regions within 50 ms (one alone may be a
// hiccup: a page fault, the host pausing this virtual CPU) and kernels run on one thread for a
// while (50 ms at first). Then they try the whole pool again: each late region doubles the next hold (up to
// 6.4 s), each clean one halves it. Results do not change: every kernel's sums are fixed by the
// shape, not by the thread count.
void note_region_wait(int64_t own_ns, int64_t waited_ns);

// Holds kernels to one thread for the next `ns` nanoseconds (0 ends a hold), as the guard does.
void hold_one_thread(int64_t ns);

// How many times the guard has held kernels to one thread in this process.
int64_t contention_holds();

// A monotonic clock in nanoseconds, for timing regions.
int64_t now_ns();

// Sets the pool size for OpenMP regions (every thread that calls into pylucid) and the gemm split.
void set_num_threads(int n);

// The cores this process may use: its CPU affinity mask, capped by a cgroup CPU quota
// (cpu.max, v2, or cfs_quota_us / cfs_period_us, v1), rounded up; OMP_NUM_THREADS wins when set.
int default_num_threads();

// True when OpenBLAS keeps its own threads (the user set OPENBLAS_NUM_THREADS > 1): the gemm
// kernel then leaves products whole for it.
bool blas_owns_threads();

}  // namespace lucid
