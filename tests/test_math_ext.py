"""log1p, expm1, erf, the rounding ops and remainder/fmod/floor_divide: forward against numpy
(and torch where installed), float64 gradcheck and gradgradcheck, dtype rules, typed errors."""
import math

import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array

_erf = np.vectorize(math.erf)

OPS = [
    ("log1p", pylucid.log1p, np.log1p),
    ("expm1", pylucid.expm1, np.expm1),
    ("erf", pylucid.erf, _erf),
    ("floor", pylucid.floor, np.floor),
    ("ceil", pylucid.ceil, np.ceil),
    ("trunc", pylucid.trunc, np.trunc),
    ("round", pylucid.round, np.round),
    ("round_decimals", lambda x: pylucid.round(x * 100, decimals=-1), lambda x: np.round(x * 100, -1)),
]
IDS = [o[0] for o in OPS]


@pytest.mark.parametrize("name,fn,ref", OPS, ids=IDS)
@pytest.mark.parametrize("shape", [(3, 4), (7,), ()])
def test_unary_forward_gradcheck(name, fn, ref, shape):
    """Guards against a wrong derivative (the rounding ops' is zero) and strided inputs read densely."""
    check_op(fn, ref, [shape])


@pytest.mark.parametrize("name", ["log1p", "expm1", "erf", "floor", "ceil", "trunc", "round"])
def test_method_and_low_precision(name):
    """Guards against the method missing or half inputs computed in 16 bits."""
    a = rand_array((4, 9), low=-0.9, high=3)
    ref = {n: r for n, _, r in OPS}[name]
    for dt, tol in [(pylucid.float32, 1e-6), (pylucid.bfloat16, 1e-2)]:
        x = pylucid.tensor(a, dtype=dt)
        out = getattr(x, name)()
        assert out.dtype == dt
        np.testing.assert_allclose(np.asarray(out.double()), ref(np.asarray(x.double())), rtol=tol, atol=tol)


def test_small_arguments_keep_accuracy():
    """Guards against log1p/expm1 computed as log(1 + x) / exp(x) - 1, which lose everything at 1e-10."""
    x = pylucid.tensor([1e-10, -1e-12], dtype=pylucid.float64)
    np.testing.assert_allclose(np.asarray(pylucid.log1p(x)), np.log1p([1e-10, -1e-12]), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(pylucid.expm1(x)), np.expm1([1e-10, -1e-12]), rtol=1e-15)


def test_rounding_dtypes_and_half_to_even():
    """Guards against integer inputs converted to float, and round() rounding half away from zero."""
    i = pylucid.tensor([3, -4])
    for f in (pylucid.floor, pylucid.ceil, pylucid.trunc):
        assert f(i).dtype == pylucid.int64 and f(i).tolist() == [3, -4]
    assert pylucid.log1p(i).dtype == pylucid.float32
    assert pylucid.round(pylucid.tensor([0.5, 1.5, 2.5, -0.5])).tolist() == [0.0, 2.0, 2.0, -0.0]
    assert pylucid.round(pylucid.tensor([1250.0, 1350.0]), decimals=-2).tolist() == [1200.0, 1400.0]
    assert pylucid.round(i).tolist() == [3, -4]  # PyTorch: int64 rounds to itself, but not with decimals
    with pytest.raises(pylucid.DtypeMismatch, match="round"):
        pylucid.round(i, decimals=1)
    with pytest.raises(pylucid.DtypeMismatch, match="floor"):
        pylucid.floor(pylucid.tensor([True]))


def test_unary_against_torch():
    """Guards against drifting from PyTorch's numbers (float32) and decimals= convention."""
    torch = pytest.importorskip("torch")
    a = rand_array((50,), low=-30, high=30).astype(np.float32)
    for name in ["log1p", "expm1", "erf", "floor", "ceil", "trunc", "round"]:
        arg = np.abs(a) if name == "log1p" else a
        ours = np.asarray(getattr(pylucid, name)(pylucid.tensor(arg)))
        theirs = getattr(torch, name)(torch.tensor(arg)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=0)
    for d in (-1, 0, 2):
        ours = np.asarray(pylucid.round(pylucid.tensor(a), decimals=d))
        np.testing.assert_array_equal(ours, torch.round(torch.tensor(a), decimals=d).numpy())


