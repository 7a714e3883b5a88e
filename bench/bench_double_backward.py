"""Double backward of rms_norm against PyTorch's, in the same run.

One step is what a gradient penalty or a Hessian-vector product costs:

    y = rms_norm(x, (N,), w)                                  forward
    gx, gw = autograd.grad(y, (x, w), g, create_graph=True)   first backward, recorded
    autograd.grad((gx, gw), (x, w, g), (u, v))                backward of the backward

x, g, u are (rows, N) float32, w and v are (N,). PyTorch runs the same three calls with
torch.nn.functional.rms_norm. The table gives the median time of the whole step and of the two
halves (the forward + recorded first backward, then the second backward), and torch / pylucid.

    OMP_NUM_THREADS=2 python bench/bench_double_backward.py [--repeat 7] [--threads 2]
    python bench/bench_double_backward.py --shape 4096 1024

Goal: the whole step at (4096, 1024) at least 3x faster than PyTorch's.
"""
import argparse
import os
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--repeat", type=int, default=7, help="timed repeats per case (the median is kept)")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--shape", type=int, nargs=2, action="append", help="(rows, N); repeatable")
ap.add_argument("--partial", type=float, default=0.0, help="partial_ratio (pRMSNorm when > 0)")
args = ap.parse_args()
# OpenMP reads the thread count when the runtime starts: set it before the extension loads.
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import numpy as np  # noqa: E402

import pylucid  # noqa: E402

try:
    import torch

    torch.set_num_threads(args.threads)
except ImportError:
    torch = None

SHAPES = [tuple(s) for s in args.shape] if args.shape else [(4096, 1024), (512, 4096), (64, 512)]
EPS = 1e-6


def timed(fn, repeat, min_time=0.05):
    """Median seconds per call of each returned phase; small cases run in loops of >= `min_time`."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    inner = max(1, int(min_time / max(one, 1e-9)))
    samples = []
    for _ in range(repeat):
        acc = None
        for _ in range(inner):
            phases = fn()
            acc = phases if acc is None else [a + b for a, b in zip(acc, phases)]
        samples.append([a / inner for a in acc])
    return [float(np.median(col)) for col in zip(*samples)]


def arrays(shape):
    rng = np.random.default_rng(0)
    n = shape[-1]
    return [rng.standard_normal(s, dtype=np.float32) for s in (shape, (n,), shape, shape, (n,))]


def step(lib, F_rms, shape):
    """The three calls, as a function returning [first half seconds, second half seconds]."""
    xa, wa, ga, ua, va = arrays(shape)
    as_t = (lambda a, rg: pylucid.from_numpy(a.copy()).requires_grad_(rg)) if lib is pylucid else \
        (lambda a, rg: torch.from_numpy(a.copy()).requires_grad_(rg))
    x, w, g = as_t(xa, True), as_t(wa, True), as_t(ga, True)
    u, v = as_t(ua, False), as_t(va, False)

    def run():
        t0 = time.perf_counter()
        y = F_rms(x, w)
        gx, gw = lib.autograd.grad(y, (x, w), g, create_graph=True)
        t1 = time.perf_counter()
        lib.autograd.grad((gx, gw), (x, w, g), (u, v))
        t2 = time.perf_counter()
        return [t1 - t0, t2 - t1]
    return run


def main():
    print(f"threads: {args.threads} (OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']})"
          + (f", torch {torch.__version__}" if torch else ", torch not installed")
          + (f", partial_ratio {args.partial}" if args.partial else ""))
    head = f"{'shape':<14} {'pylucid ms':>10} {'(fwd+bwd1':>9} {'bwd2)':>7}"
    if torch:
        head += f" {'torch ms':>9} {'(fwd+bwd1':>9} {'bwd2)':>7} {'torch/pylucid':>13}"
    print(head)
    for shape in SHAPES:
        n = shape[-1]
        mine = timed(step(pylucid, lambda x, w: pylucid.nn.functional.rms_norm(x, (n,), w, EPS, args.partial),
                          shape), args.repeat)
        line = f"{shape!s:<14} {sum(mine) * 1e3:>10.3f} {mine[0] * 1e3:>9.3f} {mine[1] * 1e3:>7.3f}"
        if torch:
            if args.partial:
                k = max(1, int(np.ceil(n * args.partial)))

                def t_rms(x, w, k=k):
                    return x * torch.rsqrt((x[..., :k] ** 2).mean(-1, keepdim=True) + EPS) * w
            else:
                def t_rms(x, w, n=n):
                    return torch.nn.functional.rms_norm(x, (n,), w, EPS)
            theirs = timed(step(torch, t_rms, shape), args.repeat)
            line += (f" {sum(theirs) * 1e3:>9.3f} {theirs[0] * 1e3:>9.3f} {theirs[1] * 1e3:>7.3f}"
                     f" {sum(theirs) / sum(mine):>13.2f}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
