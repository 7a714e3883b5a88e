"""nn.Softmax2d, LocalResponseNorm, AlphaDropout, FeatureAlphaDropout, ChannelShuffle and the
multi-class/multi-label margin losses (nn/_functional_extra.py): forward against numpy (and torch
where installed), float64 gradcheck and gradgradcheck, non-contiguous inputs, typed errors."""
import numpy as np
import pytest

import pylucid
import pylucid.nn as nn
import pylucid.nn.functional as F
from helpers import check_op


def _lrn(a, size, alpha=1e-4, beta=0.75, k=1.0):
    sq = np.pad(a * a, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (a.ndim - 2))
    window = sum(sq[:, i:i + a.shape[1]] for i in range(size))
    return a / (k + alpha / size * window) ** beta


def _multi_margin(x, y, p=1, margin=1.0, w=None):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                h = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
                out[i] += h * (1.0 if w is None else w[y[i]])
    return out / c


TARGET = np.array([0, 4, 2])
LABELS = np.array([[3, 0, -1, 1, 1], [0, 1, 2, 3, 4], [-1, 1, 1, 1, 1]])
MULTI_HOT = np.array([[1.0, 0, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 0, 0, 1]])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5, 0.3])


def _multilabel_margin(x, t):
    out = np.zeros(x.shape[0])
    for i, row in enumerate(t):
        js = list(row[:list(row).index(-1)] if -1 in row else row)
        for j in js:
            for k in range(x.shape[1]):
                if k not in js:
                    out[i] += max(0.0, 1 - (x[i, j] - x[i, k]))
    return out / x.shape[1]


CASES = [
    ("lrn_4d", lambda a: F.local_response_norm(a, 3, alpha=0.5, beta=0.6, k=2.0),
     lambda a: _lrn(a, 3, 0.5, 0.6, 2.0), [(2, 5, 3, 2)]),
    ("lrn_3d_even", lambda a: nn.LocalResponseNorm(2, alpha=0.3)(a), lambda a: _lrn(a, 2, 0.3), [(2, 4, 3)]),
    ("softmax2d", lambda a: nn.Softmax2d()(a), lambda a: np.exp(a) / np.exp(a).sum(-3, keepdims=True), [(2, 3, 2, 2)]),
    ("channel_shuffle", lambda a: nn.ChannelShuffle(2)(a),
     lambda a: a.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(2, 6, 2), [(2, 6, 2)]),
    ("multi_margin_p1", lambda a: F.multi_margin_loss(a, pylucid.tensor(TARGET), reduction="none"),
     lambda a: _multi_margin(a, TARGET), [(3, 5)]),
    ("multi_margin_p2_weight", lambda a: nn.MultiMarginLoss(p=2, margin=0.7, weight=pylucid.tensor(WEIGHT))(
        a, pylucid.tensor(TARGET)), lambda a: _multi_margin(a, TARGET, 2, 0.7, WEIGHT).mean(), [(3, 5)]),
    ("multilabel_margin", lambda a: nn.MultiLabelMarginLoss(reduction="sum")(a, pylucid.tensor(LABELS)),
     lambda a: _multilabel_margin(a, LABELS).sum(), [(3, 5)]),
    ("multilabel_soft_margin", lambda a: nn.MultiLabelSoftMarginLoss(weight=pylucid.tensor(WEIGHT))(
        a, pylucid.tensor(MULTI_HOT)),
     lambda a: np.mean(np.mean(WEIGHT * (MULTI_HOT * np.logaddexp(0, -a) + (1 - MULTI_HOT) * np.logaddexp(0, a)),
                               -1)), [(3, 5)]),
]


@pytest.mark.parametrize("name,fn,ref,shapes", CASES, ids=[c[0] for c in CASES])
def test_against_numpy(name, fn, ref, shapes):
    """Guards against a wrong value, gradient or double backward (non-contiguous inputs included)."""
    check_op(fn, ref, shapes)


