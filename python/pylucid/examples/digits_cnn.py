"""Classify handwritten-style digits with a small CNN (Conv2d -> BatchNorm2d -> ReLU -> MaxPool2d,
Conv2d -> GroupRMSNorm -> ReLU -> MaxPool2d, then a Linear), trained with Adam.

    python -m pylucid.examples.digits_cnn [--steps 300] [--seed 0] [--plot digits.png]

The digits are drawn here, procedurally: each class is a few pen strokes (lines and arcs in a
unit box), jittered per sample, pushed through a random affine map (rotation, scale, shear,
shift), rendered at 28x28 with a random pen thickness and anti-aliased edges, plus pixel noise.
Nothing is downloaded. Prints the held-out accuracy as ``accuracy: NN.N%`` (>= 97% with the
defaults).
"""
import math

import numpy as np

import pylucid
from pylucid import nn
from pylucid.nn import functional as F

from ._common import accuracy, banner, check_args, parser, plot_curves, train_loop


def _arc(cx, cy, r, a0, a1, n=10, ry=None):
    """Points on an arc (degrees; y points down, so -90 is the top)."""
    t = np.radians(np.linspace(a0, a1, n))
    return [(cx + r * math.cos(a), cy + (ry or r) * math.sin(a)) for a in t]


# Each digit: a list of strokes, each a polyline in the unit box (x right, y down).
STROKES = {
    0: [_arc(0.5, 0.5, 0.26, 0, 360, 20, ry=0.38)],
    1: [[(0.38, 0.25), (0.52, 0.1), (0.52, 0.9)]],
    2: [_arc(0.5, 0.32, 0.23, -180, 10, 10) + [(0.62, 0.55), (0.25, 0.9), (0.78, 0.9)]],
    3: [_arc(0.5, 0.3, 0.2, -150, 90, 10), _arc(0.5, 0.69, 0.22, -90, 150, 10)],
    4: [[(0.65, 0.9), (0.65, 0.1), (0.2, 0.65), (0.82, 0.65)]],
    5: [[(0.75, 0.1), (0.33, 0.1), (0.3, 0.45)] + _arc(0.5, 0.65, 0.24, -125, 150, 12)],
    6: [[(0.68, 0.1), (0.45, 0.25), (0.31, 0.5), (0.3, 0.68)], _arc(0.5, 0.68, 0.2, 0, 360, 16)],
    7: [[(0.22, 0.1), (0.78, 0.1), (0.42, 0.9)]],
    8: [_arc(0.5, 0.29, 0.18, 0, 360, 14), _arc(0.5, 0.7, 0.21, 0, 360, 16)],
    9: [_arc(0.5, 0.32, 0.2, 0, 360, 16), [(0.7, 0.32), (0.62, 0.9)]],
}


def _segments(label, rng):
    """The digit's strokes as (S, 2, 2) segment endpoints, with each point jittered a little."""
    segs = []
    for stroke in STROKES[label]:
        p = np.asarray(stroke) + rng.normal(0.0, 0.03, (len(stroke), 2))
        segs.append(np.stack([p[:-1], p[1:]], axis=1))
    return np.concatenate(segs)


def render(label, rng, size=28):
    """One 28x28 float32 image of digit ``label``: random affine, thickness, noise."""
    seg = _segments(label, rng) - 0.5
    ang = math.radians(rng.uniform(-20, 20))
    shear = rng.uniform(-0.35, 0.35)
    sx, sy = rng.uniform(0.65, 1.1), rng.uniform(0.75, 1.1)
    a = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]]) @ \
        np.array([[sx, shear * sx], [0.0, sy]])
    seg = seg @ a.T * (size - 6) + size / 2 + rng.uniform(-2.0, 2.0, 2)
    # Distance of every pixel centre to the nearest segment.
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    pix = np.stack([xx.ravel(), yy.ravel()], axis=1)[:, None, :]  # (P, 1, 2)
    p0, d = seg[None, :, 0], seg[None, :, 1] - seg[None, :, 0]  # (1, S, 2)
    t = np.clip(((pix - p0) * d).sum(-1) / np.maximum((d * d).sum(-1), 1e-9), 0.0, 1.0)
    dist = np.sqrt((((p0 + t[..., None] * d) - pix) ** 2).sum(-1).min(1))
    half = rng.uniform(0.7, 1.6)  # half the pen width, in pixels
    img = np.clip(half + 0.5 - dist, 0.0, 1.0) * rng.uniform(0.7, 1.0)
    img = img + rng.normal(0.0, 0.15, img.shape)
    return np.clip(img, 0.0, 1.0).reshape(size, size).astype(np.float32)


def make_digits(n, seed):
    """``n`` images (n, 1, 28, 28) and labels, classes balanced and shuffled."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % 10)
    x = np.stack([render(int(c), rng) for c in labels])[:, None]
    return (x - 0.1) / 0.3, labels.astype(np.int64)


class DigitsCNN(nn.Module):
    """Two conv blocks (BatchNorm2d in the first, GroupRMSNorm over 4 channel groups on the
    feature maps in the second), each halving the resolution, then a Linear to 10 logits."""

    def __init__(self, c1=16, c2=32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.BatchNorm2d(c1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.GroupRMSNorm([i * 4 // c2 for i in range(c2)]), nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Linear(c2 * 7 * 7, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def main(argv=None):
    args = parser("small CNN on procedurally drawn digits", steps=300).parse_args(argv)
    check_args(args)
    banner("digits_cnn", args)
    pylucid.manual_seed(args.seed)
    xtr, ytr = make_digits(5000, seed=args.seed)
    xte, yte = make_digits(1500, seed=args.seed + 1000)
    xtr, ytr, xte, yte = (pylucid.tensor(a) for a in (xtr, ytr, xte, yte))

    model = DigitsCNN()
    opt = pylucid.optim.Adam(model.parameters(), lr=3e-3)
    sched = pylucid.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.steps)
    batch = 64
    n = xtr.shape[0]
    rng = np.random.default_rng(args.seed)

    def loss_fn(step):
        idx = pylucid.tensor(rng.integers(0, n, batch))
        return F.cross_entropy(model(xtr[idx]), ytr[idx])

    losses, seconds = train_loop(args, "digits_cnn", opt, loss_fn, sched)
    elapsed = sum(seconds)
    test_acc = accuracy(model, xte, yte)
    print(f"{args.steps} steps in {elapsed:.1f}s ({1e3 * elapsed / args.steps:.2f} ms/step); "
          f"final loss {losses[-1][1]:.4f}")
    print(f"accuracy: {100 * test_acc:.1f}%  (held-out, {yte.shape[0]} digits)")
    if args.plot:
        plot_curves(args.plot, {"train loss": losses}, "digits_cnn: conv + BatchNorm2d/GroupRMSNorm + pooling")
    return {"accuracy": test_acc, "final_loss": losses[-1][1],
            "loss_is_finite": all(math.isfinite(v) for _, v in losses)}


if __name__ == "__main__":
    main()
