"""RMSNorm vs partial RMSNorm (pRMSNorm, partial_ratio=0.0625) vs LayerNorm on the same model,
data and seed -- the comparison of the RMSNorm paper (Zhang & Sennrich, 2019), in miniature.

The model is a deep MLP (Linear -> norm -> GELU, ``--depth`` times, width ``--width``) trained
with Adam on a synthetic 10-class task (labels from a fixed random teacher network). Each
variant starts from identical weights and sees identical batches; only the norm differs.

    python -m pylucid.examples.norms [--steps 150] [--seed 0] [--plot norms.png]

Prints a table of time per training step, time of the norm layer alone (forward + backward),
final training loss and held-out accuracy.
"""
import time

import numpy as np

import pylucid
from pylucid import nn
from pylucid.nn import functional as F

from ._common import accuracy, banner, check_args, parser, plot_curves, train_loop

VARIANTS = {
    "RMSNorm": lambda w: nn.RMSNorm(w),
    "pRMSNorm (6.25%)": lambda w: nn.RMSNorm(w, partial_ratio=0.0625),
    "LayerNorm": lambda w: nn.LayerNorm(w),
}


def make_task(seed, n_train, n_test, dim=64, n_classes=10):
    """Inputs N(0, 1) with per-feature scales spread over two orders of magnitude, labelled by
    a fixed random two-layer teacher. Returns (x_train, y_train, x_test, y_test)."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((dim, 64)) / np.sqrt(dim)
    w2 = rng.standard_normal((64, n_classes))
    scales = np.exp(rng.uniform(np.log(0.1), np.log(10.0), dim))

    def draw(n):
        x = rng.standard_normal((n, dim))
        y = (np.tanh(x @ w1) @ w2).argmax(1)
        return (x * scales).astype(np.float32), y.astype(np.int64)

    return draw(n_train) + draw(n_test)


def build(norm, dim, width, depth, n_classes):
    layers, d = [], dim
    for _ in range(depth):
        layers += [nn.Linear(d, width), VARIANTS[norm](width), nn.GELU()]
        d = width
    layers.append(nn.Linear(d, n_classes))
    return nn.Sequential(*layers)


def norm_cost(norm, batch, width, seed, reps=200):
    """Median microseconds of one forward + backward of the norm layer alone on (batch, width)."""
    pylucid.manual_seed(seed)
    layer = VARIANTS[norm](width)
    x = pylucid.randn(batch, width, requires_grad=True)
    g = pylucid.randn(batch, width)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        layer(x).backward(g)
        times.append(time.perf_counter() - t0)
    return 1e6 * float(np.median(times[reps // 10:]))


def run(norm, args, data):
    xtr, ytr, xte, yte = data
    pylucid.manual_seed(args.seed)  # same initial weights for every variant
    model = build(norm, xtr.shape[1], args.width, args.depth, 10)
    opt = pylucid.optim.Adam(model.parameters(), lr=2e-3)
    rng = np.random.default_rng(args.seed)  # same batches for every variant

    def loss_fn(step):
        idx = pylucid.tensor(rng.integers(0, xtr.shape[0], args.batch))
        return F.cross_entropy(model(xtr[idx]), ytr[idx])

    losses, times = train_loop(args, f"{norm:>16}", opt, loss_fn)
    acc = accuracy(model, xte, yte)
    warm = times[min(5, len(times) - 1):]  # the first steps allocate state
    tail = [v for _, v in losses[-max(1, args.steps // 10):]]
    return {"ms_per_step": 1e3 * float(np.median(warm)), "final_loss": float(np.mean(tail)),
            "accuracy": acc, "norm_us": norm_cost(norm, args.batch, args.width, args.seed), "losses": losses}


def main(argv=None):
    p = parser("RMSNorm vs pRMSNorm vs LayerNorm", steps=150)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--batch", type=int, default=128)
    args = p.parse_args(argv)
    check_args(args)
    banner("norms", args)
    arrays = make_task(args.seed, 32768, 2048)
    data = tuple(pylucid.tensor(a) for a in arrays)
    results = {name: run(name, args, data) for name in VARIANTS}

    print(f"\nMLP {args.depth}x{args.width}, batch {args.batch}, {args.steps} Adam steps "
          f"(loss: mean of the last 10% of steps)")
    print(f"{'norm':<18}{'ms/step':>9}{'vs RMSNorm':>12}{'norm us':>9}{'vs RMSNorm':>12}{'final loss':>12}"
          f"{'accuracy':>10}")
    base = results["RMSNorm"]
    for name, r in results.items():
        print(f"{name:<18}{r['ms_per_step']:>9.2f}{r['ms_per_step'] / base['ms_per_step']:>11.2f}x"
              f"{r['norm_us']:>9.1f}{r['norm_us'] / base['norm_us']:>11.2f}x{r['final_loss']:>12.4f}"
              f"{100 * r['accuracy']:>9.1f}%")
    print("(ms/step: a whole training step; norm us: the norm layer's forward + backward alone on one "
          f"({args.batch}, {args.width}) activation)")
    if args.plot:
        plot_curves(args.plot, {k: r["losses"] for k, r in results.items()}, "norms: same MLP, three norms")
    return {k: {kk: v for kk, v in r.items() if kk != "losses"} for k, r in results.items()}


if __name__ == "__main__":
    main()
