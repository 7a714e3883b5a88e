"""The parametrised activations of ops/activation (leaky_relu, elu, selu, celu, softplus,
logsigmoid, hardtanh, relu6, mish, hardsigmoid, hardswish, softsign, tanhshrink, threshold,
hardshrink, softshrink) and the composed ones (glu, softmin, normalize, cosine_similarity,
pairwise_distance): numpy references, float64 gradcheck, layouts, in-place forms, errors, and
forward/backward against PyTorch where it is installed."""
import math

import numpy as np
import pylucid
import pylucid.nn as nn
import pylucid.nn.functional as F
import pytest
from helpers import check_op

SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _softplus(x, beta=1.0, th=20.0):
    return np.where(x * beta > th, x, np.log1p(np.exp(beta * x)) / beta)


# name -> (pylucid function, numpy reference); inputs are drawn in [-1, 1] and scaled by 4 so
# both sides of every kink (-3, 3, 0, +-lambd) are exercised away from the kink itself.
CASES = {
    "leaky_relu": (lambda x: F.leaky_relu(x * 4, 0.2), lambda x: np.where(x > 0, x * 4, 0.8 * x)),
    "elu": (lambda x: F.elu(x * 4, 0.7), lambda x: np.where(x > 0, 4 * x, 0.7 * np.expm1(4 * x))),
    "selu": (lambda x: F.selu(x * 4), lambda x: SELU_S * np.where(x > 0, 4 * x, SELU_A * np.expm1(4 * x))),
    "celu": (lambda x: F.celu(x * 4, 1.5),
             lambda x: np.maximum(0, 4 * x) + np.minimum(0, 1.5 * np.expm1(4 * x / 1.5))),
    "softplus": (lambda x: F.softplus(x * 4, beta=2.0, threshold=5.0), lambda x: _softplus(4 * x, 2.0, 5.0)),
    "logsigmoid": (lambda x: F.logsigmoid(x * 4), lambda x: -np.log1p(np.exp(-4 * x))),
    "hardtanh": (lambda x: F.hardtanh(x * 4, -2.0, 1.5), lambda x: np.clip(4 * x, -2.0, 1.5)),
    "relu6": (lambda x: F.relu6(x * 8), lambda x: np.clip(8 * x, 0, 6)),
    "mish": (lambda x: F.mish(x * 4), lambda x: 4 * x * np.tanh(np.log1p(np.exp(4 * x)))),
    "hardsigmoid": (lambda x: F.hardsigmoid(x * 4), lambda x: np.clip(4 * x / 6 + 0.5, 0, 1)),
    "hardswish": (lambda x: F.hardswish(x * 4), lambda x: 4 * x * np.clip(4 * x / 6 + 0.5, 0, 1)),
    "softsign": (lambda x: F.softsign(x * 4), lambda x: 4 * x / (1 + np.abs(4 * x))),
    "tanhshrink": (lambda x: F.tanhshrink(x * 4), lambda x: 4 * x - np.tanh(4 * x)),
    "threshold": (lambda x: F.threshold(x * 4, 0.5, -2.0), lambda x: np.where(4 * x > 0.5, 4 * x, -2.0)),
    "hardshrink": (lambda x: F.hardshrink(x * 4, 0.7), lambda x: np.where(np.abs(4 * x) > 0.7, 4 * x, 0)),
    "softshrink": (lambda x: F.softshrink(x * 4, 0.7),
                   lambda x: np.where(4 * x > 0.7, 4 * x - 0.7, np.where(4 * x < -0.7, 4 * x + 0.7, 0))),
    "glu": (lambda x: F.glu(x, 0), lambda x: x[:2] / (1 + np.exp(-x[2:]))),
    "softmin": (lambda x: F.softmin(x, 1),
                lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True)),
    "normalize": (lambda x: F.normalize(x, dim=1), lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)),
    "normalize_p1": (lambda x: F.normalize(x, p=1.0, dim=0), lambda x: x / np.abs(x).sum(0, keepdims=True)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy_with_gradcheck(name):
    """Forward equals the numpy formula, gradients equal finite differences (contiguous and
    transposed), and two backward calls accumulate."""
    fn, ref = CASES[name]
    check_op(fn, ref, [(4, 3)])


def test_cosine_similarity_and_pairwise_distance_broadcast():
    """cosine_similarity broadcasts (N, D) against (1, D) and its gradient is checked in float64."""
    a = pylucid.randn(5, 3, dtype=pylucid.float64, requires_grad=True)
    b = pylucid.randn(1, 3, dtype=pylucid.float64, requires_grad=True)
    got = F.cosine_similarity(a, b).detach().numpy()
    an, bn = a.detach().numpy(), b.detach().numpy()
    want = (an * bn).sum(1) / (np.linalg.norm(an, axis=1) * np.linalg.norm(bn, axis=1))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert pylucid.autograd.gradcheck(lambda x, y: F.cosine_similarity(x, y), (a, b))
    assert pylucid.autograd.gradcheck(lambda x, y: F.pairwise_distance(x, y), (a, b))


def test_empty_and_scalar_inputs():
    """Empty and 0-d tensors go through every elementwise activation (forward and backward)."""
    for name in ["leaky_relu", "elu", "softplus", "mish", "hardswish", "logsigmoid"]:
        f = getattr(F, name)
        e = pylucid.zeros(0, 3, requires_grad=True)
        f(e).sum().backward()
        assert e.grad.shape == (0, 3)
        s = pylucid.tensor(0.5, requires_grad=True)
        f(s).backward()
        assert s.grad.shape == ()


def test_inplace_forms():
    """inplace=True writes into a tensor that does not require grad (version bumped), and on a
    tensor autograd tracks returns the out-of-place result with the same gradient."""
    x = pylucid.tensor([-2.0, 0.5, 3.0])
    v = x._version
    y = F.leaky_relu(x, 0.5, inplace=True)
    assert y is x and x.tolist() == [-1.0, 0.5, 3.0] and x._version > v
    F.hardtanh(x, inplace=True)
    assert x.tolist() == [-1.0, 0.5, 1.0]
    w = pylucid.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    h = w * 1
    out = F.elu(h, inplace=True)
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [math.exp(-2.0), 1.0, 1.0], rtol=1e-6)
    r = nn.ReLU(inplace=True)(w * 1)  # a tracked intermediate: no error, same values
    assert r.tolist() == [0.0, 0.5, 3.0]
    with pytest.raises(pylucid.LucidError, match="leaf"):  # as PyTorch
        F.elu(w, inplace=True)


