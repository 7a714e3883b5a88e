"""The trigonometric/hyperbolic/log2/log10/exp2/erfc ops, atan2 and the composites of _math_more
(lerp, addcmul, addcdiv, masked_select, meshgrid, cross, kron, tensordot, cdist, ...) and
nn.PReLU / PixelShuffle: forward against numpy (and torch where installed), float64 gradcheck and
gradgradcheck through check_op, typed errors."""
import math

import numpy as np
import pytest

import pylucid
import pylucid.nn as nn
import pylucid.nn.functional as F
from helpers import as_leaf, check_double_backward, check_op, non_contiguous, rand_array

_erfc = np.vectorize(math.erfc)

UNARY = [
    # name, fn, numpy reference, input transform keeping the argument in the domain
    ("tan", pylucid.tan, np.tan, lambda a: a),
    ("asin", pylucid.asin, np.arcsin, lambda a: a * 0.9),
    ("acos", pylucid.acos, np.arccos, lambda a: a * 0.9),
    ("atan", pylucid.atan, np.arctan, lambda a: a * 3),
    ("sinh", pylucid.sinh, np.sinh, lambda a: a * 2),
    ("cosh", pylucid.cosh, np.cosh, lambda a: a * 2),
    ("asinh", pylucid.asinh, np.arcsinh, lambda a: a * 3),
    ("acosh", pylucid.acosh, np.arccosh, lambda a: np.abs(a) + 1.5),
    ("atanh", pylucid.atanh, np.arctanh, lambda a: a * 0.9),
    ("log2", pylucid.log2, np.log2, lambda a: np.abs(a) + 0.5),
    ("log10", pylucid.log10, np.log10, lambda a: np.abs(a) + 0.5),
    ("exp2", pylucid.exp2, np.exp2, lambda a: a * 3),
    ("erfc", pylucid.erfc, _erfc, lambda a: a * 2),
]
IDS = [u[0] for u in UNARY]


@pytest.mark.parametrize("name,fn,ref,tr", UNARY, ids=IDS)
@pytest.mark.parametrize("shape", [(3, 4), (5,), ()])
def test_unary_forward_gradcheck(name, fn, ref, tr, shape):
    """Guards against a wrong derivative or second derivative, and strided inputs read densely."""
    # The domain transform is applied to the leaf's values, so gradcheck sees fn itself.
    a = np.asarray(tr(rand_array(shape)))
    np.testing.assert_allclose(np.asarray(fn(pylucid.from_numpy(a.copy()))), ref(a), rtol=1e-12, atol=1e-12)
    for leaf in (pylucid.from_numpy(a.copy()), non_contiguous(a) if a.ndim else pylucid.from_numpy(a.copy())):
        as_leaf(leaf)
        assert pylucid.autograd.gradcheck(fn, (leaf,))
    check_double_backward(fn, [as_leaf(pylucid.from_numpy(a.copy()))])


@pytest.mark.parametrize("name,fn,ref,tr", UNARY, ids=IDS)
def test_unary_method_inplace_and_dtypes(name, fn, ref, tr):
    """Guards against the method or the in-place form missing, and integers not promoting."""
    a = tr(rand_array((4, 5)))
    x = pylucid.tensor(a, dtype=pylucid.float32)
    np.testing.assert_allclose(np.asarray(getattr(x, name)()), ref(a.astype(np.float32)), rtol=2e-6, atol=1e-6)
    y = x.clone()
    assert getattr(y, name + "_")() is y
    np.testing.assert_allclose(np.asarray(y), np.asarray(getattr(x, name)()), rtol=0, atol=0)
    assert fn(pylucid.tensor([1, 2])).dtype == pylucid.float32
    b = pylucid.tensor(a, dtype=pylucid.bfloat16)
    assert fn(b).dtype == pylucid.bfloat16


def test_unary_against_torch():
    """Guards against drifting from PyTorch's float32 numbers."""
    torch = pytest.importorskip("torch")
    for name, fn, _, tr in UNARY:
        a = tr(rand_array((64,))).astype(np.float32)
        np.testing.assert_allclose(np.asarray(fn(pylucid.tensor(a))), getattr(torch, name)(torch.tensor(a)).numpy(),
                                   rtol=3e-6, atol=1e-6, err_msg=name)


def test_isinf_family_and_signbit():
    """Guards against isinf missing -inf, or signbit missing -0.0."""
    x = pylucid.tensor([1.0, float("inf"), -float("inf"), float("nan"), -0.0])
    assert pylucid.isinf(x).tolist() == [False, True, True, False, False]
    assert pylucid.isposinf(x).tolist() == [False, True, False, False, False]
    assert pylucid.isneginf(x).tolist() == [False, False, True, False, False]
    assert x.signbit().tolist() == [False, False, True, False, True]
    assert pylucid.isinf(pylucid.tensor([3, -4])).tolist() == [False, False]


