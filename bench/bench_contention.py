"""A training step while other processes keep cores busy (core/threads.h, NOTE [contention guard]).

Runs the MNIST-size MLP step (784-256-256-10 + RMSNorm, batch 128, Adam) and the char_lm step at
1 thread and with the whole pool, first on an otherwise idle machine, then with ``--busy`` spinning
processes started beside it. Reported: median time per step, and the pool's time relative to one
thread in the same condition (< 1 means the pool is faster). Without the guard a parallel region
waits for a worker the scheduler has parked behind a busy process, and the pool's step was 25-40x
slower than one thread's. PyTorch runs the same steps when installed (``--libs torch``).

    python bench/bench_contention.py [--busy 1] [--repeats 5] [--libs torch]
"""
import argparse
import multiprocessing as mp
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

import pylucid  # noqa: E402


def spin(stop):
    while not stop.is_set():
        pass


def step_times(lib, case, threads, repeats):
    lib.set_num_threads(threads)
    step = case("pylucid" if lib is pylucid else "torch", lib)
    return compare.timed(step, repeats, min_block=0.2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--busy", type=int, default=1, help="spinning processes started beside the step")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--libs", default="", help="also run these (torch)")
    args = ap.parse_args()
    libs = {"pylucid": pylucid}
    if "torch" in args.libs:
        import torch

        libs["torch"] = torch
    pool = pylucid.get_num_threads()
    cases = {"MLP 784 step": compare.mlp_case([784, 256, 256, 10], 128), "char_lm step": compare.char_lm_case}
    print(f"pool: {pool} threads; busy processes: {args.busy}; cores: {len(os.sched_getaffinity(0))}")
    print(f"{'workload':<14} {'library':<8} {'condition':<10} {'1 thread':>10} {f'{pool} threads':>10} {'ratio':>7}")
    for cname, case in cases.items():
        for lname, lib in libs.items():
            for busy in (0, args.busy):
                stop = mp.Event()
                procs = [mp.Process(target=spin, args=(stop,), daemon=True) for _ in range(busy)]
                for p in procs:
                    p.start()
                time.sleep(0.2)
                try:
                    one = step_times(lib, case, 1, args.repeats)
                    full = step_times(lib, case, pool, args.repeats)
                finally:
                    stop.set()
                    for p in procs:
                        p.join()
                cond = "idle" if busy == 0 else f"{busy} busy"
                print(f"{cname:<14} {lname:<8} {cond:<10} {compare.fmt_time(one):>10} {compare.fmt_time(full):>10} "
                      f"{full / one:>6.2f}x")
    pylucid.set_num_threads(pool)


if __name__ == "__main__":
    main()
