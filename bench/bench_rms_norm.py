"""rms_norm throughput against this machine's copy bandwidth (and PyTorch when installed).

RMSNorm is memory-bound, so the kernels are judged as a fraction of what a plain copy moves on
the same machine in the same run. Effective bandwidth counts the bytes a fused kernel must move:
forward reads x and writes y (2 x the input's bytes); forward + backward also reads x and
grad_out and writes dx (5 x). Parameter-sized traffic (gamma, rstd) is ignored.

The copy reference is measured here too: one numpy copy (one thread) and a copy split over two
threads (numpy releases the GIL), each moving 2 x the array's bytes (read + write).

    OMP_NUM_THREADS=2 python bench/bench_rms_norm.py [--repeat 7] [--threads 2]

Goal: forward >= 75% and forward + backward >= 60% of the copy bandwidth.

Every call allocates its outputs, so the time includes the first touch of fresh memory (page
faults). The "alloc" line shows that share on its own: pylucid.empty(shape).fill_(0), i.e. one
fresh output buffer written once, reported in the same GB/s units as a 1-byte-per-byte pass.
"""
import argparse
import os
import sys
import threading
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--repeat", type=int, default=7, help="timed repeats per case (the median is kept)")
ap.add_argument("--threads", type=int, default=2)
args = ap.parse_args()
# OpenMP reads the thread count when the runtime starts: set it before the extension loads.
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import numpy as np
import pylucid
from pylucid.nn import functional as F

try:
    import torch

    torch.set_num_threads(args.threads)
except ImportError:
    torch = None

SHAPES = [(4096, 4096), (32768, 1024), (64, 512)]
EPS = 1e-6


def timed(fn, repeat, min_time=0.05):
    """Median seconds per call; small cases run in loops of at least `min_time`."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    inner = max(1, int(min_time / max(one, 1e-9)))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return float(np.median(samples))


def copy_bandwidth(nbytes, threads, repeat):
    n = nbytes // 4
    src = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    dst = np.empty_like(src)
    one = timed(lambda: np.copyto(dst, src), repeat)

    bounds = [n * t // threads for t in range(threads + 1)]

    def part(t):
        np.copyto(dst[bounds[t]:bounds[t + 1]], src[bounds[t]:bounds[t + 1]])

    def multi():
        ts = [threading.Thread(target=part, args=(t,)) for t in range(1, threads)]
        for th in ts:
            th.start()
        part(0)
        for th in ts:
            th.join()

    many = timed(multi, repeat)
    return 2 * nbytes / one / 1e9, 2 * nbytes / many / 1e9


def bench_pylucid(shape, repeat):
    rng = np.random.default_rng(0)
    x = pylucid.from_numpy(rng.standard_normal(shape, dtype=np.float32))
    w = pylucid.from_numpy(rng.standard_normal(shape[-1:], dtype=np.float32))
    g = pylucid.from_numpy(rng.standard_normal(shape, dtype=np.float32))

    def fwd():
        with pylucid.no_grad():
            F.rms_norm(x, shape[-1], w, EPS)

    xg = pylucid.from_numpy(np.asarray(x).copy()).requires_grad_()
    wg = pylucid.from_numpy(np.asarray(w).copy()).requires_grad_()

    def fwd_bwd():
        y = F.rms_norm(xg, shape[-1], wg, EPS)
        pylucid.autograd.grad(y, (xg, wg), g)  # returns the grads: no copy into .grad

    return timed(fwd, repeat), timed(fwd_bwd, repeat)


def bench_torch(shape, repeat):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen)
    w = torch.randn(shape[-1:], generator=gen)
    g = torch.randn(shape, generator=gen)

    def fwd():
        with torch.no_grad():
            torch.nn.functional.rms_norm(x, shape[-1:], w, EPS)

    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()

    def fwd_bwd():
        y = torch.nn.functional.rms_norm(xg, shape[-1:], wg, EPS)
        torch.autograd.grad(y, (xg, wg), g)

    return timed(fwd, repeat), timed(fwd_bwd, repeat)


def main():
    big = max(a * b for a, b in SHAPES) * 4
    c1, c2 = copy_bandwidth(big, args.threads, args.repeat)
    ref = max(c1, c2)
    print(f"threads: {args.threads} (OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']})"
          + (f", torch {torch.__version__}" if torch else ", torch not installed"))
    print(f"copy bandwidth ({big / 2**20:.0f} MiB float32): numpy 1 thread {c1:.1f} GB/s, "
          f"{args.threads} threads {c2:.1f} GB/s; reference {ref:.1f} GB/s")
    for shape in SHAPES[:1]:
        nbytes = shape[0] * shape[1] * 4
        ta = timed(lambda s=shape: pylucid.empty(*s).fill_(0.0), args.repeat)
        print(f"alloc: fresh {shape} float32 buffer + one write: {ta * 1e3:.1f} ms ({nbytes / ta / 1e9:.1f} GB/s)")
    head = f"{'shape':<14} {'pass':<8} {'pylucid ms':>10} {'GB/s':>7} {'% copy':>7}"
    if torch:
        head += f" {'torch ms':>9} {'GB/s':>7} {'% copy':>7} {'torch/pylucid':>13}"
    print(head)
    for shape in SHAPES:
        nbytes = shape[0] * shape[1] * 4
        mine = bench_pylucid(shape, args.repeat)
        theirs = bench_torch(shape, args.repeat) if torch else (None, None)
        for name, factor, t_mine, t_theirs in (("fwd", 2, mine[0], theirs[0]), ("fwd+bwd", 5, mine[1], theirs[1])):
            gbs = factor * nbytes / t_mine / 1e9
            line = (f"{shape!s:<14} {name:<8} {t_mine * 1e3:>10.3f} {gbs:>7.1f} {100 * gbs / ref:>6.0f}%")
            if t_theirs is not None:
                tg = factor * nbytes / t_theirs / 1e9
                line += f" {t_theirs * 1e3:>9.3f} {tg:>7.1f} {100 * tg / ref:>6.0f}% {t_theirs / t_mine:>13.2f}"
            print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