def test_atan2():
    """Guards against swapped arguments, wrong quadrants and a broadcast gradient not summed."""
    check_op(pylucid.atan2, np.arctan2, [(3, 4), (4,)])
    check_op(lambda y, x: y.atan2(x), np.arctan2, [(2, 1, 3), (2, 3)])
    y = pylucid.tensor([0.0, 0.0, 1.0, -1.0])
    x = pylucid.tensor([-1.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(np.asarray(pylucid.arctan2(y, x)), np.arctan2(np.asarray(y), np.asarray(x)))
    assert pylucid.atan2(pylucid.tensor([1]), pylucid.tensor([1])).dtype == pylucid.float32


COMPOSITES = [
    ("lerp_scalar", lambda a, b: pylucid.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a), [(3, 4), (3, 4)]),
    ("lerp_high", lambda a, b: a.lerp(b, 0.8), lambda a, b: b - (b - a) * 0.2, [(3, 4), (4,)]),
    ("lerp_tensor", lambda a, b, w: pylucid.lerp(a, b, w), lambda a, b, w: a + w * (b - a), [(3, 4), (3, 4), (4,)]),
    ("addcmul", lambda a, b, c: pylucid.addcmul(a, b, c, value=0.5), lambda a, b, c: a + 0.5 * b * c,
     [(3, 4), (3, 4), (4,)]),
    ("addcdiv", lambda a, b, c: a.addcdiv(b, c.exp(), value=-2), lambda a, b, c: a - 2 * b / np.exp(c),
     [(3, 4), (3, 4), (3, 1)]),
    ("hypot", pylucid.hypot, np.hypot, [(3, 4), (4,)]),
    ("logaddexp", pylucid.logaddexp, np.logaddexp, [(3, 4), (3, 4)]),
    ("logaddexp2", pylucid.logaddexp2, np.logaddexp2, [(5,), (5,)]),
    ("cross", lambda a, b: pylucid.cross(a, b, dim=1), lambda a, b: np.cross(a, b, axis=1), [(4, 3), (4, 3)]),
    ("kron", pylucid.kron, np.kron, [(2, 3), (3, 2)]),
    ("tensordot", lambda a, b: pylucid.tensordot(a, b, dims=([1, 0], [0, 2])),
     lambda a, b: np.tensordot(a, b, axes=([1, 0], [0, 2])), [(3, 4, 2), (4, 5, 3)]),
    ("tensordot_int", lambda a, b: pylucid.tensordot(a, b, 1), lambda a, b: np.tensordot(a, b, 1), [(2, 3), (3, 4)]),
    ("cdist", pylucid.cdist,
     lambda a, b: np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)), [(4, 3), (5, 3)]),
    ("cdist_mm", lambda a, b: pylucid.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
     lambda a, b: np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)), [(4, 3), (5, 3)]),
    ("cdist_mm_batched", lambda a, b: pylucid.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
     lambda a, b: np.sqrt(((a[..., :, None, :] - b[..., None, :, :]) ** 2).sum(-1)), [(2, 4, 3), (1, 5, 3)]),
    ("cdist_p1", lambda a, b: pylucid.cdist(a, b, p=1.0),
     lambda a, b: np.abs(a[:, None, :] - b[None, :, :]).sum(-1), [(4, 3), (5, 3)]),
    ("deg2rad", pylucid.deg2rad, np.deg2rad, [(3,)]),
    ("rad2deg", lambda a: a.rad2deg(), np.rad2deg, [(3,)]),
    ("frac", lambda a: pylucid.frac(a * 5), lambda a: np.modf(a * 5)[0], [(6,)]),
    ("logit", lambda a: pylucid.logit(a.sigmoid()), lambda a: a, [(6,)]),
]