BINARY = [
    ("remainder", lambda a, b: pylucid.remainder(a, b + 2.0), lambda a, b: np.remainder(a, b + 2.0)),
    ("remainder_neg", lambda a, b: pylucid.remainder(a * 3, b - 2.0), lambda a, b: np.remainder(a * 3, b - 2.0)),
    ("fmod", lambda a, b: pylucid.fmod(a * 3, b + 2.0), lambda a, b: np.fmod(a * 3, b + 2.0)),
    ("mod_operator", lambda a, b: (a * 3) % (b - 2.0), lambda a, b: np.remainder(a * 3, b - 2.0)),
]


@pytest.mark.parametrize("name,fn,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("shapes", [[(3, 4), (3, 4)], [(2, 3, 4), (4,)], [(3, 1), (1, 5)]])
def test_modulo_forward_gradcheck_broadcast(name, fn, ref, shapes):
    """Guards against a wrong d/d(other) (-floor or -trunc of the quotient) and unsummed broadcast grads."""
    check_op(fn, ref, shapes)


def test_modulo_integers_scalars_and_signs():
    """Guards against C's truncating % used for remainder, and Python numbers on either side."""
    a = pylucid.tensor([5, -5, 7, -7])
    assert (a % 3).tolist() == [2, 1, 1, 2]
    assert pylucid.fmod(a, 3).tolist() == [2, -2, 1, -1]
    assert (a // 3).tolist() == [1, -2, 2, -3]
    assert (a // 3).dtype == pylucid.int64
    assert (7 // pylucid.tensor([2])).tolist() == [3]
    assert pylucid.remainder(-3, pylucid.tensor([5.0])).tolist() == [2.0]
    assert (pylucid.tensor([5, 7]) % 2.5).tolist() == [0.0, 2.0]
    assert pylucid.floor_divide(pylucid.tensor([-2**63]), -1).tolist() == [-2**63]
    assert pylucid.remainder(pylucid.tensor([-0.0, -5.0]), 3.0).tolist() == [-0.0, 1.0]
    x = pylucid.tensor([5.0], requires_grad=True)
    assert not pylucid.floor_divide(x, 2).requires_grad


def test_modulo_errors_leave_inputs_intact():
    """Guards against an integer division by zero trapping the process, and bool inputs accepted."""
    a = pylucid.tensor([5, -5])
    for f in (pylucid.remainder, pylucid.fmod, pylucid.floor_divide):
        with pytest.raises(pylucid.LucidError, match=f.__name__):
            f(a, pylucid.tensor([1, 0]))
        with pytest.raises(pylucid.DtypeMismatch, match=f.__name__):
            f(pylucid.tensor([True]), pylucid.tensor([True]))
        with pytest.raises(TypeError):
            f(a, "x")
    assert a.tolist() == [5, -5]
    assert np.isnan(np.asarray(pylucid.remainder(pylucid.tensor([5.0]), 0.0))).all()


def test_modulo_against_torch():
    """Guards against sign conventions drifting from PyTorch's, floats and ints."""
    torch = pytest.importorskip("torch")
    a = rand_array((40,), low=-9, high=9).astype(np.float32)
    b = rand_array((40,), low=-3, high=3).astype(np.float32)
    for name in ["remainder", "fmod", "floor_divide"]:
        ours = getattr(pylucid, name)(pylucid.tensor(a), pylucid.tensor(b))
        theirs = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
        np.testing.assert_allclose(np.asarray(ours), theirs.numpy(), rtol=1e-6, atol=1e-6)
        ai, bi = np.arange(-7, 8), np.array([3, -3, 2, -2, 5] * 3)
        ours = getattr(pylucid, name)(pylucid.tensor(ai), pylucid.tensor(bi))
        np.testing.assert_array_equal(np.asarray(ours), getattr(torch, name)(torch.tensor(ai), torch.tensor(bi)).numpy())
