"""pylucid.special and the special functions at the top level (lgamma, digamma, polygamma, i0,
sinc, xlogy, float_power, positive): values against math/numpy (and torch where installed),
float64 gradcheck and gradgradcheck (the gamma and Bessel families differentiate through each
other, so every order is available), NaN/zero/pole conventions and typed errors."""
import math

import numpy as np
import pytest

import pylucid
import pylucid.special as S
from helpers import check_double_backward, check_op

_lgamma = np.vectorize(math.lgamma)
EULER = 0.5772156649015329


def _x(*values):
    return pylucid.tensor(values, dtype=pylucid.float64)


def _i1(a):
    # the series, in long form, as an independent reference
    return np.array([sum((v / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1)) for k in range(60))
                     for v in np.ravel(a)]).reshape(np.shape(a))


DIFFERENTIABLE = [
    # name, fn, numpy reference, shapes, positive inputs
    ("lgamma", pylucid.lgamma, _lgamma, [(3, 4)], True),
    ("gammaln", S.gammaln, _lgamma, [(5,)], True),
    ("i0", pylucid.i0, np.i0, [(3, 4)], False),
    ("i1", S.i1, _i1, [(3, 4)], False),
    ("i0e", S.i0e, lambda a: np.exp(-np.abs(a)) * np.i0(a), [(3, 4)], False),
    ("i1e", S.i1e, lambda a: np.exp(-np.abs(a)) * _i1(a), [(3, 4)], False),
    ("sinc", pylucid.sinc, np.sinc, [(3, 4)], False),
    ("xlogy", pylucid.xlogy, lambda a, b: a * np.log(b), [(3, 4), (4,)], True),
    ("xlog1py", S.xlog1py, lambda a, b: a * np.log1p(b), [(3, 4), (3, 1)], True),
    ("entr", S.entr, lambda a: -a * np.log(a), [(3, 4)], True),
    ("float_power", lambda a, b: pylucid.float_power(a, b), np.power, [(3, 4), (4,)], True),
    ("ndtr", S.ndtr, lambda a: 0.5 * (1 + np.vectorize(math.erf)(a / math.sqrt(2))), [(6,)], False),
    ("expit", S.expit, lambda a: 1 / (1 + np.exp(-a)), [(6,)], False),
    ("multigammaln", lambda a: S.multigammaln(a + 2.0, 3),
     lambda a: 3 * 2 / 4 * math.log(math.pi) + sum(_lgamma(a + 2.0 - j / 2) for j in range(3)), [(4,)], True),
    ("log_softmax", lambda a: S.log_softmax(a, 1), lambda a: a - np.log(np.exp(a).sum(1, keepdims=True)),
     [(2, 5)], False),
]


