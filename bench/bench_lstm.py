"""Time one training step -- zero_grad, forward, cross_entropy, backward, Adam step -- of a
character-level LSTM language model (Embedding(vocab, 64) -> 2-layer LSTM(hidden 128,
batch_first) -> Linear(128, vocab)), sequence 64, batch 16, in pylucid and, when installed, the
same model in PyTorch, side by side in the same run. The model code is written once and run with
either library as ``torch``.

    python bench/bench_lstm.py [--repeats 7] [--steps 5] [--threads N]

Reported: median milliseconds per step over ``--repeats`` timed blocks of ``--steps`` steps
(after a warmup; the two libraries' blocks alternate), and pylucid's speedup over PyTorch
(> 1 means pylucid is faster).
"""
import argparse
import os
import statistics
import time

import numpy as np

VOCAB, DIM, HIDDEN, LAYERS, SEQ, BATCH = 40, 64, 128, 2, 64, 16


def step_fn(torch, seed=0):
    """The training step, written against PyTorch's API; ``torch`` is torch or pylucid."""
    nn, F = torch.nn, torch.nn.functional

    class CharLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, DIM)
            self.lstm = nn.LSTM(DIM, HIDDEN, num_layers=LAYERS, batch_first=True)
            self.head = nn.Linear(HIDDEN, VOCAB)

        def forward(self, idx):
            out, _ = self.lstm(self.embed(idx))
            return self.head(out)

    torch.manual_seed(seed)
    model = CharLSTM()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.integers(0, VOCAB, (BATCH, SEQ)))
    y = torch.tensor(rng.integers(0, VOCAB, (BATCH, SEQ)))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    return step


def time_ms(steps_by_name, repeats, steps):
    """Median milliseconds per step of each named step function. The timed blocks of the
    libraries alternate (in turn-swapping order), so a load change on a shared machine hits both
    alike and the ratio stays meaningful."""
    for step in steps_by_name.values():
        for _ in range(3):
            step()
    blocks = {name: [] for name in steps_by_name}
    names = list(steps_by_name)
    for r in range(repeats):
        for name in names if r % 2 == 0 else names[::-1]:
            step = steps_by_name[name]
            t0 = time.perf_counter()
            for _ in range(steps):
                step()
            blocks[name].append((time.perf_counter() - t0) / steps * 1e3)
    return {name: statistics.median(b) for name, b in blocks.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = p.parse_args()
    # pylucid's kernels size their pool from this when the extension loads. OPENBLAS_NUM_THREADS
    # stays unset: pylucid splits products over its own pool and keeps OpenBLAS serial (a second,
    # spinning pool would fight the first for the cores).
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import pylucid

    if hasattr(pylucid, "set_num_threads"):
        pylucid.set_num_threads(args.threads)
    print(f"2-layer LSTM LM, hidden {HIDDEN}, seq {SEQ}, batch {BATCH}, vocab {VOCAB}; {args.threads} thread(s)")
    fns = {"pylucid": step_fn(pylucid)}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(args.threads)
        fns["torch"] = step_fn(torch)
    results = time_ms(fns, args.repeats, args.steps)
    for name, ms in results.items():
        print(f"{name:>8}: {ms:8.2f} ms/step")
    if "torch" in results:
        print(f"pylucid speedup over torch: {results['torch'] / results['pylucid']:.2f}x")


if __name__ == "__main__":
    main()
