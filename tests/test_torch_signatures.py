"""PyTorch's positional order, keywords and defaults for nn.functional, and the behaviours they
select: the implicit softmax dim, the legacy size_average/reduce flags, broadcasting targets,
dropout(inplace=True), RMSNorm's elementwise_affine and eps=None."""
import inspect
import warnings

import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F

# Where pylucid's signature differs from PyTorch's on purpose.
DIFFERENT = {
    # PyTorch's are *args dispatchers over return_indices; pylucid's name the arguments.
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
    # the *_with_indices forms return indices whatever the flag says, as PyTorch's do.
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "rms_norm",  # eps=1e-6 by default (the project's RMSNorm); eps=None gives PyTorch's
}


def test_functional_signatures_match_pytorch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    bad = []
    for name in sorted(n for n in dir(tf) if not n.startswith("_") and hasattr(F, n) and n not in DIFFERENT):
        try:
            ts, ls = inspect.signature(getattr(tf, name)), inspect.signature(getattr(F, name))
        except (TypeError, ValueError):
            continue
        tp = [(p.name, p.default) for p in ts.parameters.values()]
        lp = dict((p.name, p.default) for p in ls.parameters.values())
        names = [p.name for p in ls.parameters.values()]
        missing = [n for n, _ in tp if n not in lp]
        order = [n for n, _ in tp if n in lp] != [n for n in names if n in dict(tp)]
        # defaults compare by value (PyTorch writes margin=0 where pylucid writes 0.0)
        defaults = [n for n, d in tp if n in lp and d is not inspect.Parameter.empty and not (d == lp[n])]
        if missing or order or defaults:
            bad.append((name, missing, order, defaults))
    assert not bad, bad


def test_softmax_implicit_dim_is_pytorchs():
    x = pylucid.randn(2, 3, 4)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(x)
    np.testing.assert_allclose(y.sum(0).numpy(), np.ones((3, 4)), rtol=1e-6)  # 3-d: dim 0
    with pytest.warns(UserWarning):
        y4 = F.log_softmax(x[None])
    np.testing.assert_allclose(y4.exp().sum(1).numpy(), np.ones((1, 3, 4)), rtol=1e-6)  # 4-d: dim 1
    with pytest.warns(UserWarning):
        assert F.softmax(x[0]).sum(1).numpy() == pytest.approx(np.ones(3))  # 2-d: dim 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.softmax(x, dim=-1)  # an explicit dim does not warn


def test_legacy_reduction_flags():
    logits, y = pylucid.tensor([[1.0, 2.0], [0.5, -1.0]]), pylucid.tensor([0, 1])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        s = F.cross_entropy(logits, y, size_average=False)
    assert s.item() == pytest.approx(F.cross_entropy(logits, y, reduction="sum").item())
    with pytest.warns(UserWarning):
        n = F.nll_loss(F.log_softmax(logits, 1), y, reduce=False)
    assert n.shape == (2,)
    with pytest.warns(UserWarning):
        assert F.mse_loss(logits, logits * 2, size_average=False).item() == pytest.approx(
            float((logits * logits).sum()))


def test_mse_l1_weight_keyword():
    t = pylucid.tensor([1.0, 2.0, 4.0])
    w = pylucid.tensor([1.0, 0.0, 2.0])
    assert F.mse_loss(t, 2 * t, weight=w).item() == pytest.approx((1 + 0 + 32) / 3)
    assert F.l1_loss(t, 2 * t, weight=w, reduction="sum").item() == pytest.approx(1 + 0 + 8)


def test_broadcast_target_gradient_matches_expanded():
    p = pylucid.tensor([[1.0], [2.0], [3.0]], dtype=pylucid.float64, requires_grad=True)
    t = pylucid.tensor([1.0, 2.0, 4.0], dtype=pylucid.float64)
    with pytest.warns(UserWarning):
        F.mse_loss(p, t).backward()
    q = p.detach().clone().requires_grad_()
    F.mse_loss(q.expand(3, 3), t.expand(3, 3)).backward()
    np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy())