@pytest.mark.parametrize("name,fn,ref,shapes,positive", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
def test_against_numpy(name, fn, ref, shapes, positive):
    """Guards against a wrong value, gradient or double backward (non-contiguous inputs included)."""
    check_op(fn, ref, shapes, positive=positive)


def test_digamma_polygamma_identities():
    """Guards against a wrong digamma/polygamma: psi(1) = -gamma, psi(x + 1) - psi(x) = 1/x,
    psi_1(1) = pi^2 / 6, psi_2(1) = -2 zeta(3), reflection for negative x."""
    assert pylucid.digamma(_x(1.0)).item() == pytest.approx(-EULER, rel=1e-14)
    x = _x(0.3, 1.7, 4.0, 25.0, -2.5)
    np.testing.assert_allclose((pylucid.digamma(x + 1) - pylucid.digamma(x)).numpy(), 1 / x.numpy(), rtol=1e-12)
    assert pylucid.polygamma(1, _x(1.0)).item() == pytest.approx(math.pi**2 / 6, rel=1e-13)
    assert pylucid.polygamma(2, _x(1.0)).item() == pytest.approx(-2 * 1.2020569031595942, rel=1e-13)
    assert pylucid.special.psi is pylucid.special.digamma and S.polygamma(0, _x(2.0)).item() == pytest.approx(1 - EULER)


def test_poles_and_limits():
    """Guards against NaN or an exception where PyTorch gives an infinity or a limit."""
    assert pylucid.lgamma(_x(0.0, -1.0)).tolist() == [math.inf, math.inf]
    d = pylucid.digamma(_x(0.0, -2.0)).tolist()
    assert d[0] == -math.inf and math.isnan(d[1])
    assert pylucid.sinc(_x(0.0)).item() == 1.0
    assert pylucid.xlogy(_x(0.0, 0.0), _x(0.0, math.nan)).tolist()[0] == 0.0
    assert math.isnan(pylucid.xlogy(_x(0.0), _x(math.nan)).item())
    e = S.entr(_x(0.0, -1.0, math.nan)).tolist()
    assert e[0] == 0.0 and e[1] == -math.inf and math.isnan(e[2])
    assert pylucid.i0(_x(0.0)).item() == 1.0 and S.i1(_x(0.0)).item() == 0.0
    big = 1e5
    assert S.i0e(_x(big)).item() == pytest.approx((1 + 1 / (8 * big)) / math.sqrt(2 * math.pi * big), rel=1e-14)
    assert S.i1e(_x(-big)).item() == pytest.approx(-(1 - 3 / (8 * big)) / math.sqrt(2 * math.pi * big), rel=1e-9)
    far = _x(-800.0, 750.0).requires_grad_()
    assert pylucid.autograd.gradcheck(S.i0e, [far]) and pylucid.autograd.gradcheck(S.i1e, [far])
    zero_d = pylucid.xlogy(pylucid.tensor(0.0), pylucid.tensor(math.nan))
    assert zero_d.shape == () and math.isnan(zero_d.item())


def test_gradients_at_the_special_points():
    """Guards against 0 * inf NaN leaking into gradients at x == 0 (xlogy, sinc, i1)."""
    x = _x(0.0, 2.0).requires_grad_()
    y = _x(0.0, 3.0).requires_grad_()
    pylucid.xlogy(x, y).sum().backward()
    assert x.grad.tolist() == [0.0, math.log(3.0)] and y.grad.tolist() == [0.0, 2.0 / 3.0]
    z = _x(0.0).requires_grad_()
    assert pylucid.autograd.grad(pylucid.sinc(z), z)[0].item() == 0.0
    assert pylucid.autograd.grad(S.i1(z), z)[0].item() == 0.5
    check_double_backward(lambda a: S.i1(a), [_x(0.0, 1.5).requires_grad_()])


def test_higher_derivatives_follow_the_family():
    """Guards against the chain lgamma -> digamma -> polygamma stopping after one derivative."""
    x = _x(1.5).requires_grad_()
    g1 = pylucid.autograd.grad(pylucid.lgamma(x), x, create_graph=True)[0]
    g2 = pylucid.autograd.grad(g1, x, create_graph=True)[0]
    g3 = pylucid.autograd.grad(g2, x)[0]
    assert g1.item() == pytest.approx(pylucid.digamma(_x(1.5)).item(), rel=1e-14)
    assert g2.item() == pytest.approx(pylucid.polygamma(1, _x(1.5)).item(), rel=1e-14)
    assert g3.item() == pytest.approx(pylucid.polygamma(2, _x(1.5)).item(), rel=1e-14)


def test_zero_dim_inputs():
    """Guards against the numpy-evaluated functions returning shape (1,) for a 0-d input."""
    s = pylucid.tensor(1.5)
    for fn in (pylucid.lgamma, pylucid.digamma, pylucid.i0, S.i1, S.i0e, S.i1e, pylucid.sinc, S.entr):
        assert fn(s).shape == (), fn
    assert pylucid.polygamma(2, s).shape == ()


def test_dtypes():
    """Guards against integer inputs not promoting, or float32 inputs coming back as float64."""
    assert pylucid.lgamma(pylucid.tensor([1, 2])).dtype == pylucid.float32
    assert pylucid.digamma(pylucid.tensor([1.0])).dtype == pylucid.float32
    assert pylucid.float_power(pylucid.tensor([2]), 3).dtype == pylucid.float64
    assert pylucid.float_power(2, pylucid.tensor([3.0])).tolist() == [8.0]
    assert pylucid.xlogy(2, pylucid.tensor([1.0, math.e])).tolist() == pytest.approx([0.0, 2.0])
    x = pylucid.tensor([1.0, -2.0])
    assert pylucid.positive(x) is x and x.lgamma().shape == (2,) and x.polygamma(1).shape == (2,)


def test_against_torch():
    """Guards against a convention PyTorch has that the references above miss."""
    torch = pytest.importorskip("torch")
    a = np.concatenate([np.linspace(-4.7, 6.3, 23), [0.0, -1.0, 1e-3, 100.0, 1e5]])
    for name, fn in [("lgamma", None), ("digamma", None), ("i0", None), ("sinc", None)]:
        want = getattr(torch, name)(torch.tensor(a)).numpy()
        np.testing.assert_allclose(getattr(pylucid, name)(pylucid.tensor(a)).numpy(), want, rtol=1e-10, atol=1e-12,
                                   equal_nan=True, err_msg=name)
    b = np.abs(a[:20]) + 0.1
    for n in (1, 2, 3, 5):
        # PyTorch's trigamma (n == 1) is accurate to about 5e-10 relative; ours to 1e-15.
        np.testing.assert_allclose(pylucid.polygamma(n, pylucid.tensor(b)).numpy(),
                                   torch.polygamma(n, torch.tensor(b)).numpy(), rtol=1e-9)
    for name in ("i1", "i0e", "i1e", "entr", "ndtr", "expit", "erf", "erfc", "expm1", "log1p", "exp2"):
        np.testing.assert_allclose(getattr(S, name)(pylucid.tensor(a)).numpy(),
                                   getattr(torch.special, name)(torch.tensor(a)).numpy(), rtol=1e-10, equal_nan=True,
                                   err_msg=name)
    np.testing.assert_allclose(S.multigammaln(pylucid.tensor(b + 2), 4).numpy(),
                               torch.special.multigammaln(torch.tensor(b + 2), 4).numpy(), rtol=1e-12)


def test_errors():
    """Guards against bad arguments passing silently."""
    with pytest.raises(RuntimeError):
        pylucid.polygamma(-1, _x(1.0))
    with pytest.raises(TypeError):
        pylucid.lgamma([1.0])
    with pytest.raises(TypeError):
        pylucid.positive(pylucid.tensor([True]))
    with pytest.raises(RuntimeError):
        S.multigammaln(_x(0.5), 3)
    # n! overflows float64 past n = 170: an infinity, not an hour-long shift loop
    assert pylucid.polygamma(2**40 + 1, _x(1.0)).item() == math.inf  # (-1)^(n+1) inf
    with pytest.raises(AttributeError):
        S.no_such_function  # noqa: B018


def test_incomplete_gamma_and_mvlgamma():
    """Guards against special.gammainc/gammaincc, torch.igamma/igammac (chi-square p-values,
    Poisson CDFs) and mvlgamma being missing, wrong, or printing another node than PyTorch's."""
    a = pylucid.tensor([0.5, 1.0, 2.0, 5.0, 10.0, 3.0], dtype=pylucid.float64)
    x = pylucid.tensor([0.1, 1.0, 3.0, 2.0, 12.0, 0.0], dtype=pylucid.float64, requires_grad=True)
    p = pylucid.special.gammainc(a, x)
    q = pylucid.special.gammaincc(a, x)
    np.testing.assert_allclose((p + q).detach().numpy(), 1.0, rtol=1e-14)
    np.testing.assert_allclose(p[1].item(), 1 - math.exp(-1.0), rtol=1e-14)  # P(1, x) = 1 - exp(-x)
    np.testing.assert_allclose(p[0].item(), math.erf(math.sqrt(0.1)), rtol=1e-13)  # P(1/2, x) = erf(sqrt x)
    tail = pylucid.special.gammaincc(pylucid.tensor([1.0, 1.0], dtype=pylucid.float64), _x(36.0, 700.0))
    np.testing.assert_allclose(tail.numpy(), [math.exp(-36.0), math.exp(-700.0)], rtol=1e-12)  # not 1 - P
    assert repr(p).endswith("grad_fn=<IgammaBackward0>)") and repr(q).endswith("grad_fn=<IgammacBackward0>)")
    assert pylucid.igamma(a, x).tolist() == p.tolist() and a.igammac(x).tolist() == q.tolist()
    assert pylucid.autograd.gradcheck(lambda v: pylucid.special.gammainc(a[:5], v), (x.detach()[:5].requires_grad_(),))
    assert pylucid.autograd.gradcheck(lambda v: pylucid.special.gammaincc(a[:5], v), (x.detach()[:5].requires_grad_(),))
    assert pylucid.special.gammainc(pylucid.tensor([2.0]), 1.0).dtype == pylucid.float32
    np.testing.assert_allclose(pylucid.mvlgamma(pylucid.tensor([2.5, 3.0]), 2).numpy(),
                               pylucid.special.multigammaln(pylucid.tensor([2.5, 3.0]), 2).numpy())
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    av, xv = rng.uniform(0.1, 30, 200), rng.uniform(0, 40, 200)
    for fn in ("gammainc", "gammaincc"):
        ours = getattr(pylucid.special, fn)(pylucid.tensor(av), pylucid.tensor(xv)).numpy()
        theirs = getattr(torch.special, fn)(torch.tensor(av), torch.tensor(xv)).numpy()
        # PyTorch's P is off by ~1e-9 for large a (against mpmath; pylucid's is within 1e-14 there)
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-300)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    (torch.special.gammainc(torch.tensor(a.numpy()), tx) * torch.arange(6.0, dtype=torch.float64)).sum().backward()
    (p * pylucid.arange(6.0, dtype=pylucid.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