@pytest.mark.parametrize("name,fn,ref,shapes", COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composites(name, fn, ref, shapes):
    """Guards against a wrong formula, a gradient lost through a view, and missing double backward."""
    check_op(fn, ref, shapes)


def test_composites_against_torch():
    """Guards against PyTorch's defaults (cross's dim, meshgrid's indexing, lerp's evaluation)."""
    torch = pytest.importorskip("torch")
    a, b = rand_array((3, 3)).astype(np.float32), rand_array((3, 3)).astype(np.float32)
    pa, pb, ta, tb = pylucid.tensor(a), pylucid.tensor(b), torch.tensor(a), torch.tensor(b)
    # PyTorch's kernel may fuse a1*b2 - a2*b1 into one FMA: equal to one float32 rounding.
    np.testing.assert_allclose(np.asarray(pylucid.cross(pa, pb)), torch.cross(ta, tb, dim=0).numpy(), rtol=0, atol=1e-6)
    for w in (0.25, 0.75, 1.0):
        np.testing.assert_array_equal(np.asarray(pylucid.lerp(pa, pb, w)), torch.lerp(ta, tb, w).numpy())
    np.testing.assert_array_equal(np.asarray(pylucid.addcdiv(pa, pb, pa.abs() + 1, value=0.1)),
                                  torch.addcdiv(ta, tb, ta.abs() + 1, value=0.1).numpy())
    np.testing.assert_allclose(np.asarray(pylucid.cdist(pa, pb)), torch.cdist(ta, tb).numpy(), rtol=1e-5)
    x, y = pylucid.arange(3), pylucid.arange(4)
    for ix in ("ij", "xy"):
        ours = pylucid.meshgrid(x, y, indexing=ix)
        theirs = torch.meshgrid(torch.arange(3), torch.arange(4), indexing=ix)
        for o, t in zip(ours, theirs):
            assert o.tolist() == t.tolist()
    v = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert pylucid.nan_to_num(pylucid.tensor(v.numpy())).tolist() == torch.nan_to_num(v).tolist()
    assert pylucid.nan_to_num(pylucid.tensor(v.numpy()), nan=2.0, posinf=9.0).tolist() == \
        torch.nan_to_num(v, nan=2.0, posinf=9.0).tolist()


def test_masked_select_meshgrid_broadcast():
    """Guards against masked_select ignoring broadcasting and meshgrid's gradient lost."""
    x = pylucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    m = pylucid.tensor([True, False])
    out = pylucid.masked_select(x, m)
    assert out.tolist() == [1.0, 3.0]
    out.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    with pytest.raises(pylucid.DtypeMismatch, match="masked_select"):
        pylucid.masked_select(x, pylucid.tensor([1, 0]))
    a = pylucid.tensor([1.0, 2.0], requires_grad=True)
    gx, gy = pylucid.meshgrid(a, pylucid.tensor([1.0, 2.0, 3.0]), indexing="ij")
    assert gx.shape == (2, 3)
    gx.sum().backward()
    assert a.grad.tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="indexing"):
        pylucid.meshgrid(a, a, indexing="yx")



def test_broadcast_shapes_returns_size():
    """Guards against broadcast_shapes returning a plain tuple (PyTorch's prints as torch.Size)."""
    s = pylucid.broadcast_shapes((3, 1), (1, 4), (2, 1, 1))
    assert isinstance(s, pylucid.Size) and s == (2, 3, 4)
    assert repr(s) == "pylucid.Size([2, 3, 4])" and s.numel() == 24
    assert pylucid.broadcast_shapes(2, (3, 1)) == (3, 2)
    assert repr(pylucid.broadcast_shapes()) == "pylucid.Size([])"
    with pytest.raises(RuntimeError, match="broadcast_shapes"):
        pylucid.broadcast_shapes((2, 3), (3, 2))

def test_nan_to_num_gradient_and_errors():
    """Guards against the gradient flowing through replaced elements."""
    x = pylucid.tensor([1.0, float("nan"), float("inf")], requires_grad=True)
    pylucid.nan_to_num(x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0]
    assert pylucid.nan_to_num(pylucid.tensor([float("inf")], dtype=pylucid.float64)).item() == np.finfo(np.float64).max
    with pytest.raises(pylucid.ShapeMismatch, match="cross"):
        pylucid.cross(pylucid.ones(2, 2), pylucid.ones(2, 2))
    with pytest.raises(pylucid.ShapeMismatch, match="tensordot"):
        pylucid.tensordot(pylucid.ones(2, 3), pylucid.ones(2, 3), 1)


def test_inplace_composites_match_out_of_place():
    """Guards against lerp_/addcmul_/addcdiv_ (hand-written optimizers) writing a wrong value."""
    p = pylucid.tensor(rand_array((3, 4)), dtype=pylucid.float64)
    a, b = pylucid.tensor(rand_array((3, 4))), pylucid.tensor(rand_array((3, 4), positive=True))
    expected = pylucid.addcdiv(p, a, b, value=-0.01)
    assert p.addcdiv_(a, b, value=-0.01) is p
    np.testing.assert_allclose(np.asarray(p), np.asarray(expected), rtol=0, atol=1e-15)
    expected = pylucid.addcmul(p, a, a, value=0.1)
    p.addcmul_(a, a, value=0.1)
    np.testing.assert_allclose(np.asarray(p), np.asarray(expected), rtol=0, atol=1e-15)
    expected = pylucid.lerp(p, a, 0.1)
    p.lerp_(a, 0.1)
    np.testing.assert_allclose(np.asarray(p), np.asarray(expected), rtol=0, atol=1e-15)


