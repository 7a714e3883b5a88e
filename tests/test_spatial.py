"""interpolate / Upsample (nearest, nearest-exact, linear, bilinear, trilinear, bicubic, area,
antialias, align_corners), the padding
modules, Dropout1d/2d, Unflatten and Flatten: numpy references written from the definitions,
float64 gradcheck, PyTorch with the same inputs where installed, and typed errors."""
import math

import numpy as np
import pylucid
import pytest
from helpers import check_op
from pylucid import nn
from pylucid.nn import functional as F

RNG = np.random.default_rng(23)


def ref_src(n_in, n_out, align, scale=None):
    """Continuous source coordinate of each output index (float64)."""
    o = np.arange(n_out, dtype=np.float64)
    if align:
        return o * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    r = 1.0 / scale if scale else n_in / n_out
    return np.maximum((o + 0.5) * r - 0.5, 0.0)


def ref_linear_matrix(n_in, n_out, align, scale=None):
    """(n_out, n_in) interpolation matrix: row o blends the two neighbours of its source."""
    m = np.zeros((n_out, n_in))
    if n_in == n_out:
        return np.eye(n_in)
    for o, s in enumerate(ref_src(n_in, n_out, align, scale)):
        i0 = min(int(math.floor(s)), n_in - 1)
        lam = min(max(s - i0, 0.0), 1.0)
        i1 = min(i0 + 1, n_in - 1)
        m[o, i0] += 1 - lam
        m[o, i1] += lam
    return m


def ref_nearest_matrix(n_in, n_out, exact=False):
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        src = (o + 0.5) * n_in / n_out if exact else o * n_in / n_out
        m[o, min(int(math.floor(src)), n_in - 1)] = 1.0
    return m


def ref_interpolate(x, sizes, mats):
    """Applies one matrix per spatial dim (last dims of x)."""
    y = x
    for i, m in enumerate(mats):
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, 2 + i, 0), axes=1), 0, 2 + i)
    return y


@pytest.mark.parametrize("shape,size,align", [((2, 3, 4, 5), (7, 3), False), ((2, 2, 4, 5), (7, 9), True),
                                              ((1, 2, 3, 3), (3, 6), False), ((1, 1, 5, 4), (1, 1), True)])
def test_bilinear_matches_numpy_and_gradchecks(shape, size, align):
    """Guards against the half-pixel offset, the clamp at 0, align_corners and the edge
    neighbour, and a gradient that does not spread back to both neighbours."""
    mats = [ref_linear_matrix(shape[2 + i], size[i], align) for i in range(2)]
    check_op(lambda x: F.interpolate(x, size=size, mode="bilinear", align_corners=align),
             lambda x: ref_interpolate(x, size, mats), [shape])


@pytest.mark.parametrize("shape,size,mode", [((2, 3, 4, 5), (8, 10), "nearest"), ((2, 3, 5, 4), (3, 7), "nearest"),
                                             ((2, 3, 5, 4), (3, 7), "nearest-exact"), ((2, 3, 7), (3,), "nearest"),
                                             ((2, 3, 7), (12,), "linear")])
def test_nearest_and_linear_match_numpy_and_gradcheck(shape, size, mode):
    """Guards against PyTorch's nearest rule (floor(dst * in / out), not rounding) and the
    gradient of repeated source pixels not summing."""
    n = len(size)
    if mode == "linear":
        mats = [ref_linear_matrix(shape[2], size[0], False)]
    else:
        mats = [ref_nearest_matrix(shape[2 + i], size[i], mode == "nearest-exact") for i in range(n)]
    check_op(lambda x: F.interpolate(x, size=size, mode=mode), lambda x: ref_interpolate(x, size, mats), [shape])