def test_alpha_dropout():
    """Guards against alpha dropout changing the mean/variance of SELU activations, or acting in eval."""
    pylucid.manual_seed(0)
    x = pylucid.randn(200000, dtype=pylucid.float64)
    d = nn.AlphaDropout(0.2)
    y = d(x)
    assert abs(y.mean().item()) < 0.02 and abs(y.std().item() - 1.0) < 0.02
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.2 + 1) * 0.8)
    assert np.isclose(np.asarray(y), -1.7580993408473766 * a * 0.8).mean() == pytest.approx(0.2, abs=0.01)
    assert d.eval()(x) is x and F.alpha_dropout(x, 0.5) is x
    assert pylucid.alpha_dropout(x, 0.5, False) is x and (F.alpha_dropout(x, 1.0, True) == 0).all()
    f = nn.FeatureAlphaDropout(0.5)(pylucid.ones(4, 6, 5, dtype=pylucid.float64))
    assert (f.numpy().std(-1) == 0).all()  # one draw per (sample, channel)
    assert pylucid.dropout(x, 0.3, False) is x


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
def test_alpha_dropout_masks_equal_torchs(dt):
    """Guards against alpha_dropout/feature_alpha_dropout drawing their masks with
    bernoulli(tensor of p) (float32 uniforms) where PyTorch draws noise.bernoulli_(1 - p): the
    same seed gave other masks in float32 and bfloat16."""
    torch = pytest.importorskip("torch")
    for fn, shape in (("alpha_dropout", (3, 50)), ("feature_alpha_dropout", (4, 6, 5))):
        pylucid.manual_seed(3)
        torch.manual_seed(3)
        ours = getattr(F, fn)(pylucid.ones(*shape, dtype=getattr(pylucid, dt)), 0.3, True)
        theirs = getattr(torch.nn.functional, fn)(torch.ones(*shape, dtype=getattr(torch, dt)), 0.3, True)
        assert ours.float().tolist() == theirs.float().tolist()
        assert pylucid.rand(3).tolist() == torch.rand(3).tolist()


def test_against_torch():
    """Guards against a difference from PyTorch's formulas (window placement, reductions, 1-d inputs)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x4, x5 = rng.standard_normal((2, 5, 3, 3)), rng.standard_normal((2, 6, 2, 2, 2))
    x = rng.standard_normal((3, 5))
    cases = [
        (lambda m, a: m.nn.functional.local_response_norm(a, 4, alpha=0.1, beta=0.6, k=2.0), x4),
        (lambda m, a: m.nn.LocalResponseNorm(2)(a), x5),
        (lambda m, a: m.channel_shuffle(a[:, :4], 4), x4),
        (lambda m, a: m.nn.functional.multi_margin_loss(a[0], m.tensor(2)), x),
        (lambda m, a: m.nn.functional.multi_margin_loss(a, m.tensor(TARGET), reduction="sum"), x),
        (lambda m, a: m.nn.functional.multilabel_margin_loss(a[1], m.tensor(LABELS[1])), x),
        (lambda m, a: m.nn.MultiLabelMarginLoss(reduction="none")(a, m.tensor(LABELS)), x),
        (lambda m, a: m.nn.MultiLabelSoftMarginLoss(reduction="none")(a, m.tensor(MULTI_HOT)), x),
    ]
    for fn, a in cases:
        np.testing.assert_allclose(np.asarray(fn(pylucid, pylucid.tensor(a))), fn(torch, torch.tensor(a)).numpy(),
                                   rtol=1e-10)


def test_errors():
    """Guards against bad shapes, targets or options passing silently."""
    with pytest.raises(ValueError):
        nn.Softmax2d()(pylucid.ones(2, 3))
    with pytest.raises(ValueError):
        F.local_response_norm(pylucid.ones(2, 3), 2)
    with pytest.raises(RuntimeError):
        F.channel_shuffle(pylucid.ones(1, 5, 2), 2)
    with pytest.raises(ValueError):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(IndexError):
        F.multi_margin_loss(pylucid.ones(2, 3), pylucid.tensor([0, 3]))
    with pytest.raises(IndexError):
        F.multilabel_margin_loss(pylucid.ones(1, 3), pylucid.tensor([[5, -1, 0]]))
    with pytest.raises(ValueError):
        F.alpha_dropout(pylucid.ones(2), 1.5, True)
    with pytest.raises(RuntimeError):
        nn.AlphaDropout(2.0)
    assert "groups=3" in repr(nn.ChannelShuffle(3)) and "LocalResponseNorm(2" in repr(nn.LocalResponseNorm(2))
