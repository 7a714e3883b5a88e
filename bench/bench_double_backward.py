"""Double backward of the fused norms, softmax and cross_entropy against PyTorch's, in the same run.

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

--ops adds the other fused double-backward nodes, each timed the same way (upstream gradients
for every first-order output):
    group_rms_norm  (rows, N) seen as (B, C, S) = (rows, 16, N / 16), 4 groups of 4 channels, with
                    gamma; torch has no group RMSNorm: its side is the composite written with torch ops
    layer_norm      over N, with weight and bias
    softmax, log_softmax  over the last dim
    cross_entropy   (rows, N) logits, class-index target, label_smoothing 0.1, reduction 'mean'

    python bench/bench_double_backward.py --ops rms_norm layer_norm softmax --shape 4096 1024
"""
import argparse
import os
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--repeat", type=int, default=7, help="timed repeats per case (the median is kept)")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--shape", type=int, nargs=2, action="append", help="(rows, N); repeatable")
ap.add_argument("--partial", type=float, default=0.0, help="partial_ratio (pRMSNorm when > 0)")
OPS = ["rms_norm", "group_rms_norm", "layer_norm", "softmax", "log_softmax", "cross_entropy"]
ap.add_argument("--ops", nargs="+", choices=OPS, default=["rms_norm"], help="which double backwards to time")
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


def make_case(lib, op, shape):
    """(fn, leaf arrays, upstream arrays (one per first-order output), grad_out shape) of `op`."""
    rng = np.random.default_rng(0)
    rows, n = shape
    F = lib.nn.functional
    f32 = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    if op == "rms_norm":
        if lib is pylucid:
            fn = lambda x, w: F.rms_norm(x, (n,), w, EPS, args.partial)  # noqa: E731
        elif args.partial:
            k = max(1, int(np.ceil(n * args.partial)))
            fn = lambda x, w: x * torch.rsqrt((x[..., :k] ** 2).mean(-1, keepdim=True) + EPS) * w  # noqa: E731
        else:
            fn = lambda x, w: torch.nn.functional.rms_norm(x, (n,), w, EPS)  # noqa: E731
        return fn, [f32(rows, n), f32(n)], [f32(rows, n), f32(n)], (rows, n)
    if op == "group_rms_norm":
        C, S = 16, n // 16
        groups = [c // 4 for c in range(C)]
        if lib is pylucid:
            ids = pylucid.tensor(groups)
            fn = lambda x, w: F.group_rms_norm(x, ids, w, EPS)  # noqa: E731
        else:
            M = torch.zeros(C, 4)
            M[torch.arange(C), torch.tensor(groups)] = 1

            def fn(x, w):
                ms = ((x * x).sum(2) @ M) / (M.sum(0) * S)
                return x * (torch.rsqrt(ms + EPS) @ M.t()).unsqueeze(2) * (M @ w).reshape(1, C, 1)
        return fn, [f32(rows, C, S), f32(4)], [f32(rows, C, S), f32(4)], (rows, C, S)
    if op == "layer_norm":
        fn = lambda x, w, b: F.layer_norm(x, (n,), w, b, 1e-5)  # noqa: E731
        return fn, [f32(rows, n), f32(n), f32(n)], [f32(rows, n), f32(n), f32(n)], (rows, n)
    if op in ("softmax", "log_softmax"):
        fn = (lambda x: F.softmax(x, -1)) if op == "softmax" else (lambda x: F.log_softmax(x, -1))
        return fn, [f32(rows, n)], [f32(rows, n)], (rows, n)
    target = rng.integers(0, n, rows)
    t = lib.from_numpy(target) if lib is pylucid else torch.from_numpy(target)
    fn = lambda x: F.cross_entropy(x, t, label_smoothing=0.1)  # noqa: E731
    return fn, [f32(rows, n)], [f32(rows, n)], ()


def step(lib, op, shape):
    """The three calls, as a function returning [first half seconds, second half seconds]."""
    fn, leaf_arrays, up_arrays, gshape = make_case(lib, op, shape)
    # np.array copies in C order and keeps 0-d arrays 0-d (np.ascontiguousarray would not)
    as_t = (lambda a, rg: pylucid.from_numpy(np.array(a, dtype=np.float32)).requires_grad_(rg)) if lib is pylucid \
        else (lambda a, rg: torch.from_numpy(np.array(a, dtype=np.float32)).requires_grad_(rg))
    leaves = [as_t(a, True) for a in leaf_arrays]
    g = as_t(np.random.default_rng(1).standard_normal(gshape), True)
    ups = [as_t(a, False) for a in up_arrays]

    def run():
        t0 = time.perf_counter()
        y = fn(*leaves)
        first = lib.autograd.grad(y, leaves, g, create_graph=True)
        t1 = time.perf_counter()
        lib.autograd.grad(first, leaves + [g], ups, allow_unused=True)
        t2 = time.perf_counter()
        return [t1 - t0, t2 - t1]
    return run


def main():
    print(f"threads: {args.threads} (OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']})"
          + (f", torch {torch.__version__}" if torch else ", torch not installed")
          + (f", partial_ratio {args.partial}" if args.partial else ""))
    head = f"{'op':<15} {'shape':<14} {'pylucid ms':>10} {'(fwd+bwd1':>9} {'bwd2)':>7}"
    if torch:
        head += f" {'torch ms':>9} {'(fwd+bwd1':>9} {'bwd2)':>7} {'torch/pylucid':>13}"
    print(head)
    for op in args.ops:
        for shape in SHAPES:
            mine = timed(step(pylucid, op, shape), args.repeat)
            line = f"{op:<15} {shape!s:<14} {sum(mine) * 1e3:>10.3f} {mine[0] * 1e3:>9.3f} {mine[1] * 1e3:>7.3f}"
            if torch:
                theirs = timed(step(torch, op, shape), args.repeat)
                line += (f" {sum(theirs) * 1e3:>9.3f} {theirs[0] * 1e3:>9.3f} {theirs[1] * 1e3:>7.3f}"
                         f" {sum(theirs) / sum(mine):>13.2f}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
