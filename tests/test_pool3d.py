"""max_pool3d / avg_pool3d and MaxPool3d / AvgPool3d: a direct numpy reference, indices, float64
gradcheck (non-contiguous, unbatched), the gradient going to one maximum, PyTorch's numbers."""
import itertools

import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F
from pylucid.autograd import gradcheck

RNG = np.random.default_rng(19)


def _out(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    return o - 1 if ceil and (o - 1) * s >= n + p else o


def _ref(x, k, s, p, d, ceil, kind, count_include_pad=True):
    N, C = x.shape[:2]
    n = x.shape[2:]
    outs = [_out(n[i], k[i], s[i], p[i], d[i], ceil) for i in range(3)]
    y = np.zeros((N, C, *outs))
    for o in itertools.product(*map(range, outs)):
        idx, size = [], 1
        for i in range(3):
            start = o[i] * s[i] - p[i]
            taps = start + d[i] * np.arange(k[i])
            size *= min(start + k[i], n[i] + p[i]) - start
            idx.append(taps[(taps >= 0) & (taps < n[i])])
        win = x[:, :, idx[0]][:, :, :, idx[1]][:, :, :, :, idx[2]].reshape(N, C, -1)
        if kind == "max":
            y[(slice(None), slice(None)) + o] = win.max(-1)
        elif kind == "sum":
            y[(slice(None), slice(None)) + o] = win.sum(-1)
        else:
            y[(slice(None), slice(None)) + o] = win.sum(-1) / (size if count_include_pad else win.shape[-1])
    return y


CASES = [((2,) * 3, (2,) * 3, (0,) * 3, (1,) * 3, False), ((3, 2, 3), (2, 1, 2), (1, 1, 1), (1, 1, 1), True),
         ((2, 2, 2), (1, 2, 1), (0, 1, 1), (2, 1, 1), False)]


@pytest.mark.parametrize("k,s,p,d,ceil", CASES)
def test_against_reference(k, s, p, d, ceil):
    x = RNG.standard_normal((2, 2, 5, 4, 6))
    y = F.max_pool3d(pylucid.tensor(x), k, s, p, d, ceil).numpy()
    np.testing.assert_allclose(y, _ref(x, k, s, p, d, ceil, "max"))
    if d == (1, 1, 1):
        for cip in (True, False):
            y = F.avg_pool3d(pylucid.tensor(x), k, s, p, ceil, cip).numpy()
            np.testing.assert_allclose(y, _ref(x, k, s, p, d, ceil, "avg", cip), atol=1e-12)
        y = F.avg_pool3d(pylucid.tensor(x), k, s, p, ceil, True, divisor_override=3).numpy()
        np.testing.assert_allclose(y, _ref(x, k, s, p, d, ceil, "sum") / 3, atol=1e-12)


def test_indices_point_at_the_maxima_and_gradient_goes_to_one():
    x = RNG.standard_normal((1, 2, 4, 4, 4))
    y, idx = F.max_pool3d(pylucid.tensor(x), 2, return_indices=True)
    flat = x.reshape(1, 2, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(1, 2, -1), -1).reshape(y.shape),
                                  y.numpy())
    z = pylucid.zeros(1, 1, 2, 2, 2, requires_grad=True)
    F.max_pool3d(z, 2).sum().backward()
    g = z.grad.numpy().reshape(-1)
    assert g.sum() == 1.0 and g[0] == 1.0  # ties: the first element in (d, h, w) order


@pytest.mark.parametrize("k,s,p,d,ceil", CASES)
def test_gradcheck(k, s, p, d, ceil):
    x = pylucid.tensor(RNG.standard_normal((1, 2, 5, 4, 5)), requires_grad=True)
    assert gradcheck(lambda a: F.max_pool3d(a, k, s, p, d, ceil), (x,))
    assert gradcheck(lambda a: F.avg_pool3d(a, k, s, p, ceil, False), (x,))
    xt = pylucid.from_numpy(np.ascontiguousarray(RNG.standard_normal((2, 5, 4, 5)))).transpose(1, 3).requires_grad_(True)
    assert not xt.is_contiguous()
    assert gradcheck(lambda a: F.avg_pool3d(a, k, s, p, ceil), (xt,))
    assert gradcheck(lambda a: F.max_pool3d(a, k, s, p, d, ceil), (xt,))


def test_modules_and_errors():
    x = pylucid.tensor(RNG.standard_normal((1, 1, 4, 4, 4)))
    y, i = pylucid.nn.MaxPool3d(2, return_indices=True)(x)
    assert tuple(y.shape) == (1, 1, 2, 2, 2) and i.dtype == pylucid.int64
    assert repr(pylucid.nn.AvgPool3d(2)) == "AvgPool3d(kernel_size=2, stride=2, padding=0)"
    np.testing.assert_allclose(pylucid.nn.AvgPool3d(4)(x).item(), x.numpy().mean(), atol=1e-12)
    with pytest.raises(pylucid.ShapeMismatch, match="at most half"):
        F.max_pool3d(x, 2, padding=2)
    with pytest.raises(pylucid.ShapeMismatch, match="4D or 5D"):
        F.avg_pool3d(pylucid.ones(2, 2, 2), 2)
    with pytest.raises(pylucid.ShapeMismatch, match="too small"):
        F.max_pool3d(x, 5)
    with pytest.raises(pylucid.LucidError, match="divisor"):
        F.avg_pool3d(x, 2, divisor_override=0)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0), ceil_mode=True)])
