"""special.ndtri and special.log_ndtr (values deep in both tails against PyTorch and against the
identities they satisfy, float64 gradcheck and gradgradcheck, conventions, dtypes) and
nextafter (values, gradients and errors as PyTorch's)."""
import math

import numpy as np
import pylucid
import pylucid.special as S
import pytest

RNG = np.random.default_rng(11)
PROBS = np.concatenate([[0.0, 1.0, -0.1, 1.1, 0.5, 1e-300, 5e-324, 1e-20, 1 - 1e-16, np.nan],
                        RNG.uniform(0, 1, 500), 10.0 ** -np.arange(1, 300, 3.7)])
XS = np.concatenate([[-np.inf, np.inf, np.nan, -1e10, -1e3, -38.0, -20.0, 0.0, 9.0, 40.0],
                     np.linspace(-60, 12, 721)])


def _torch():
    torch = pytest.importorskip("torch")
    return torch


def _same(ours, theirs, rtol):
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    fin = np.isfinite(theirs)
    assert np.array_equal(ours[~fin & ~np.isnan(theirs)], theirs[~fin & ~np.isnan(theirs)])
    np.testing.assert_allclose(ours[fin], theirs[fin], rtol=rtol, atol=0)


def test_ndtri_matches_torch_in_the_tails():
    torch = _torch()
    _same(S.ndtri(pylucid.tensor(PROBS)).numpy(), torch.special.ndtri(torch.tensor(PROBS)).numpy(), 1e-14)


def test_log_ndtr_matches_torch_in_the_tails():
    torch = _torch()
    _same(S.log_ndtr(pylucid.tensor(XS)).numpy(), torch.special.log_ndtr(torch.tensor(XS)).numpy(), 1e-13)


@pytest.mark.parametrize("dt", ["float32", "int64"])
def test_dtypes_match_torch(dt):
    torch = _torch()
    vals = RNG.uniform(0, 1, 50) if dt == "float32" else np.arange(-3, 4)
    for name in ("ndtri", "log_ndtr"):
        ours = getattr(S, name)(pylucid.tensor(vals, dtype=getattr(pylucid, dt)))
        theirs = getattr(torch.special, name)(torch.tensor(vals, dtype=getattr(torch, dt)))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        _same(ours.numpy(), theirs.numpy(), 2e-6)
    with pytest.raises(NotImplementedError, match="Half"):
        S.ndtri(pylucid.ones(2, dtype=pylucid.float16))


def test_identities_without_torch():
    p = pylucid.tensor(np.concatenate([RNG.uniform(0.01, 0.99, 200), 10.0 ** -np.arange(3, 300, 7.0)]))
    x = S.ndtri(p)
    # the quantile inverts log Phi to float64 accuracy, however small p is
    np.testing.assert_allclose(S.log_ndtr(x).numpy(), np.log(p.numpy()), rtol=1e-13)
    np.testing.assert_allclose(S.ndtr(x[:200]).numpy(), p.numpy()[:200], rtol=1e-14)
    # far below 0, log Phi(x) ~ -x^2/2 - log(-x) - log sqrt(2 pi)
    far = -1e4
    assert S.log_ndtr(pylucid.tensor([far], dtype=pylucid.float64)).item() == pytest.approx(
        -far * far / 2 - math.log(-far) - 0.5 * math.log(2 * math.pi), rel=1e-15)
    assert S.ndtri(pylucid.tensor([0.0, 0.5, 1.0, 2.0])).tolist()[:3] == [-math.inf, 0.0, math.inf]
    assert math.isnan(S.ndtri(pylucid.tensor([2.0])).item())


def test_gradients():
    p = pylucid.tensor([1e-3, 0.03, 0.4, 0.5, 0.9, 0.999], dtype=pylucid.float64, requires_grad=True)
    x = pylucid.tensor([-40.0, -6.0, -1.0, 0.0, 2.0, 7.0], dtype=pylucid.float64, requires_grad=True)
    for fn, arg in ((S.ndtri, p), (S.log_ndtr, x)):
        assert pylucid.autograd.gradcheck(fn, (arg,))
        assert pylucid.autograd.gradgradcheck(fn, (arg,))
    assert type(S.ndtri(p).grad_fn).__name__ == "SpecialNdtriBackward0"
    assert type(S.log_ndtr(x).grad_fn).__name__ == "SpecialLogNdtrBackward0"


def test_gradients_match_torch():
    torch = _torch()
    for name, vals in (("ndtri", [1e-300, 0.3, 0.999999]), ("log_ndtr", [-1e3, -30.0, -5.0, 0.0, 5.0, 40.0])):
        a = pylucid.tensor(vals, dtype=pylucid.float64, requires_grad=True)
        b = torch.tensor(vals, dtype=torch.float64, requires_grad=True)
        getattr(S, name)(a).sum().backward()
        getattr(torch.special, name)(b).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


def test_nextafter_matches_torch():
    torch = _torch()
    a = np.array([0.0, 1.0, -1.0, 1e-300, np.inf, np.nan, 2.0])
    b = np.array([[1.0], [-np.inf]])
    for dt in ("float32", "float64", "float16"):
        ours = pylucid.nextafter(pylucid.tensor(a, dtype=getattr(pylucid, dt)), pylucid.tensor(b, dtype=getattr(pylucid, dt)))
        theirs = torch.nextafter(torch.tensor(a, dtype=getattr(torch, dt)), torch.tensor(b, dtype=getattr(torch, dt)))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    mixed = pylucid.nextafter(pylucid.tensor([1.0]), pylucid.tensor([2.0], dtype=pylucid.float64))
    assert mixed.dtype == pylucid.float64 and mixed.item() == torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0], dtype=torch.float64)).item()


def test_nextafter_grad_method_and_errors():
    x = pylucid.tensor([0.0, 1.0], requires_grad=True)
    o = pylucid.tensor(2.0, requires_grad=True)
    y = pylucid.nextafter(x, o)
    assert type(y.grad_fn).__name__ == "NextafterBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and o.grad.item() == 0.0
    t = pylucid.tensor([1.0], dtype=pylucid.float64)
    assert t.nextafter(pylucid.tensor([0.0], dtype=pylucid.float64)).item() == np.nextafter(1.0, 0.0)
    t.nextafter_(pylucid.tensor([2.0], dtype=pylucid.float64))
    assert t.item() == np.nextafter(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="Long"):
        pylucid.nextafter(pylucid.tensor([1]), pylucid.tensor([2]))
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        pylucid.nextafter(pylucid.tensor([1.0]), 2.0)
