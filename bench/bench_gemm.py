"""Time the float32 products of an MLP training step (784-256-256-10, batch 128: forward x W^T,
backward g W and g^T x) in pylucid and PyTorch, at 1 and 2 threads.

    python bench/bench_gemm.py [--threads 1 2] [--repeats 5] [--no-torch]

Each line: best-of-``--repeats`` microseconds per product for pylucid and (when installed)
PyTorch, GFLOP/s, and torch's time over pylucid's (> 1: pylucid is faster). To compare two
builds, run the script once per build, alternately, in the same session (the machine's load
moves the absolute figures), with --no-torch for the 2-thread figures: PyTorch's OpenMP pool
keeps spinning after its products and starves pylucid's threads of the cores.
"""
import argparse
import time

import numpy as np
import pylucid

try:
    import torch
except ImportError:  # pylucid alone
    torch = None

# name: (stored shape of A, stored shape of B, mode); mode "nt" is a @ b.t(), "tn" a.t() @ b, "nn" a @ b
CASES = {
    "x@W1T 128x256x784": ((128, 784), (256, 784), "nt"),
    "gT@x  256x784x128": ((128, 256), (128, 784), "tn"),
    "h@W2T 128x256x256": ((128, 256), (256, 256), "nt"),
    "gT@h  256x256x128": ((128, 256), (128, 256), "tn"),
    "g@W2  128x256x256": ((128, 256), (256, 256), "nn"),
    "h@W3T 128x10x256 ": ((128, 256), (10, 256), "nt"),
    "g@W3  128x256x10 ": ((128, 10), (10, 256), "nn"),
}


def best_us(f, n, repeats):
    for _ in range(20):
        f()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def product(x, y, mode):
    if mode == "nt":
        return lambda: x @ y.t()
    if mode == "tn":
        return lambda: x.t() @ y
    return lambda: x @ y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-torch", action="store_true", help="time pylucid alone")
    args = ap.parse_args()
    global torch
    if args.no_torch:
        torch = None
    rng = np.random.default_rng(0)
    for nt in args.threads:
        pylucid.set_num_threads(nt)
        if torch is not None:
            torch.set_num_threads(nt)
        for name, (sa, sb, mode) in CASES.items():
            a = rng.standard_normal(sa).astype(np.float32)
            b = rng.standard_normal(sb).astype(np.float32)
            m, k = (sa[1], sa[0]) if mode == "tn" else sa
            n = sb[0] if mode == "nt" else sb[1]
            n_calls = max(20, int(2e7 / (m * n * k)))
            ours = best_us(product(pylucid.tensor(a), pylucid.tensor(b), mode), n_calls, args.repeats)
            line = f"thr{nt} {name}: pylucid {ours:7.1f}us {2 * m * n * k / ours / 1e3:6.1f}GF"
            if torch is not None:
                theirs = best_us(product(torch.tensor(a), torch.tensor(b), mode), n_calls, args.repeats)
                line += f"  torch {theirs:7.1f}us {2 * m * n * k / theirs / 1e3:6.1f}GF  torch/pylucid {theirs / ours:5.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
