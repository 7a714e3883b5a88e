"""Bandwidth-bound float32 kernels against PyTorch CPU and numpy, in the same run.

Times exact GELU (forward, and forward + backward), argmax over the last dim and over the flattened
tensor, and sum over the last dim, on contiguous float32 tensors of a few shapes. Reports
milliseconds per call (best of several repeats) and the ratio pylucid / reference (< 1 means
pylucid is faster). The reference is PyTorch for gelu and sum, numpy for argmax (PyTorch's argmax
is printed too). Threads: pylucid uses OpenMP's default; PyTorch is set to the same count
(OMP_NUM_THREADS, else the number of CPUs); numpy's argmax and sum are single-threaded anyway.

    python bench/bench_kernels.py [--shapes 1024x1024,64x4096] [--repeat 30] [--cases gelu,sum] [--cpu-time]

--cpu-time times with the process CPU clock (all threads) instead of the wall clock: on a busy
machine it leaves out time spent waiting for a core, but counts every thread's work, so a
parallel kernel reads as its total work rather than its latency.
"""
import argparse
import os
import time
import timeit

import numpy as np

import pylucid


TIMER = time.perf_counter


def best_ms(fn, repeat):
    fn()
    number = max(1, int(0.02 / max(timeit.timeit(fn, number=1, timer=TIMER), 1e-7)))  # ~20 ms per repeat
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=TIMER)) / number * 1e3


def cases(shape, torch):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 3).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    x = pylucid.from_numpy(a)
    xg = pylucid.from_numpy(a.copy()).requires_grad_()
    gx = pylucid.from_numpy(g)

    def lucid_gelu_fb():
        xg.grad = None
        pylucid.gelu(xg).backward(gx)

    # name -> (pylucid fn, reference name, reference fn, extra reference (name, fn) or None)
    out = {}
    if torch is not None:
        t = torch.from_numpy(a)
        tg = torch.from_numpy(a.copy()).requires_grad_()
        tgx = torch.from_numpy(g)
        F = torch.nn.functional

        def torch_gelu_fb():
            tg.grad = None
            F.gelu(tg).backward(tgx)

        out["gelu fwd"] = (lambda: pylucid.gelu(x), "torch", lambda: F.gelu(t), None)
        out["gelu fwd+bwd"] = (lucid_gelu_fb, "torch", torch_gelu_fb, None)
        out["argmax(dim=-1)"] = (lambda: x.argmax(dim=-1), "numpy", lambda: a.argmax(axis=-1),
                                 ("torch", lambda: t.argmax(dim=-1)))
        out["argmax()"] = (lambda: x.argmax(), "numpy", lambda: a.argmax(), ("torch", lambda: t.argmax()))
        out["argmin(dim=-1)"] = (lambda: x.argmin(dim=-1), "numpy", lambda: a.argmin(axis=-1),
                                 ("torch", lambda: t.argmin(dim=-1)))
        out["sum(dim=-1)"] = (lambda: x.sum(dim=-1), "torch", lambda: t.sum(dim=-1),
                              ("numpy", lambda: a.sum(axis=-1)))
    else:
        out["gelu fwd"] = (lambda: pylucid.gelu(x), None, None, None)
        out["gelu fwd+bwd"] = (lucid_gelu_fb, None, None, None)
        out["argmax(dim=-1)"] = (lambda: x.argmax(dim=-1), "numpy", lambda: a.argmax(axis=-1), None)
        out["argmax()"] = (lambda: x.argmax(), "numpy", lambda: a.argmax(), None)
        out["argmin(dim=-1)"] = (lambda: x.argmin(dim=-1), "numpy", lambda: a.argmin(axis=-1), None)
        out["sum(dim=-1)"] = (lambda: x.sum(dim=-1), "numpy", lambda: a.sum(axis=-1), None)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="1024x1024,64x4096,4096x64")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cases", default="", help="comma-separated substrings of case names to run (default: all)")
    ap.add_argument("--cpu-time", action="store_true", help="time with the process CPU clock")
    args = ap.parse_args()
    global TIMER
    if args.cpu_time:
        TIMER = time.process_time
    wanted = [c for c in args.cases.split(",") if c]
    try:
        import torch
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count())))
    except ImportError:
        torch = None
    print(f"{'shape':<10} {'case':<15} {'pylucid ms':>10} {'ref':>6} {'ref ms':>8} {'ratio':>6}   other")
    for spec in args.shapes.split(","):
        shape = tuple(int(s) for s in spec.split("x"))
        for name, (mine, ref_name, ref, extra) in cases(shape, torch).items():
            if wanted and not any(w in name for w in wanted):
                continue
            t1 = best_ms(mine, args.repeat)
            if ref is None:
                print(f"{spec:<10} {name:<15} {t1:>10.4f} {'-':>6} {'-':>8} {'-':>6}")
                continue
            t2 = best_ms(ref, args.repeat)
            line = f"{spec:<10} {name:<15} {t1:>10.4f} {ref_name:>6} {t2:>8.4f} {t1 / t2:>6.2f}"
            if extra:
                t3 = best_ms(extra[1], args.repeat)
                line += f"   {extra[0]} {t3:.4f} ms (ratio {t1 / t3:.2f})"
            print(line, flush=True)


if __name__ == "__main__":
    main()
