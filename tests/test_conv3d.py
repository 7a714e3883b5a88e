"""F.conv3d and nn.Conv3d: a direct numpy reference, float64 gradcheck/gradgradcheck (input,
weight, bias; non-contiguous and unbatched inputs), the module's init/repr/state_dict/padding
modes, PyTorch's numbers, typed errors."""
import itertools

import numpy as np
import pytest

import pylucid
import pylucid.nn.functional as F
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(13)


def _ref(x, w, b, stride, padding, dilation, groups):
    N, C, D, H, W = x.shape
    O, Cg, kD, kH, kW = w.shape
    p = padding
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1]), (p[2], p[2])))
    out_sz = [(xp.shape[2 + i] - dilation[i] * ((kD, kH, kW)[i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    y = np.zeros((N, O) + tuple(out_sz))
    og = O // groups
    for o in range(O):
        g = o // og
        for d, h, ww in itertools.product(*map(range, out_sz)):
            patch = xp[:, g * Cg:(g + 1) * Cg,
                       d * stride[0]:d * stride[0] + dilation[0] * (kD - 1) + 1:dilation[0],
                       h * stride[1]:h * stride[1] + dilation[1] * (kH - 1) + 1:dilation[1],
                       ww * stride[2]:ww * stride[2] + dilation[2] * (kW - 1) + 1:dilation[2]]
            y[:, o, d, h, ww] = (patch * w[o]).sum(axis=(1, 2, 3, 4))
    return y + (0 if b is None else b[None, :, None, None, None])


CASES = [((2, 2, 4, 5, 4), (3, 2, 2, 3, 2), dict(stride=1, padding=0, dilation=1, groups=1)),
         ((1, 4, 5, 4, 6), (4, 2, 3, 2, 3), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)),
         ((2, 1, 3, 3, 3), (2, 1, 1, 1, 1), dict(stride=2, padding=1, dilation=1, groups=1))]


@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_matches_direct_reference(xs, ws, kw):
    x, w, b = RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(ws[0])
    y = F.conv3d(pylucid.tensor(x), pylucid.tensor(w), pylucid.tensor(b), **kw).numpy()
    t3 = lambda v: v if isinstance(v, tuple) else (v,) * 3  # noqa: E731
    ref = _ref(x, w, b, t3(kw["stride"]), t3(kw["padding"]), t3(kw["dilation"]), kw["groups"])
    np.testing.assert_allclose(y, ref, atol=1e-12)


@pytest.mark.parametrize("xs,ws,kw", CASES)
def test_gradcheck(xs, ws, kw):
    x = pylucid.tensor(RNG.standard_normal(xs), requires_grad=True)
    w = pylucid.tensor(RNG.standard_normal(ws), requires_grad=True)
    b = pylucid.tensor(RNG.standard_normal(ws[0]), requires_grad=True)
    assert gradcheck(lambda a, c, d: F.conv3d(a, c, d, **kw), (x, w, b))


def test_gradgradcheck_non_contiguous_and_unbatched():
    xa = RNG.standard_normal((1, 2, 3, 4, 3))
    x = pylucid.from_numpy(np.ascontiguousarray(xa.transpose(0, 1, 4, 3, 2))).permute(0, 1, 4, 3, 2).requires_grad_(True)
    assert not x.is_contiguous()
    w = pylucid.tensor(RNG.standard_normal((2, 2, 2, 2, 2)), requires_grad=True)
    assert gradcheck(lambda a, c: F.conv3d(a, c, padding=1), (x, w))
    assert gradgradcheck(lambda a, c: F.conv3d(a, c), (x, w))
    y = F.conv3d(x[0], w, padding="same")
    assert tuple(y.shape) == (2, 3, 4, 3)
    np.testing.assert_allclose(y.detach().numpy(), F.conv3d(x, w, padding="same")[0].detach().numpy())


def test_module():
    pylucid.manual_seed(0)
    m = pylucid.nn.Conv3d(2, 4, (3, 2, 3), stride=(1, 2, 1), padding=1, bias=True)
    assert repr(m) == "Conv3d(2, 4, kernel_size=(3, 2, 3), stride=(1, 2, 1), padding=(1, 1, 1))"
    assert sorted(m.state_dict()) == ["bias", "weight"] and tuple(m.weight.shape) == (4, 2, 3, 2, 3)
    bound = 1 / np.sqrt(2 * 3 * 2 * 3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
    assert tuple(m(pylucid.ones(2, 2, 4, 5, 6)).shape) == (2, 4, 4, 3, 6)
    r = pylucid.nn.Conv3d(1, 1, 3, padding=1, padding_mode="replicate", bias=False)
    x = pylucid.tensor(RNG.standard_normal((1, 1, 3, 4, 5)))
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)), mode="edge")
    ref = _ref(xp, r.weight.detach().numpy().astype(np.float64), None, (1,) * 3, (0,) * 3, (1,) * 3, 1)
    np.testing.assert_allclose(r(x.float()).detach().numpy(), ref, rtol=1e-5, atol=1e-5)
    assert pylucid.conv3d is F.conv3d


def test_errors():
    x = pylucid.ones(1, 2, 3, 3, 3)
    with pytest.raises(pylucid.ShapeMismatch, match="channels"):
        F.conv3d(x, pylucid.ones(1, 3, 1, 1, 1))
    with pytest.raises(pylucid.ShapeMismatch, match="4D .*or 5D"):
        F.conv3d(pylucid.ones(2, 3, 3), pylucid.ones(1, 2, 1, 1, 1))
    with pytest.raises(pylucid.ShapeMismatch, match="Kernel size can't be greater"):
        F.conv3d(x, pylucid.ones(1, 2, 4, 1, 1))
    with pytest.raises(pylucid.LucidError, match="strided"):
        F.conv3d(x, pylucid.ones(1, 2, 1, 1, 1), stride=2, padding="same")
    with pytest.raises(pylucid.ShapeMismatch, match="bias"):
        F.conv3d(x, pylucid.ones(1, 2, 1, 1, 1), pylucid.ones(2))
    assert x.sum().item() == 54.0


@pytest.mark.parametrize("xs,ws,kw", CASES + [((4, 4, 4, 4), (4, 2, 2, 3, 3), dict(padding="same", dilation=2,
                                                                                  groups=2))])
def test_matches_torch(xs, ws, kw):
    torch = pytest.importorskip("torch")
    x, w, b = (RNG.standard_normal(s).astype(np.float32) for s in (xs, ws, (ws[0],)))
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    lx, lw, lb = (pylucid.tensor(a, requires_grad=True) for a in (x, w, b))
    to, lo = torch.nn.functional.conv3d(tx, tw, tb, **kw), F.conv3d(lx, lw, lb, **kw)
    np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(g)).sum().backward()
    (lo * pylucid.tensor(g)).sum().backward()
    for a, c in ((tx, lx), (tw, lw), (tb, lb)):
        np.testing.assert_allclose(c.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-4)