def test_prelu_module_and_functional():
    """Guards against the slope applied at x > 0, a per-channel weight on the wrong dim, and the
    parameter name/shape of PyTorch's state_dict."""
    m = nn.PReLU(3, init=0.1)
    assert list(m.state_dict()) == ["weight"] and tuple(m.weight.shape) == (3,)
    assert repr(m) == "PReLU(num_parameters=3)"
    x = pylucid.tensor(rand_array((2, 3, 4)), dtype=pylucid.float64)
    w = pylucid.tensor([0.1, 0.2, 0.3], dtype=pylucid.float64)
    a = np.asarray(x)
    np.testing.assert_allclose(np.asarray(F.prelu(x, w)), np.where(a > 0, a, a * np.array([0.1, 0.2, 0.3])[:, None]))
    check_op(lambda t, s: F.prelu(t, s), lambda t, s: np.where(t > 0, t, t * s[:, None]), [(2, 3, 4), (3,)])
    check_op(lambda t, s: F.prelu(t, s), lambda t, s: np.where(t > 0, t, t * s), [(5,), (1,)])
    with pytest.raises(pylucid.ShapeMismatch, match="prelu"):
        F.prelu(x, pylucid.ones(2, dtype=pylucid.float64))


def test_pixel_shuffle_round_trip_and_torch():
    """Guards against the channel groups landing in the wrong block positions."""
    x = pylucid.tensor(rand_array((2, 8, 3, 5)))
    y = nn.PixelShuffle(2)(x)
    assert y.shape == (2, 2, 6, 10)
    np.testing.assert_array_equal(np.asarray(nn.PixelUnshuffle(2)(y)), np.asarray(x))
    check_op(lambda t: F.pixel_shuffle(t, 2), lambda t: t.reshape(1, 1, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3)
             .reshape(1, 1, 4, 6), [(1, 4, 2, 3)])
    torch = pytest.importorskip("torch")
    t = torch.tensor(np.asarray(x))
    np.testing.assert_array_equal(np.asarray(y), torch.nn.functional.pixel_shuffle(t, 2).numpy())


def test_variable_is_the_tensor():
    """Guards against old-style Variable(t, requires_grad=True) scripts breaking."""
    from pylucid.autograd import Variable
    t = pylucid.ones(3)
    v = Variable(t, requires_grad=True)
    assert v is t and v.requires_grad and v.is_leaf
    (v * 2).sum().backward()
    assert v.grad.tolist() == [2.0, 2.0, 2.0]
    assert Variable(pylucid.zeros(2)).requires_grad is False


def test_cdist_uses_the_matrix_product_path_as_torch():
    """Guards against cdist's p=2 distances between more than 25 points differing from PyTorch's,
    which takes |a|^2 + |b|^2 - 2 a.b there (so cdist(x, x) has a nonzero diagonal in float32),
    and against compute_mode being ignored."""
    x = pylucid.tensor(rand_array((40, 3)).astype(np.float32) * 10)
    direct = pylucid.cdist(x, x, compute_mode="donot_use_mm_for_euclid_dist")
    assert direct.diagonal().abs().max().item() == 0.0
    mm = pylucid.cdist(x, x)
    np.testing.assert_allclose(np.asarray(mm), np.asarray(direct), atol=0.05)
    xg = x.clone().requires_grad_()
    out = pylucid.cdist(xg, x[:5])
    assert type(out.grad_fn).__name__ == "ViewBackward0"
    assert type(out.grad_fn.next_functions[0][0]).__name__ == "EuclideanDistBackward0"
    with pytest.raises(RuntimeError, match="compute_mode"):
        pylucid.cdist(x, x, compute_mode="fast")
    torch = pytest.importorskip("torch")
    tx = torch.tensor(np.asarray(x))
    # Equal to PyTorch's within the rounding of the squared norms (the products' summation order
    # may differ), which the direct path is not: its diagonal is exactly zero.
    scale = 4 * np.finfo(np.float32).eps * float(torch.cdist(tx, tx).max()) ** 2
    np.testing.assert_allclose(np.asarray(mm) ** 2, torch.cdist(tx, tx).numpy() ** 2, rtol=0, atol=scale)
    assert np.asarray(mm.diagonal()).max() > 0 and torch.cdist(tx, tx).diagonal().max() > 0
    txg = tx.clone().requires_grad_()
    torch.cdist(txg, tx[:5]).pow(2).sum().backward()
    out.pow(2).sum().backward()
    np.testing.assert_allclose(np.asarray(xg.grad), txg.grad.numpy(), rtol=1e-5, atol=1e-4)
