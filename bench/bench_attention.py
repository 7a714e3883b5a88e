"""scaled_dot_product_attention forward and forward + backward, pylucid against PyTorch (CPU)
in the same run.

    python bench/bench_attention.py [--repeat 7] [--threads 2]

The headline case is (batch 8, heads 4, seq 128, dim 32), causal, float32: goal >= 2x faster
than PyTorch for forward + backward. "ratio" is torch's time / pylucid's (above 1: pylucid is
faster). The gradient fed to backward is fixed and the inputs are leaves, so each timed call is
one forward, one backward into q, k and v.
"""
import argparse
import os
import time

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--repeat", type=int, default=7, help="timed repeats per case (the median is kept)")
ap.add_argument("--threads", type=int, default=2)
args = ap.parse_args()
# OpenMP reads the thread count when the runtime starts: set it before the extension loads.
os.environ["OMP_NUM_THREADS"] = str(args.threads)

import numpy as np  # noqa: E402

import pylucid  # noqa: E402
import pylucid.nn.functional as F  # noqa: E402

try:
    import torch
    import torch.nn.functional as TF

    torch.set_num_threads(args.threads)
except ImportError:
    torch = None

# (batch, heads, L, S, E, causal)
CASES = [(8, 4, 128, 128, 32, True), (8, 4, 128, 128, 32, False), (4, 8, 256, 256, 64, True),
         (1, 4, 1024, 1024, 64, True), (32, 4, 32, 32, 16, False)]


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


def lucid_fns(q, k, v, g, causal):
    lq, lk, lv = (pylucid.from_numpy(a.copy()).requires_grad_() for a in (q, k, v))
    lg = pylucid.from_numpy(g)

    def fwd():
        with pylucid.no_grad():
            F.scaled_dot_product_attention(lq, lk, lv, is_causal=causal)

    def fwd_bwd():
        lq.grad = lk.grad = lv.grad = None
        F.scaled_dot_product_attention(lq, lk, lv, is_causal=causal).backward(lg)

    return fwd, fwd_bwd


def torch_fns(q, k, v, g, causal):
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    tg = torch.tensor(g)

    def fwd():
        with torch.no_grad():
            TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)

    def fwd_bwd():
        tq.grad = tk.grad = tv.grad = None
        TF.scaled_dot_product_attention(tq, tk, tv, is_causal=causal).backward(tg)

    return fwd, fwd_bwd


def main():
    rng = np.random.default_rng(0)
    print(f"threads={args.threads}  torch={'yes' if torch else 'no'}")
    print(f"{'case':<32}{'pass':<10}{'pylucid ms':>12}{'torch ms':>12}{'ratio':>8}")
    for b, h, L, S, E, causal in CASES:
        q = rng.standard_normal((b, h, L, E)).astype(np.float32)
        k = rng.standard_normal((b, h, S, E)).astype(np.float32)
        v = rng.standard_normal((b, h, S, E)).astype(np.float32)
        g = rng.standard_normal((b, h, L, E)).astype(np.float32)
        name = f"({b},{h},{L},{S},{E}){' causal' if causal else ''}"
        lf = lucid_fns(q, k, v, g, causal)
        tf = torch_fns(q, k, v, g, causal) if torch else (None, None)
        for label, fl, ft in (("fwd", lf[0], tf[0]), ("fwd+bwd", lf[1], tf[1])):
            tl = timed(fl, args.repeat)
            tt = timed(ft, args.repeat) if ft else float("nan")
            print(f"{name:<32}{label:<10}{tl * 1e3:>12.3f}{tt * 1e3:>12.3f}{tt / tl:>8.2f}")


if __name__ == "__main__":
    main()