# ---- conv_transpose3d ----------------------------------------------------------------------

TCASES = [((1, 2, 3, 2, 3), (2, 3, 2, 2, 2), dict(stride=1, padding=0, output_padding=0, groups=1, dilation=1)),
          ((2, 4, 2, 3, 2), (4, 1, 2, 3, 2), dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1),
                                                  groups=2, dilation=(1, 2, 1)))]


@pytest.mark.parametrize("xs,ws,kw", TCASES)
def test_conv_transpose3d_is_the_adjoint_of_conv3d(xs, ws, kw):
    """<conv_transpose3d(x, w), y> == <x, conv3d(y, w)> for matching geometry."""
    x = RNG.standard_normal(xs)
    w = RNG.standard_normal(ws)
    out = F.conv_transpose3d(pylucid.tensor(x), pylucid.tensor(w), **kw)
    y = RNG.standard_normal(tuple(out.shape))
    conv_kw = {k: v for k, v in kw.items() if k != "output_padding"}
    back = F.conv3d(pylucid.tensor(y), pylucid.tensor(w), **conv_kw).numpy()
    np.testing.assert_allclose((out.numpy() * y).sum(), (x * back[:, :, :x.shape[2], :x.shape[3], :x.shape[4]]).sum(),
                               rtol=1e-10)


@pytest.mark.parametrize("xs,ws,kw", TCASES)
def test_conv_transpose3d_gradcheck(xs, ws, kw):
    x = pylucid.tensor(RNG.standard_normal(xs), requires_grad=True)
    w = pylucid.tensor(RNG.standard_normal(ws), requires_grad=True)
    b = pylucid.tensor(RNG.standard_normal(ws[1] * kw["groups"]), requires_grad=True)
    assert gradcheck(lambda a, c, d: F.conv_transpose3d(a, c, d, **kw), (x, w, b))


def test_conv_transpose3d_module_and_torch():
    m = pylucid.nn.ConvTranspose3d(4, 2, 3, stride=2, padding=1)
    assert tuple(m(pylucid.ones(1, 4, 3, 3, 3), output_size=(6, 6, 6)).shape) == (1, 2, 6, 6, 6)
    assert sorted(m.state_dict()) == ["bias", "weight"] and tuple(m.weight.shape) == (4, 2, 3, 3, 3)
    torch = pytest.importorskip("torch")
    for xs, ws, kw in TCASES:
        x, w = RNG.standard_normal(xs).astype(np.float32), RNG.standard_normal(ws).astype(np.float32)
        b = RNG.standard_normal(ws[1] * kw["groups"]).astype(np.float32)
        tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
        lx, lw, lb = (pylucid.tensor(a, requires_grad=True) for a in (x, w, b))
        to, lo = torch.nn.functional.conv_transpose3d(tx, tw, tb, **kw), F.conv_transpose3d(lx, lw, lb, **kw)
        np.testing.assert_allclose(lo.detach().numpy(), to.detach().numpy(), rtol=1e-5, atol=1e-5)
        g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
        (to * torch.tensor(g)).sum().backward()
        (lo * pylucid.tensor(g)).sum().backward()
        for a, c in ((tx, lx), (tw, lw), (tb, lb)):
            np.testing.assert_allclose(c.grad.numpy(), a.grad.numpy(), rtol=1e-4, atol=1e-4)