def test_matches_torch(kw):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 5, 6, 7)).astype(np.float32)
    x[0, 0, :2, :2, :2] = 0.0
    for dil in (1, 2):
        tx, lx = torch.tensor(x, requires_grad=True), pylucid.tensor(x, requires_grad=True)
        (ty, ti), (ly, li) = (torch.nn.functional.max_pool3d(tx, return_indices=True, dilation=dil, **kw),
                              F.max_pool3d(lx, return_indices=True, dilation=dil, **kw))
        g = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
        (ty * torch.tensor(g)).sum().backward()
        (ly * pylucid.tensor(g)).sum().backward()
        np.testing.assert_array_equal(ly.detach().numpy(), ty.detach().numpy())
        np.testing.assert_array_equal(li.numpy(), ti.numpy())
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=1e-5)
    for cip, div in ((True, None), (False, None), (True, 5)):
        tx, lx = torch.tensor(x, requires_grad=True), pylucid.tensor(x, requires_grad=True)
        ty = torch.nn.functional.avg_pool3d(tx, count_include_pad=cip, divisor_override=div, **kw)
        ly = F.avg_pool3d(lx, count_include_pad=cip, divisor_override=div, **kw)
        g = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
        (ty * torch.tensor(g)).sum().backward()
        (ly * pylucid.tensor(g)).sum().backward()
        np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), atol=1e-6)
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=1e-6)


# ---- adaptive 3-d pooling ----------------------------------------------------------------------

def _adaptive_ref(x, out, kind):
    N, C = x.shape[:2]
    n = x.shape[2:]
    y = np.zeros((N, C) + tuple(out))
    for o in itertools.product(*map(range, out)):
        sl = tuple(slice((o[i] * n[i]) // out[i], -((-(o[i] + 1) * n[i]) // out[i])) for i in range(3))
        win = x[(slice(None), slice(None)) + sl].reshape(N, C, -1)
        y[(slice(None), slice(None)) + o] = win.max(-1) if kind == "max" else win.mean(-1)
    return y


@pytest.mark.parametrize("out", [(1, 1, 1), (2, 3, 2), (5, 4, 6), (7, 5, 8)])
def test_adaptive_against_reference_and_gradcheck(out):
    x = RNG.standard_normal((2, 2, 5, 4, 6))
    np.testing.assert_allclose(F.adaptive_avg_pool3d(pylucid.tensor(x), out).numpy(), _adaptive_ref(x, out, "avg"),
                               atol=1e-12)
    y, idx = F.adaptive_max_pool3d(pylucid.tensor(x), out, return_indices=True)
    np.testing.assert_allclose(y.numpy(), _adaptive_ref(x, out, "max"))
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 2, -1), idx.numpy().reshape(2, 2, -1), -1),
                                  y.numpy().reshape(2, 2, -1))
    xg = pylucid.tensor(RNG.standard_normal((1, 2, 3, 4, 5)), requires_grad=True)
    small = tuple(min(o, s) for o, s in zip(out, (3, 4, 5)))
    assert gradcheck(lambda a: F.adaptive_avg_pool3d(a, small), (xg,))
    assert gradcheck(lambda a: F.adaptive_max_pool3d(a, small), (xg,))


def test_adaptive_modules_none_and_errors():
    x = pylucid.tensor(RNG.standard_normal((2, 3, 4, 5)))  # unbatched (C, D, H, W)
    assert tuple(pylucid.nn.AdaptiveAvgPool3d((1, None, 2))(x).shape) == (2, 1, 4, 2)
    y, i = pylucid.nn.AdaptiveMaxPool3d(1, return_indices=True)(x)
    assert tuple(y.shape) == (2, 1, 1, 1) and i.dtype == pylucid.int64
    np.testing.assert_allclose(y.numpy().reshape(-1), x.numpy().reshape(2, -1).max(-1))
    assert repr(pylucid.nn.AdaptiveAvgPool3d(2)) == "AdaptiveAvgPool3d(output_size=2)"
    with pytest.raises(pylucid.ShapeMismatch, match="4D or 5D"):
        F.adaptive_avg_pool3d(pylucid.ones(2, 2), 1)
    with pytest.raises(pylucid.ShapeMismatch, match="tuple of 3"):
        F.adaptive_max_pool3d(x, (1, 1))


@pytest.mark.parametrize("out", [1, (2, 3, 4), (3, None, 2), (7, 9, 8)])
def test_adaptive_matches_torch(out):
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 5, 7, 6)).astype(np.float32)
    x[0, 0, :2, :2, :2] = 0.0
    for kind in ("avg", "max"):
        tx, lx = torch.tensor(x, requires_grad=True), pylucid.tensor(x, requires_grad=True)
        if kind == "avg":
            ty, ly = torch.nn.functional.adaptive_avg_pool3d(tx, out), F.adaptive_avg_pool3d(lx, out)
        else:
            (ty, ti), (ly, li) = (torch.nn.functional.adaptive_max_pool3d(tx, out, return_indices=True),
                                  F.adaptive_max_pool3d(lx, out, return_indices=True))
            np.testing.assert_array_equal(li.numpy(), ti.numpy())
        g = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
        (ty * torch.tensor(g)).sum().backward()
        (ly * pylucid.tensor(g)).sum().backward()
        np.testing.assert_allclose(ly.detach().numpy(), ty.detach().numpy(), atol=1e-6)
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=1e-5)