def test_kl_div_negative_target_is_nan():
    out = F.kl_div(pylucid.tensor([-1.0, -2.0, -3.0]), pylucid.tensor([0.5, 0.0, -0.1]), reduction="none")
    assert out[1].item() == 0.0 and np.isnan(out[2].item())
    assert out[0].item() == pytest.approx(0.5 * np.log(0.5) + 0.5)


def test_dropout_inplace():
    pylucid.manual_seed(0)
    x = pylucid.ones(1000)
    y = F.dropout(x, 0.5, True, True)
    assert y is x and set(x.tolist()) == {0.0, 2.0}


def test_rms_norm_pytorch_keywords():
    m = pylucid.nn.RMSNorm(4, elementwise_affine=False)
    assert m.weight is None and list(m.state_dict()) == []
    x = pylucid.randn(3, 4)
    ref = x / (x.pow(2).mean(-1, keepdim=True) + float(np.finfo(np.float32).eps)).sqrt()
    np.testing.assert_allclose(pylucid.nn.RMSNorm(4, eps=None)(x).detach().numpy(), ref.numpy(), rtol=1e-6)
    np.testing.assert_allclose(F.rms_norm(x, (4,), eps=None).numpy(), ref.numpy(), rtol=1e-6)
    assert pylucid.nn.RMSNorm(4, dtype=pylucid.float64).weight.dtype == pylucid.float64


def test_against_torch_numbers():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib_f, ref_f in [(F.softmax, torch.nn.functional.softmax), (F.log_softmax, torch.nn.functional.log_softmax)]:
            np.testing.assert_allclose(lib_f(pylucid.from_numpy(a)).numpy(), ref_f(torch.from_numpy(a)).numpy(),
                                       rtol=1e-6, atol=1e-6)
        p, t = a[:, :, :1], a[0, 0]
        for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
            got = getattr(F, name)(pylucid.from_numpy(p), pylucid.from_numpy(t)).item()
            want = getattr(torch.nn.functional, name)(torch.from_numpy(p), torch.from_numpy(t)).item()
            assert got == pytest.approx(want, rel=1e-6), name
    tn = torch.nn.RMSNorm(4, eps=None)
    np.testing.assert_allclose(pylucid.nn.RMSNorm(4, eps=None)(pylucid.from_numpy(a)).detach().numpy(),
                               tn(torch.from_numpy(a)).detach().numpy(), rtol=1e-6, atol=1e-7)
    assert repr(pylucid.nn.RMSNorm(4, eps=1e-5)) == repr(torch.nn.RMSNorm(4, eps=1e-5))


def test_view_own_dtype_is_alias():
    b = pylucid.ones(2, 3)
    v = b.view(pylucid.float32)
    assert v.shape == (2, 3) and v.dtype == pylucid.float32
    v[0, 0] = 5.0
    assert b[0, 0].item() == 5.0
    with pytest.raises(pylucid.LucidError, match="not supported"):
        b.view(pylucid.float64)


def test_numpy_scalars_are_numbers():
    x = pylucid.tensor([1.0, 2.0, 3.0])
    for v in (np.float32(2.0), np.float64(2.0), np.int64(2), np.int32(2)):
        for r in (x + v, v + x, x * v, v * x, x / v, v - x, x ** v):
            assert isinstance(r, pylucid.Tensor) and r.dtype == pylucid.float32, (type(v), r)
    assert (x > np.float32(1.5)).tolist() == [False, True, True]
    assert (x == np.int64(2)).tolist() == [False, True, False]
    i = pylucid.tensor([1, 2])
    assert (i * np.int64(3)).dtype == pylucid.int64 and (i * np.float32(0.5)).dtype == pylucid.float32
    assert (i + np.bool_(True)).tolist() == [2, 3]
