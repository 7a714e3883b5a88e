"""The composed losses (smooth_l1, huber, binary_cross_entropy, kl_div, margin_ranking,
cosine_embedding, soft_margin, hinge_embedding, triplet_margin) and their modules: values against
numpy, float64 gradcheck, every reduction, and values and gradients against PyTorch; plus
cross_entropy with probability targets / label smoothing / weights / ignore_index against
PyTorch."""
import numpy as np
import pylucid
import pylucid.nn as nn
import pylucid.nn.functional as F
import pytest

RNG = np.random.default_rng(11)


def T(a, grad=False):
    return pylucid.tensor(np.array(a, dtype=np.float64), requires_grad=grad)


def test_smooth_l1_and_huber_against_numpy_with_gradcheck():
    """Both branches of each piecewise loss, every reduction, and finite-difference gradients."""
    x, y = RNG.standard_normal((4, 5)) * 2, RNG.standard_normal((4, 5))
    d = np.abs(x - y)
    for beta in (0.5, 1.0):
        want = np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
        np.testing.assert_allclose(F.smooth_l1_loss(T(x), T(y), reduction="none", beta=beta).numpy(), want)
        np.testing.assert_allclose(F.smooth_l1_loss(T(x), T(y), beta=beta).item(), want.mean())
        np.testing.assert_allclose(F.smooth_l1_loss(T(x), T(y), reduction="sum", beta=beta).item(), want.sum())
    np.testing.assert_allclose(F.smooth_l1_loss(T(x), T(y), beta=0.0).item(), d.mean())
    want = np.where(d <= 1.5, 0.5 * d * d, 1.5 * (d - 0.75))
    np.testing.assert_allclose(F.huber_loss(T(x), T(y), delta=1.5).item(), want.mean())
    assert pylucid.autograd.gradcheck(lambda a, b: F.smooth_l1_loss(a, b), (T(x, True), T(y, True)))
    assert pylucid.autograd.gradcheck(lambda a, b: F.huber_loss(a, b, delta=1.5), (T(x, True), T(y, True)))


def test_bce_clamps_logs_and_checks_range():
    """x = 0 or 1 gives a finite loss (logs clamped at -100); values outside [0, 1] are refused."""
    out = F.binary_cross_entropy(T([0.0, 1.0]), T([1.0, 0.0]), reduction="none")
    assert out.tolist() == [100.0, 100.0]
    with pytest.raises(pylucid.LucidError, match="between 0 and 1"):
        F.binary_cross_entropy(T([1.5]), T([1.0]))
    with pytest.raises(pylucid.ShapeMismatch, match="binary_cross_entropy"):
        F.binary_cross_entropy(T([0.5, 0.5]), T([1.0]))
    p = T(RNG.uniform(0.1, 0.9, (3, 4)), True)
    t = T(RNG.uniform(0, 1, (3, 4)))
    w = T(RNG.uniform(0.5, 2, (4,)))
    assert pylucid.autograd.gradcheck(lambda a: F.binary_cross_entropy(a, t, weight=w), (p,))


def test_kl_div_reductions_and_zero_targets():
    """target == 0 contributes 0 (not NaN) and no gradient; batchmean divides by the batch."""
    logp = np.log(np.array([[0.2, 0.8], [0.5, 0.5]]))
    t = np.array([[0.0, 1.0], [0.3, 0.7]])
    elem = np.where(t > 0, t * (np.log(np.where(t > 0, t, 1)) - logp), 0)
    np.testing.assert_allclose(F.kl_div(T(logp), T(t), reduction="none").numpy(), elem)
    np.testing.assert_allclose(F.kl_div(T(logp), T(t), reduction="batchmean").item(), elem.sum() / 2)
    np.testing.assert_allclose(F.kl_div(T(logp), T(t)).item(), elem.mean())
    np.testing.assert_allclose(F.kl_div(T(logp), T(np.log(t + 1e-3)), log_target=True, reduction="sum").item(),
                               ((t + 1e-3) * (np.log(t + 1e-3) - logp)).sum())
    x = T(logp, True)
    assert pylucid.autograd.gradcheck(lambda a: F.kl_div(a, T(t), reduction="batchmean"), (x,))
    with pytest.raises(pylucid.LucidError, match="kl_div"):
        F.kl_div(T(logp), T(t), reduction="avg")


def _torch():
    torch = pytest.importorskip("torch")
    return torch


