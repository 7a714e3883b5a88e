"""Time one training step -- zero_grad, forward, cross_entropy, backward, Adam step -- of an MLP
with RMSNorm after each hidden Linear (Linear -> RMSNorm -> ReLU), in pylucid and, when it is
installed, the same model in PyTorch (torch.nn.RMSNorm, torch.optim.Adam), side by side.

    python bench/bench_train_step.py [--repeats 7] [--profile]

(a) 2-32-32-2, batch 32: a step here is almost all per-op overhead (Python -> C++ dispatch,
    graph bookkeeping, allocation); (b) 784-256-256-10, batch 128: the GEMMs start to count.
Reported: median microseconds per step over ``--repeats`` timed blocks (after a warmup), and
pylucid's speedup over PyTorch (> 1 means pylucid is faster). ``--profile`` adds a cProfile of
pylucid's step (the Python-visible split of where a step's time goes).
"""
import argparse
import cProfile
import io
import pstats
import statistics
import time

import numpy as np
import pylucid

SHAPES = {"a": ([2, 32, 32, 2], 32), "b": ([784, 256, 256, 10], 128)}


def lucid_step_fn(dims, batch, seed=0):
    from pylucid import nn
    from pylucid.nn import functional as F

    pylucid.manual_seed(seed)
    layers = []
    for i in range(len(dims) - 2):
        layers += [nn.Linear(dims[i], dims[i + 1]), nn.RMSNorm(dims[i + 1]), nn.ReLU()]
    layers.append(nn.Linear(dims[-2], dims[-1]))
    model = nn.Sequential(*layers)
    opt = pylucid.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    x = pylucid.tensor(rng.standard_normal((batch, dims[0])).astype(np.float32))
    y = pylucid.tensor(rng.integers(0, dims[-1], batch))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def torch_step_fn(dims, batch, seed=0):
    import torch

    torch.manual_seed(seed)
    layers = []
    for i in range(len(dims) - 2):
        layers += [torch.nn.Linear(dims[i], dims[i + 1]), torch.nn.RMSNorm(dims[i + 1], eps=1e-6),
                   torch.nn.ReLU()]
    layers.append(torch.nn.Linear(dims[-2], dims[-1]))
    model = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((batch, dims[0])).astype(np.float32))
    y = torch.tensor(rng.integers(0, dims[-1], batch))
    loss_fn = torch.nn.functional.cross_entropy

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def time_step(step, repeats, min_block=0.2):
    """Median seconds per call over `repeats` blocks, each block long enough to time well."""
    for _ in range(20):
        step()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            step()
        dt = time.perf_counter() - t
        if dt >= min_block:
            break
        n *= 2
    blocks = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            step()
        blocks.append((time.perf_counter() - t) / n)
    return statistics.median(blocks)


def profile(step, n=2000):
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(n):
        step()
    pr.disable()
    out = io.StringIO()
    pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(14)
    return out.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    threads = f"torch threads {torch.get_num_threads()}" if torch else "PyTorch not installed"
    print(f"pylucid {pylucid.__version__}; {threads}")
    print(f"{'model':<26}{'pylucid us/step':>17}{'torch us/step':>15}{'speedup':>10}")
    for key, (dims, batch) in SHAPES.items():
        ours = time_step(lucid_step_fn(dims, batch), args.repeats)
        theirs = time_step(torch_step_fn(dims, batch), args.repeats) if torch else float("nan")
        name = f"({key}) {'-'.join(map(str, dims))} b{batch}"
        ratio = f"{theirs / ours:>9.2f}x" if torch else f"{'-':>10}"
        print(f"{name:<26}{1e6 * ours:>17.1f}{1e6 * theirs:>15.1f}{ratio}")
    if args.profile:
        for key, (dims, batch) in SHAPES.items():
            print(f"\ncProfile of pylucid's step ({key}), sorted by own time:")
            print(profile(lucid_step_fn(dims, batch), n=2000 if key == "a" else 300))


if __name__ == "__main__":
    main()