def test_scale_factor_sets_size_and_scale():
    """Guards against output sizes rounded instead of floored and against the source scale
    taken from the sizes when a scale_factor was given (PyTorch uses 1 / scale_factor)."""
    x = RNG.standard_normal((1, 1, 5, 7))
    y = F.interpolate(pylucid.tensor(x), scale_factor=(1.7, 0.6), mode="bilinear")
    assert y.shape == (1, 1, 8, 4)
    mats = [ref_linear_matrix(5, 8, False, 1.7), ref_linear_matrix(7, 4, False, 0.6)]
    np.testing.assert_allclose(np.asarray(y), ref_interpolate(x, (8, 4), mats), atol=1e-12)
    y2 = F.interpolate(pylucid.tensor(x), scale_factor=(1.7, 0.6), mode="bilinear", recompute_scale_factor=True)
    mats = [ref_linear_matrix(5, 8, False), ref_linear_matrix(7, 4, False)]
    np.testing.assert_allclose(np.asarray(y2), ref_interpolate(x, (8, 4), mats), atol=1e-12)
    assert F.interpolate(pylucid.ones(1, 1, 3, 3, 3), scale_factor=2).shape == (1, 1, 6, 6, 6)


def test_interpolate_errors():
    """Guards against silent acceptance of contradictory or impossible arguments."""
    x = pylucid.ones(1, 1, 4, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(ValueError, match="same number of spatial dimensions"):
        F.interpolate(x, size=(2, 2, 2))
    with pytest.raises(pylucid.ShapeMismatch, match="bilinear mode needs 4-D"):
        F.interpolate(pylucid.ones(1, 1, 4), size=2, mode="bilinear")
    with pytest.raises(pylucid.LucidError, match="mode 'lanczos' is not supported"):
        F.interpolate(x, size=2, mode="lanczos")
    with pytest.raises(pylucid.ShapeMismatch, match="bicubic mode needs 4-D"):
        F.interpolate(pylucid.ones(1, 1, 4), size=2, mode="bicubic")
    with pytest.raises(pylucid.ShapeMismatch, match="trilinear mode needs 5-D"):
        F.interpolate(x, size=2, mode="trilinear")
    with pytest.raises(ValueError, match="align_corners option"):
        F.interpolate(x, size=2, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(x, size=2, antialias=True)
    with pytest.raises(pylucid.ShapeMismatch, match="greater than 0"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(pylucid.DtypeMismatch, match="floating"):
        F.interpolate(pylucid.ones(1, 1, 4, 4, dtype=pylucid.int64), size=2)


def ref_cubic_matrix(n_in, n_out, align, scale=None):
    """(n_out, n_in) bicubic matrix written from Keys' kernel (A = -0.75): taps at floor(s) - 1
    .. floor(s) + 2 with weight W(s - tap), indices clamped to the edges."""
    def W(d):
        d, A = abs(d), -0.75
        return (A + 2) * d ** 3 - (A + 3) * d ** 2 + 1 if d <= 1 else (A * d ** 3 - 5 * A * d ** 2 + 8 * A * d - 4 * A
                                                                       if d < 2 else 0.0)
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        if align:
            s = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            s = (o + 0.5) * (1.0 / scale if scale else n_in / n_out) - 0.5
        f = math.floor(s)
        for tap in range(f - 1, f + 3):
            m[o, min(max(tap, 0), n_in - 1)] += W(s - tap)
    return m


def ref_area_matrix(n_in, n_out):
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        lo, hi = o * n_in // n_out, -(-(o + 1) * n_in // n_out)
        m[o, lo:hi] = 1.0 / (hi - lo)
    return m


@pytest.mark.parametrize("shape,size,align", [((2, 3, 4, 5), (7, 3), False), ((1, 2, 4, 5), (9, 9), True),
                                              ((1, 2, 6, 3), (2, 3), False), ((1, 1, 1, 3), (4, 1), True)])
def test_bicubic_matches_numpy_and_gradchecks(shape, size, align):
    """Guards against the cubic kernel's coefficients, the unclamped source coordinate (it may be
    negative), edge taps not folding onto the edge pixel, and the gradient of the blend."""
    mats = [ref_cubic_matrix(shape[2 + i], size[i], align) for i in range(2)]
    check_op(lambda x: F.interpolate(x, size=size, mode="bicubic", align_corners=align),
             lambda x: ref_interpolate(x, size, mats), [shape])


@pytest.mark.parametrize("shape,size", [((2, 3, 7), (3,)), ((2, 2, 5, 7), (3, 9)), ((1, 2, 4, 3, 5), (2, 3, 2))])
def test_area_and_trilinear_match_numpy_and_gradcheck(shape, size):
    """Guards against area mode not being adaptive average pooling (overlapping windows when
    the sizes do not divide) in 1, 2 and 3 spatial dims, and the trilinear blend."""
    mats = [ref_area_matrix(shape[2 + i], size[i]) for i in range(len(size))]
    check_op(lambda x: F.interpolate(x, size=size, mode="area"), lambda x: ref_interpolate(x, size, mats), [shape])
    if len(size) == 3:
        mats = [ref_linear_matrix(shape[2 + i], size[i], False) for i in range(3)]
        check_op(lambda x: F.interpolate(x, size=size, mode="trilinear"),
                 lambda x: ref_interpolate(x, size, mats), [shape])


@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(size=(5, 9)), dict(scale_factor=(1.5, 0.7)),
                                dict(size=(5, 9), mode="bicubic"), dict(scale_factor=(1.7, 0.6), mode="bicubic"),
                                dict(size=(3, 11), mode="bicubic", align_corners=True),
                                dict(size=(3, 4), mode="area"), dict(scale_factor=(0.5, 1.4), mode="area"),
                                dict(size=(2, 3), mode="bilinear", antialias=True),
                                dict(size=(7, 2), mode="bicubic", antialias=True),
                                dict(scale_factor=(0.4, 2.5), mode="bilinear", antialias=True, align_corners=True),
                                dict(size=(5, 9), mode="bilinear"), dict(scale_factor=3, mode="bilinear"),
                                dict(size=(2, 11), mode="bilinear", align_corners=True),
                                dict(scale_factor=(1.3, 2.6), mode="bilinear", align_corners=False),
                                dict(size=(5, 9), mode="nearest-exact")])
def test_interpolate_matches_torch(kw):
    """Guards against any index or weight difference from PyTorch's CPU kernels (float32 and
    float64), including the gradient."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 4, 6) if "antialias" not in kw else (2, 3, 9, 11))
    for dtype, tdtype, tol in [(pylucid.float32, torch.float32, 2e-6), (pylucid.float64, torch.float64, 1e-12)]:
        tx = torch.tensor(x, dtype=tdtype, requires_grad=True)
        lx = pylucid.tensor(x, dtype=dtype).requires_grad_()
        ty, ly = torch.nn.functional.interpolate(tx, **kw), F.interpolate(lx, **kw)
        assert ly.shape == tuple(ty.shape)
        g = RNG.standard_normal(tuple(ty.shape))
        ty.backward(torch.tensor(g, dtype=tdtype))
        ly.backward(pylucid.tensor(g, dtype=dtype))
        np.testing.assert_allclose(np.asarray(ly.detach()), ty.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(lx.grad), tx.grad.numpy(), rtol=tol, atol=tol * 4)


def test_trilinear_and_area_3d_match_torch():
    """Guards against the 5-D modes (trilinear with align_corners, area as adaptive_avg_pool3d)
    differing from PyTorch, including the gradient."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 2, 3, 4, 5))
    for kw in (dict(size=(5, 3, 7), mode="trilinear"), dict(scale_factor=1.6, mode="trilinear", align_corners=True),
               dict(size=(2, 3, 2), mode="area")):
        tx, lx = torch.tensor(x, requires_grad=True), pylucid.tensor(x).requires_grad_()
        ty, ly = torch.nn.functional.interpolate(tx, **kw), F.interpolate(lx, **kw)
        g = RNG.standard_normal(tuple(ty.shape))
        ty.backward(torch.tensor(g))
        ly.backward(pylucid.tensor(g))
        np.testing.assert_allclose(np.asarray(ly.detach()), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(lx.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_deprecated_upsample_functions_warn_and_match_interpolate():
    """Guards against F.upsample / upsample_nearest / upsample_bilinear missing or not being
    interpolate with PyTorch's fixed modes (bilinear with align_corners=True)."""
    x = pylucid.tensor(RNG.standard_normal((1, 2, 3, 4)))
    for fn, kw in [(F.upsample, dict(mode="bicubic")), (F.upsample_nearest, dict(mode="nearest")),
                   (F.upsample_bilinear, dict(mode="bilinear", align_corners=True))]:
        with pytest.warns(UserWarning, match="deprecated"):
            y = fn(x, size=(5, 7), **({"mode": "bicubic"} if fn is F.upsample else {}))
        np.testing.assert_array_equal(np.asarray(y), np.asarray(F.interpolate(x, size=(5, 7), **kw)))


def test_upsample_modules():
    """Guards against Upsample storing or printing its arguments differently from PyTorch."""
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    x = RNG.standard_normal((1, 2, 3, 3))
    mats = [ref_linear_matrix(3, 6, True)] * 2
    np.testing.assert_allclose(np.asarray(up(pylucid.tensor(x))), ref_interpolate(x, (6, 6), mats), atol=1e-12)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='bilinear')"
    assert repr(nn.Upsample(size=(3, 4))) == "Upsample(size=(3, 4), mode='nearest')"
    assert nn.UpsamplingNearest2d(scale_factor=2)(pylucid.ones(1, 1, 2, 3)).shape == (1, 1, 4, 6)
    np.testing.assert_allclose(np.asarray(nn.UpsamplingBilinear2d(size=6)(pylucid.tensor(x))),
                               ref_interpolate(x, (6, 6), mats), atol=1e-12)


PAD_MODULES = [
    ("ZeroPad1d", (2,), "constant", (2, 2)), ("ZeroPad2d", ((1, 2, 0, 3),), "constant", (1, 2, 0, 3)),
    ("ConstantPad1d", ((1, 3), 2.5), "constant", (1, 3)), ("ConstantPad2d", (1, -1.0), "constant", (1, 1, 1, 1)),
    ("ReflectionPad1d", (2,), "reflect", (2, 2)), ("ReflectionPad2d", ((1, 2, 2, 0),), "reflect", (1, 2, 2, 0)),
    ("ReplicationPad1d", ((3, 1),), "edge", (3, 1)), ("ReplicationPad2d", (2,), "edge", (2, 2, 2, 2)),
    ("CircularPad1d", (2,), "wrap", (2, 2)), ("CircularPad2d", ((1, 0, 2, 1),), "wrap", (1, 0, 2, 1)),
]


@pytest.mark.parametrize("name,args,np_mode,pads", PAD_MODULES)
def test_padding_modules_match_numpy(name, args, np_mode, pads):
    """Guards against the pairs applied to the wrong dims and a lost fill value."""
    m = getattr(nn, name)(*args)
    assert m.padding == pads
    k = len(pads) // 2
    x = RNG.standard_normal((2, 3, 4, 5)[:k + 2])
    widths = [(0, 0), (0, 0)] + [(pads[2 * j], pads[2 * j + 1]) for j in reversed(range(k))]
    kw = {"constant_values": args[1]} if np_mode == "constant" and len(args) > 1 else {}
    np.testing.assert_allclose(np.asarray(m(pylucid.tensor(x))), np.pad(x, widths, mode=np_mode, **kw))
    assert pylucid.autograd.gradcheck(m, [pylucid.tensor(x).requires_grad_()])


def test_padding_module_errors_name_the_layer():
    """Guards against errors that do not say which layer failed."""
    with pytest.raises(pylucid.ShapeMismatch, match="ReflectionPad1d"):
        nn.ReflectionPad1d(3)(pylucid.ones(1, 2, 3))
    with pytest.raises(pylucid.LucidError, match="CircularPad2d"):
        nn.CircularPad2d(1)(pylucid.ones(2, 2))
    with pytest.raises(pylucid.DtypeMismatch, match="ConstantPad1d"):
        nn.ConstantPad1d(1, "x")


def test_padding_and_misc_module_reprs_match_torch():
    """Guards against reprs and attributes that differ from PyTorch's."""
    torch = pytest.importorskip("torch")
    for name, args, _, _ in PAD_MODULES + [("Unflatten", (1, (2, 3)), None, None), ("Flatten", (0, 2), None, None),
                                           ("Dropout1d", (), None, None), ("Dropout2d", (0.3,), None, None),
                                           ("Identity", (), None, None), ("Upsample", (None, 2.0), None, None),
                                           ("UpsamplingBilinear2d", ((3, 4),), None, None)]:
        tm, lm = getattr(torch.nn, name)(*args), getattr(nn, name)(*args)
        assert repr(lm) == repr(tm)
        for k, v in vars(tm).items():
            if not k.startswith("_") and k != "training":
                assert getattr(lm, k) == v, (name, k)


def test_dropout2d_drops_whole_channels():
    """Guards against elementwise masks where whole channels must go, and a wrong scale."""
    pylucid.manual_seed(0)
    x = pylucid.ones(16, 32, 3, 4, requires_grad=True)
    y = F.dropout2d(x, p=0.25)
    a = np.asarray(y.detach())
    per_map = a.reshape(16, 32, -1)
    assert np.all(per_map.min(-1) == per_map.max(-1))  # constant per (n, c)
    assert set(np.unique(a).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    assert 0.1 < (per_map[:, :, 0] == 0).mean() < 0.4
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), a)
    assert F.dropout2d(x, 0.5, training=False) is x
    assert np.all(np.asarray(F.dropout2d(x, 1.0).detach()) == 0)


def test_dropout1d_unbatched_and_errors():
    """Guards against an unbatched (C, L) input dropping per element, and bad ranks accepted."""
    pylucid.manual_seed(1)
    a = np.asarray(F.dropout1d(pylucid.ones(64, 5), p=0.5))
    assert a.shape == (64, 5) and np.all(a.min(1) == a.max(1)) and 0 < (a[:, 0] == 0).sum() < 64
    b = np.asarray(nn.Dropout1d(0.5)(pylucid.ones(4, 64, 5)))
    assert np.all(b.min(2) == b.max(2))
    with pytest.raises(pylucid.ShapeMismatch, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(pylucid.ones(2, 3, 4, 5))
    with pytest.raises(ValueError, match="between 0 and 1"):
        F.dropout2d(pylucid.ones(2, 3, 4, 5), p=1.5)
    with pytest.raises(pylucid.LucidError, match="Dropout2d: dropout probability"):
        nn.Dropout2d(-0.1)
    with pytest.raises(pylucid.DtypeMismatch, match="dropout2d: expected a floating input"):
        F.dropout2d(pylucid.ones(2, 3, 4, 5, dtype=pylucid.int64))
    # eval mode: identity
    m = nn.Dropout2d(0.9).eval()
    x = pylucid.ones(2, 3, 4, 4)
    assert m(x) is x


def test_unflatten_and_flatten():
    """Guards against Unflatten not inverting Flatten (incl. -1 and negative dims)."""
    x = pylucid.tensor(RNG.standard_normal((2, 3, 4, 5)))
    f = nn.Flatten(1, 2)(x)
    assert f.shape == (2, 12, 5)
    u = nn.Unflatten(1, (3, -1))(f)
    np.testing.assert_array_equal(np.asarray(u), np.asarray(x))
    assert nn.Unflatten(-1, [5, 1])(x).shape == (2, 3, 4, 5, 1)
    assert nn.Flatten()(x).shape == (2, 60) and nn.Flatten(0, -1)(x).shape == (120,)
    with pytest.raises(pylucid.ShapeMismatch):
        nn.Unflatten(1, (4, 4))(f)
    with pytest.raises(TypeError):
        nn.Unflatten(1, 12)
    assert nn.Identity(3, k=1)(x) is x
