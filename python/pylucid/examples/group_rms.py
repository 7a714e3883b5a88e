"""GroupRMSNorm on heterogeneous sensor channels: three sensors report 8 channels each, at scales
1e-3, 1 and 1e3 and with a per-reading gain that varies tenfold. The class depends only on the
*pattern* each sensor shows, so the first layer normalises each sensor's channels by their own
RMS (GroupRMSNorm with contiguous groups), and the hidden layers normalise interleaved channel
groups (ids ``c % 4``: groups need not be contiguous).

    python -m pylucid.examples.group_rms [--steps 300] [--seed 0] [--plot group_rms.png]

Prints the held-out accuracy as ``accuracy: NN.N%``, beside the same MLP without the
normalisations as a baseline.
"""
import time

import numpy as np

import pylucid
from pylucid import nn
from pylucid.nn import functional as F

from ._common import accuracy, banner, check_args, parser, plot_curves, train_loop

SENSOR_SCALES = (1e-3, 1.0, 1e3)
CHANNELS = 8


def make_readings(n, seed, patterns_seed=99):
    """Each sensor's reading = gain * scale * (pattern direction + noise); the label combines a
    sign test on sensor 0 with an XOR of sign tests on sensors 1 and 2 (4 classes)."""
    probes = np.random.default_rng(patterns_seed).standard_normal((3, CHANNELS))
    rng = np.random.default_rng(seed)
    parts, signs = [], []
    for s, scale in enumerate(SENSOR_SCALES):
        u = rng.standard_normal((n, CHANNELS))
        signs.append(u @ probes[s] > 0)
        gain = np.exp(rng.uniform(np.log(0.3), np.log(3.0), (n, 1)))
        parts.append(gain * scale * (u + 0.05 * rng.standard_normal((n, CHANNELS))))
    y = 2 * signs[0] + (signs[1] ^ signs[2])
    return np.concatenate(parts, axis=1).astype(np.float32), y.astype(np.int64)


class SensorNet(nn.Module):
    def __init__(self, hidden=96, groups=4, n_classes=4, normalise=True):
        super().__init__()
        n_in = CHANNELS * len(SENSOR_SCALES)
        sensor_ids = [c // CHANNELS for c in range(n_in)]   # 0..0 1..1 2..2
        hidden_ids = [c % groups for c in range(hidden)]    # 0 1 2 3 0 1 2 3 ...
        norm = nn.GroupRMSNorm if normalise else (lambda ids: nn.Identity())
        self.in_norm = norm(sensor_ids)
        self.fc1 = nn.Linear(n_in, hidden)
        self.norm1 = norm(hidden_ids)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm2 = norm(hidden_ids)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, x):
        h = pylucid.relu(self.norm1(self.fc1(self.in_norm(x))))
        h = pylucid.relu(self.norm2(self.fc2(h)))
        return self.out(h)


def train(model, args, data, label):
    xtr, ytr, xte, yte = data
    opt = pylucid.optim.Adam(model.parameters(), lr=5e-3)
    sched = pylucid.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps, eta_min=1e-4)
    rng = np.random.default_rng(args.seed)

    def loss_fn(step):
        idx = pylucid.tensor(rng.integers(0, xtr.shape[0], 128))
        return F.cross_entropy(model(xtr[idx]), ytr[idx])

    losses, _ = train_loop(args, label, opt, loss_fn, sched)
    return accuracy(model, xte, yte), losses


def main(argv=None):
    args = parser("GroupRMSNorm over sensor and hidden channel groups", steps=300).parse_args(argv)
    check_args(args)
    banner("group_rms", args)
    xtr, ytr = make_readings(4000, args.seed)
    xte, yte = make_readings(1000, args.seed + 1)
    data = tuple(pylucid.tensor(a) for a in (xtr, ytr, xte, yte))

    pylucid.manual_seed(args.seed)
    model = SensorNet()
    print(model.in_norm, model.norm1, sep="\n")
    t0 = time.perf_counter()
    acc, losses = train(model, args, data, "GroupRMSNorm")
    elapsed = time.perf_counter() - t0
    pylucid.manual_seed(args.seed)
    base_acc, base_losses = train(SensorNet(normalise=False), args, data, "no norm")

    print(f"{args.steps} steps in {elapsed:.1f}s; learned group gains: "
          f"{[round(g, 3) for g in model.in_norm.gamma.tolist()]}")
    print(f"baseline without normalisation: {100 * base_acc:.1f}%")
    print(f"accuracy: {100 * acc:.1f}%  (held-out, {yte.shape[0]} readings)")
    if args.plot:
        plot_curves(args.plot, {"GroupRMSNorm": losses, "no norm": base_losses}, "group_rms: sensor channels")
    return {"accuracy": acc, "baseline_accuracy": base_acc, "final_loss": losses[-1][1]}


if __name__ == "__main__":
    main()