def test_errors():
    """Integer inputs, odd glu halves and bad parameters raise typed errors naming the op."""
    with pytest.raises(pylucid.DtypeMismatch, match="leaky_relu"):
        F.leaky_relu(pylucid.tensor([1, 2]))
    with pytest.raises(pylucid.ShapeMismatch, match="glu"):
        F.glu(pylucid.ones(2, 3))
    with pytest.raises(pylucid.LucidError, match="hardtanh"):
        F.hardtanh(pylucid.ones(2), 1.0, -1.0)
    with pytest.raises(pylucid.LucidError, match="softplus"):
        F.softplus(pylucid.ones(2), beta=0)
    with pytest.raises(pylucid.ShapeMismatch, match="cosine_similarity"):
        F.cosine_similarity(pylucid.ones(2, 3), pylucid.ones(3, 2))
    with pytest.raises(TypeError):
        F.elu("x")


def test_half_and_bfloat16():
    """Half inputs compute in float32 and return their own dtype; gradients too."""
    for dt in (pylucid.float16, pylucid.bfloat16):
        x = pylucid.tensor([-1.0, 0.5, 2.0], dtype=dt, requires_grad=True)
        y = F.mish(x)
        assert y.dtype == dt
        y.sum().backward()
        assert x.grad.dtype == dt


MODULES = [
    ("LeakyReLU", (0.2,), {}), ("ELU", (), {"alpha": 0.5}), ("SELU", (), {}), ("CELU", (), {"alpha": 2.0}),
    ("Softplus", (), {"beta": 2, "threshold": 10}), ("LogSigmoid", (), {}), ("Hardtanh", (-0.5, 0.5), {}),
    ("ReLU6", (), {}), ("Mish", (), {}), ("Hardsigmoid", (), {}), ("Hardswish", (), {}), ("Softsign", (), {}),
    ("Tanhshrink", (), {}), ("Threshold", (0.1, 20.0), {}), ("Hardshrink", (), {}), ("Softshrink", (0.3,), {}),
    ("GLU", (), {}), ("Softmin", (), {"dim": 1}), ("CosineSimilarity", (), {}), ("PairwiseDistance", (), {}),
]


@pytest.mark.parametrize("name,args,kwargs", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(name, args, kwargs):
    """Each module gives PyTorch's numbers, gradient and repr for the same arguments."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((4, 6)) * 3
    two = name in ("CosineSimilarity", "PairwiseDistance")
    y = np.random.default_rng(2).standard_normal((4, 6))
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    xa = pylucid.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    oa = ours(xa, pylucid.tensor(y)) if two else ours(xa)
    ot = theirs(xt, torch.tensor(y)) if two else theirs(xt)
    np.testing.assert_allclose(oa.detach().numpy(), ot.detach().numpy(), rtol=1e-10, atol=1e-12)
    oa.sum().backward()
    ot.sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-7, atol=1e-12)  # torch: float 1/6


def test_float32_matches_torch():
    """float32 forward and backward agree with PyTorch to float32 rounding (the vectorised exp,
    tanh and sigmoid paths)."""
    torch = pytest.importorskip("torch")
    x = (np.random.default_rng(3).standard_normal(1000) * 5).astype(np.float32)
    for name, kw in [("elu", {}), ("softplus", {}), ("mish", {}), ("logsigmoid", {}), ("selu", {}),
                     ("celu", {"alpha": 0.5}), ("tanhshrink", {}), ("softsign", {}), ("hardswish", {})]:
        xa = pylucid.tensor(x, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        ya, yt = getattr(F, name)(xa, **kw), getattr(torch.nn.functional, name)(xt, **kw)
        np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=2e-5, atol=2e-6, err_msg=name)
        ya.sum().backward()
        yt.sum().backward()
        np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=2e-5, atol=2e-6, err_msg=name)


def test_hardswish_and_softshrink_zero_sign_and_nan_as_torch():
    """Guards against hardswish below -3 and softshrink inside [-lambd, lambd] returning +0.0
    where PyTorch's x * 0 gives -0.0 for negative x (printed "-0.0000") and NaN for NaN."""
    x = pylucid.tensor([-4.0, -0.25, 0.25, float("nan")])
    hs = F.hardswish(x).tolist()
    ss = F.softshrink(x, 0.5).tolist()
    assert hs[0] == 0.0 and math.copysign(1.0, hs[0]) == -1.0 and math.isnan(hs[3])
    assert math.copysign(1.0, ss[1]) == -1.0 and math.copysign(1.0, ss[2]) == 1.0 and math.isnan(ss[3])
    assert "-0.0000" in repr(F.hardswish(pylucid.tensor([-4.0, 0.5])))
