"""Time one training step -- zero_grad, forward, cross_entropy, backward, Adam step -- of a
LeNet-style CNN on 1x28x28 inputs in pylucid and, when it is installed, the same model in PyTorch,
side by side in the same run.

    python bench/bench_conv.py [--repeats 7] [--batches 8 64] [--threads N] [--profile]

Model: Conv2d(1, 6, 5, padding=2) -> ReLU -> MaxPool2d(2) -> Conv2d(6, 16, 5) -> ReLU ->
MaxPool2d(2) -> Flatten -> Linear(400, 120) -> ReLU -> Linear(120, 84) -> ReLU -> Linear(84, 10).
Reported: median microseconds per step over ``--repeats`` timed blocks (after a warmup; the two
libraries' blocks alternate) and pylucid's speedup over PyTorch (> 1 means pylucid is faster). ``--profile`` adds a cProfile of
pylucid's step at each batch size.
"""
import argparse
import cProfile
import io
import os
import pstats
import statistics
import time

import numpy as np
import pylucid


def build(nn):
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
    )
    return model


def lucid_step_fn(batch, seed=0, state=None):
    from pylucid import nn
    from pylucid.nn import functional as F

    pylucid.manual_seed(seed)
    model = build(nn)
    if state is not None:
        model.load_state_dict({k: pylucid.tensor(v) for k, v in state.items()})
    opt = pylucid.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    x = pylucid.tensor(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32))
    y = pylucid.tensor(rng.integers(0, 10, batch))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def torch_step_fn(batch, seed=0):
    import torch

    torch.manual_seed(seed)
    model = build(torch.nn)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.standard_normal((batch, 1, 28, 28)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 10, batch))
    loss_fn = torch.nn.functional.cross_entropy

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    return step, state


def time_steps(steps, repeats, min_block=0.2):
    """Median seconds per call of each step function, over `repeats` blocks each long enough to
    time well. The libraries' blocks alternate (in turn-swapping order), so a load change on a
    shared machine hits both alike and the ratio stays meaningful."""
    counts = []
    for step in steps:
        for _ in range(10):
            step()
        n = 1
        while True:
            t = time.perf_counter()
            for _ in range(n):
                step()
            if time.perf_counter() - t >= min_block:
                break
            n *= 2
        counts.append(n)
    blocks = [[] for _ in steps]
    order = list(range(len(steps)))
    for r in range(repeats):
        for i in order if r % 2 == 0 else order[::-1]:
            t = time.perf_counter()
            for _ in range(counts[i]):
                steps[i]()
            blocks[i].append((time.perf_counter() - t) / counts[i])
    return [statistics.median(b) for b in blocks]


def profile(step, n=200):
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
    ap.add_argument("--batches", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--threads", type=int, default=None,
                    help="torch's threads (pylucid follows OMP_NUM_THREADS; default: both use every core)")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    if args.threads and torch:
        torch.set_num_threads(args.threads)
    threads = f"torch threads {torch.get_num_threads()}" if torch else "PyTorch not installed"
    print(f"pylucid {pylucid.__version__} (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}); {threads}")
    print(f"{'LeNet step':<16}{'pylucid us/step':>17}{'torch us/step':>15}{'speedup':>10}{'loss diff':>11}")
    for batch in args.batches:
        state, theirs, diff = None, float("nan"), float("nan")
        if torch:
            tstep, state = torch_step_fn(batch)
        lstep = lucid_step_fn(batch, state=state)
        if torch:
            # Same weights and data: the first few losses agree (a check that both run the same model).
            diff = max(abs(float(lstep().detach()) - float(tstep().detach())) for _ in range(3))
            ours, theirs = time_steps([lstep, tstep], args.repeats)
        else:
            (ours,) = time_steps([lstep], args.repeats)
        ratio = f"{theirs / ours:>9.2f}x" if torch else f"{'-':>10}"
        print(f"{'batch ' + str(batch):<16}{1e6 * ours:>17.1f}{1e6 * theirs:>15.1f}{ratio}{diff:>11.1e}")
    if args.profile:
        for batch in args.batches:
            print(f"\ncProfile of pylucid's step (batch {batch}), sorted by own time:")
            print(profile(lucid_step_fn(batch), n=400 if batch <= 8 else 60))


if __name__ == "__main__":
    main()