CASES = [
    ("smooth_l1_loss", "SmoothL1Loss", {"beta": 0.7}, 2),
    ("huber_loss", "HuberLoss", {"delta": 0.8}, 2),
    ("binary_cross_entropy", "BCELoss", {}, 2),
    ("kl_div", "KLDivLoss", {"reduction": "batchmean"}, 2),
    ("kl_div", "KLDivLoss", {"log_target": True, "reduction": "sum"}, 2),
    ("margin_ranking_loss", "MarginRankingLoss", {"margin": 0.3}, 3),
    ("cosine_embedding_loss", "CosineEmbeddingLoss", {"margin": 0.2}, 3),
    ("soft_margin_loss", "SoftMarginLoss", {}, 2),
    ("hinge_embedding_loss", "HingeEmbeddingLoss", {"margin": 0.5}, 2),
    ("triplet_margin_loss", "TripletMarginLoss", {"margin": 0.5, "swap": True}, 3),
    ("mse_loss", "MSELoss", {"reduction": "sum"}, 2),
    ("l1_loss", "L1Loss", {"reduction": "none"}, 2),
]


def _inputs(fname):
    x = RNG.standard_normal((6, 4))
    if fname == "binary_cross_entropy":
        return [RNG.uniform(0.05, 0.95, (6, 4)), RNG.uniform(0, 1, (6, 4))]
    if fname == "kl_div":
        return [np.log(RNG.dirichlet(np.ones(4), 6)), RNG.dirichlet(np.ones(4), 6)]
    if fname == "margin_ranking_loss":
        return [RNG.standard_normal(6), RNG.standard_normal(6), np.sign(RNG.standard_normal(6))]
    if fname == "cosine_embedding_loss":
        return [x, RNG.standard_normal((6, 4)), np.sign(RNG.standard_normal(6))]
    if fname in ("soft_margin_loss", "hinge_embedding_loss"):
        return [x, np.sign(RNG.standard_normal((6, 4)))]
    if fname == "triplet_margin_loss":
        return [x, RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4))]
    return [x, RNG.standard_normal((6, 4))]


@pytest.mark.parametrize("fname,cname,kw,n", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_torch(fname, cname, kw, n):
    """Function and module give PyTorch's value and input gradients; the module's repr matches."""
    torch = _torch()
    arrays = _inputs(fname)
    ng = 3 if fname == "triplet_margin_loss" else n - 1  # targets get no gradient
    ours = [pylucid.tensor(a, requires_grad=i < ng) for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, requires_grad=i < ng) for i, a in enumerate(arrays)]
    lo = getattr(F, fname)(*ours, **kw)
    lt = getattr(torch.nn.functional, fname)(*theirs, **kw)
    np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-10, atol=1e-12)
    lo.sum().backward()
    lt.sum().backward()
    for a, b in zip(ours, theirs):
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-12)
    mo, mt = getattr(nn, cname)(**kw), getattr(torch.nn, cname)(**kw)
    assert repr(mo) == repr(mt)
    np.testing.assert_allclose(mo(*[pylucid.tensor(a) for a in arrays]).numpy(),
                               mt(*[torch.tensor(a) for a in arrays]).numpy(), rtol=1e-10, atol=1e-12)


def test_legacy_size_average_reduce():
    """size_average/reduce map to reduction as in PyTorch (reduce=False -> 'none')."""
    assert nn.MSELoss(reduce=False).reduction == "none"
    assert nn.L1Loss(size_average=False).reduction == "sum"
    assert nn.CrossEntropyLoss(None, None, 3).ignore_index == 3  # PyTorch's positional order


def test_cross_entropy_variants_against_torch():
    """Class-probability targets, label smoothing, weights and ignore_index, (N, C, d) inputs."""
    torch = _torch()
    x = RNG.standard_normal((5, 4, 3))
    idx = RNG.integers(0, 4, (5, 3))
    idx[0, 0] = 2
    probs = RNG.dirichlet(np.ones(4), (5, 3)).transpose(0, 2, 1)
    w = RNG.uniform(0.5, 2, 4)
    for target_np in (idx, probs):
        for kw in ({}, {"label_smoothing": 0.2}, {"weight": w}, {"weight": w, "label_smoothing": 0.1},
                   {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 2}):
            if "ignore_index" in kw and target_np is probs:
                continue
            ko = {k: (pylucid.tensor(v) if k == "weight" else v) for k, v in kw.items()}
            kt = {k: (torch.tensor(v) if k == "weight" else v) for k, v in kw.items()}
            xo, xt = pylucid.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
            lo = F.cross_entropy(xo, pylucid.tensor(target_np), **ko)
            lt = torch.nn.functional.cross_entropy(xt, torch.tensor(target_np), **kt)
            np.testing.assert_allclose(lo.detach().numpy(), lt.detach().numpy(), rtol=1e-10, err_msg=str(kw))
            lo.sum().backward()
            lt.sum().backward()
            np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-12, err_msg=str(kw))
