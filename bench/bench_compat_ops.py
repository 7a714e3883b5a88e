"""topk, multinomial, sort and cumsum on (512, 50000) float32, pylucid against PyTorch (CPU) in
the same run.

    python bench/bench_compat_ops.py [--repeat 5] [--threads 2] [--rows 512] [--cols 50000]

The shapes of a GPT's sampling step over a large vocabulary: topk k=50 along dim -1, then
multinomial num_samples=1 from softmax probabilities (with replacement, and without for a few
samples), plus a full sort along dim -1 and cumsum along dim -1. Goal: no slower than PyTorch.
"ratio" is torch's time / pylucid's (above 1: pylucid is faster). The same numpy data feeds both.
"""
import argparse
import os
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--repeat", type=int, default=5, help="timed repeats per case (the median is kept)")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--rows", type=int, default=512)
ap.add_argument("--cols", type=int, default=50000)
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


def timed(fn, repeat):
    """Median seconds per call (one warm-up call first)."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.rows, args.cols)).astype(np.float32)
    lx = pylucid.from_numpy(x)
    lp = pylucid.nn.functional.softmax(lx, dim=-1)
    cases = [
        ("topk k=50 dim=-1", lambda: lx.topk(50, dim=-1), lambda t, p: t.topk(50, dim=-1)),
        ("multinomial n=1 replacement", lambda: pylucid.multinomial(lp, 1, replacement=True),
         lambda t, p: torch.multinomial(p, 1, replacement=True)),
        ("multinomial n=1 no replacement", lambda: pylucid.multinomial(lp, 1),
         lambda t, p: torch.multinomial(p, 1)),
        ("multinomial n=4 no replacement", lambda: pylucid.multinomial(lp, 4),
         lambda t, p: torch.multinomial(p, 4)),
        ("sort dim=-1", lambda: lx.sort(dim=-1), lambda t, p: t.sort(dim=-1)),
        ("cumsum dim=-1", lambda: lx.cumsum(-1), lambda t, p: t.cumsum(-1)),
    ]
    if torch is not None:
        tx = torch.from_numpy(x)
        tp = torch.softmax(tx, dim=-1)
    print(f"shape ({args.rows}, {args.cols}) float32, {args.threads} threads, median of {args.repeat}")
    print(f"{'case':34s} {'pylucid ms':>11s} {'torch ms':>10s} {'ratio':>7s}")
    for name, ours, theirs in cases:
        t_ours = timed(ours, args.repeat)
        if torch is None:
            print(f"{name:34s} {t_ours * 1e3:11.2f}")
            continue
        t_theirs = timed(lambda: theirs(tx, tp), args.repeat)
        print(f"{name:34s} {t_ours * 1e3:11.2f} {t_theirs * 1e3:10.2f} {t_theirs / t_ours:7.2f}")


if __name__ == "__main__":
    main()
