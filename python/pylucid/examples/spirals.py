"""Classify the points of three interleaved 2-D spiral arms with a small MLP that puts an RMSNorm
after each hidden Linear, trained with Adam under a warmup + cosine schedule.

    python -m pylucid.examples.spirals [--steps 400] [--seed 0] [--plot spirals.png]

Prints the held-out accuracy as ``accuracy: NN.N%`` (>= 95% with the defaults).
"""
import math

import numpy as np

import pylucid
from pylucid import nn
from pylucid.nn import functional as F
from pylucid.optim.lr_scheduler import get_cosine_schedule_with_warmup

from ._common import accuracy, banner, check_args, parser, plot_curves, train_loop


def make_spirals(n_per_class, n_classes=3, noise=0.15, seed=0):
    """Points on ``n_classes`` spiral arms (CS231n's construction): radius grows from 0 to 1
    while the angle sweeps 4 radians from each arm's start, plus Gaussian angle noise."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for c in range(n_classes):
        r = np.linspace(0.0, 1.0, n_per_class)
        t = np.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + rng.standard_normal(n_per_class) * noise
        xs.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        ys.append(np.full(n_per_class, c))
    x = np.concatenate(xs).astype(np.float32)
    y = np.concatenate(ys).astype(np.int64)
    perm = rng.permutation(len(y))
    return x[perm], y[perm]


class SpiralNet(nn.Module):
    """Linear -> RMSNorm -> ReLU, twice, then a Linear to class logits."""

    def __init__(self, hidden=64, n_classes=3):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, hidden), nn.RMSNorm(hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.RMSNorm(hidden), nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )

    def forward(self, x):
        return self.net(x)


def main(argv=None):
    args = parser("MLP with RMSNorm on 3-arm spirals", steps=400).parse_args(argv)
    check_args(args)
    banner("spirals", args)
    pylucid.manual_seed(args.seed)
    xtr, ytr = make_spirals(300, seed=args.seed)
    xte, yte = make_spirals(200, seed=args.seed + 1000)
    xtr, ytr, xte, yte = (pylucid.tensor(a) for a in (xtr, ytr, xte, yte))

    model = SpiralNet()
    opt = pylucid.optim.AdamW(model.parameters(), lr=2e-2, weight_decay=1e-4)
    sched = get_cosine_schedule_with_warmup(opt, num_warmup_steps=max(1, args.steps // 20),
                                            num_training_steps=args.steps)
    batch = 128
    n = xtr.shape[0]
    rng = np.random.default_rng(args.seed)

    def loss_fn(step):
        idx = pylucid.tensor(rng.integers(0, n, batch))
        return F.cross_entropy(model(xtr[idx]), ytr[idx])

    losses, seconds = train_loop(args, "spirals", opt, loss_fn, sched)
    elapsed = sum(seconds)

    train_acc = accuracy(model, xtr, ytr)
    test_acc = accuracy(model, xte, yte)
    print(f"{args.steps} steps in {elapsed:.1f}s ({1e3 * elapsed / args.steps:.2f} ms/step); "
          f"final loss {losses[-1][1]:.4f}; train accuracy {100 * train_acc:.1f}%")
    print(f"accuracy: {100 * test_acc:.1f}%  (held-out, {yte.shape[0]} points)")
    if args.plot:
        plot_curves(args.plot, {"train loss": losses}, "spirals: MLP + RMSNorm")
    return {"accuracy": test_acc, "train_accuracy": train_acc, "final_loss": losses[-1][1],
            "loss_is_finite": all(math.isfinite(v) for _, v in losses)}


if __name__ == "__main__":
    main()
