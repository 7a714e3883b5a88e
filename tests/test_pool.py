"""max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d, adaptive_max_pool1d/2d and their modules:
forward against numpy loops, float64 gradcheck and gradgradcheck (the backward is the pooling's
transposed linear map, itself differentiable), PyTorch's output-size rule incl. ceil_mode, odd
shapes, indices, NaN, PyTorch with the same inputs where installed, and typed errors naming the layer."""
import itertools
import math

import numpy as np
import pylucid
import pytest
from helpers import check_op
from pylucid import nn
from pylucid.nn import functional as F

RNG = np.random.default_rng(17)


def _t(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def out_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape, written from its definition."""
    num = n + 2 * p - d * (k - 1) - 1
    o = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def ref_max_pool(x, k, s=None, p=0, d=1, ceil_mode=False, dims=2):
    """Max over each dilated window of the -inf padded input; also the flat argmax (first max)."""
    k, s, p, d = _t(k, dims), _t(s if s is not None else k, dims), _t(p, dims), _t(d, dims)
    sp = x.shape[-dims:]
    outs = [out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(dims)]
    lead = x.shape[:-dims]
    y = np.empty(lead + tuple(outs))
    idx = np.empty(lead + tuple(outs), dtype=np.int64)
    for o in itertools.product(*[range(n) for n in outs]):
        taps = [[o[i] * s[i] - p[i] + t * d[i] for t in range(k[i]) if 0 <= o[i] * s[i] - p[i] + t * d[i] < sp[i]]
                for i in range(dims)]
        best = np.full(lead, -np.inf)
        bi = np.zeros(lead, dtype=np.int64)
        for pos in itertools.product(*taps):
            v = x[(Ellipsis,) + pos]
            flat = pos[0] * sp[1] + pos[1] if dims == 2 else pos[0]
            take = v > best
            best = np.where(take, v, best)
            bi = np.where(take, flat, bi)
        y[(Ellipsis,) + o] = best
        idx[(Ellipsis,) + o] = bi
    return y, idx


def ref_avg_pool(x, k, s=None, p=0, ceil_mode=False, count_include_pad=True, divisor_override=None, dims=2):
    k, s, p = _t(k, dims), _t(s if s is not None else k, dims), _t(p, dims)
    sp = x.shape[-dims:]
    outs = [out_size(sp[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(dims)]
    y = np.empty(x.shape[:-dims] + tuple(outs))
    for o in itertools.product(*[range(n) for n in outs]):
        lo = [o[i] * s[i] - p[i] for i in range(dims)]
        hi = [min(lo[i] + k[i], sp[i] + p[i]) for i in range(dims)]
        padded = math.prod(hi[i] - lo[i] for i in range(dims))
        sl = tuple(slice(max(lo[i], 0), min(hi[i], sp[i])) for i in range(dims))
        win = x[(Ellipsis,) + sl]
        div = divisor_override or (padded if count_include_pad else math.prod(win.shape[-dims:]))
        y[(Ellipsis,) + o] = win.sum(axis=tuple(range(-dims, 0))) / div
    return y


def ref_adaptive(x, out, kind, dims=2):
    sp = x.shape[-dims:]
    out = [sp[i] if v is None else v for i, v in enumerate(_t(out, dims))]
    y = np.empty(x.shape[:-dims] + tuple(out))
    for o in itertools.product(*[range(n) for n in out]):
        sl = tuple(slice(o[i] * sp[i] // out[i], -(-(o[i] + 1) * sp[i] // out[i])) for i in range(dims))
        win = x[(Ellipsis,) + sl]
        ax = tuple(range(-dims, 0))
        y[(Ellipsis,) + o] = win.max(axis=ax) if kind == "max" else win.mean(axis=ax)
    return y


def _ref_kw(kw, dims):
    return dict(k=kw["kernel_size"], s=kw.get("stride"), p=kw.get("padding", 0), d=kw.get("dilation", 1),
                ceil_mode=kw.get("ceil_mode", False), dims=dims)


MAX2D_CASES = [
    ((2, 3, 6, 5), dict(kernel_size=2)),
    ((2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 7, 7), dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), dilation=(2, 1))),
    ((2, 2, 5, 6), dict(kernel_size=2, stride=2, ceil_mode=True)),           # ceil: partial last window
    ((1, 1, 6, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),  # ceil rule drops a pad-only window
    ((2, 2, 2, 3), dict(kernel_size=3, padding=1)),                          # kernel larger than the input, padded
    ((1, 2, 7, 7), dict(kernel_size=2, stride=3)),                           # stride larger than the kernel
    ((3, 5, 4), dict(kernel_size=2, stride=1)),                              # unbatched
    ((0, 2, 4, 4), dict(kernel_size=2)),                                     # empty batch
    ((1, 1, 1, 1), dict(kernel_size=1)),                                     # size 1
]


@pytest.mark.parametrize("shape,kw", MAX2D_CASES)
def test_max_pool2d_matches_numpy_and_gradchecks(shape, kw):
    """Guards against wrong window offsets (stride, padding, dilation), a wrong ceil_mode size,
    gradients routed to the wrong element, and a backward that cannot be differentiated again."""
    check_op(lambda x: F.max_pool2d(x, **kw), lambda x: ref_max_pool(x, **_ref_kw(kw, 2))[0], [shape])


def test_max_pool2d_indices_and_names():
    """Guards against indices that are not PyTorch's flat h * W + w positions."""
    x = RNG.standard_normal((2, 3, 7, 6))
    y, idx = F.max_pool2d(pylucid.tensor(x), 3, stride=2, padding=1, return_indices=True)
    ry, ridx = ref_max_pool(x, 3, 2, 1)
    np.testing.assert_array_equal(np.asarray(idx), ridx)
    np.testing.assert_allclose(np.asarray(y), ry)
    assert idx.dtype == pylucid.int64
    y = F.max_pool2d(pylucid.tensor(x).requires_grad_(), 2)
    assert y.grad_fn.name() == "MaxPool2DWithIndicesBackward"
    assert y.grad_fn.schema.name == "pool" and pylucid.autograd.PoolBackward.schema_v1.name == "pool"


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 9), dict(kernel_size=3, stride=2, padding=1)),
    ((1, 2, 8), dict(kernel_size=2, dilation=3, ceil_mode=True)),
    ((2, 7), dict(kernel_size=4, stride=1)),
])
def test_max_pool1d_matches_numpy_and_gradchecks(shape, kw):
    """Guards against the 1-d path (H = 1) applying sizes to the wrong dim."""
    check_op(lambda x: F.max_pool1d(x, **kw), lambda x: ref_max_pool(x, **_ref_kw(kw, 1))[0], [shape])
    y, idx = F.max_pool1d(pylucid.tensor(RNG.standard_normal(shape)), return_indices=True, **kw)
    assert idx.shape == y.shape


AVG_CASES = [
    ((2, 3, 6, 5), dict(kernel_size=2)),
    ((2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1)),
    ((2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    ((1, 2, 5, 6), dict(kernel_size=(3, 2), stride=2, padding=(1, 0), ceil_mode=True)),
    ((1, 2, 5, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ((1, 2, 5, 5), dict(kernel_size=2, divisor_override=3)),
    ((1, 1, 2, 2), dict(kernel_size=3, padding=1)),   # kernel larger than the input, padded
    ((2, 2, 7, 7), dict(kernel_size=2, stride=3)),    # stride larger than the kernel
    ((3, 4, 4), dict(kernel_size=2)),                 # unbatched
    ((0, 2, 4, 4), dict(kernel_size=2)),              # empty batch
]


@pytest.mark.parametrize("shape,kw", AVG_CASES)
def test_avg_pool2d_matches_numpy_and_gradchecks(shape, kw):
    """Guards against the wrong divisor at the borders (count_include_pad, ceil_mode windows
    reaching past the padding, divisor_override) and a wrong spread-back in backward."""
    ref_kw = dict(k=kw["kernel_size"], s=kw.get("stride"), p=kw.get("padding", 0),
                  ceil_mode=kw.get("ceil_mode", False), count_include_pad=kw.get("count_include_pad", True),
                  divisor_override=kw.get("divisor_override"))
    check_op(lambda x: F.avg_pool2d(x, **kw), lambda x: ref_avg_pool(x, **ref_kw), [shape])


def test_avg_pool1d_matches_numpy_and_gradchecks():
    """Guards against the 1-d average path and its count_include_pad divisor."""
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    check_op(lambda x: F.avg_pool1d(x, **kw),
             lambda x: ref_avg_pool(x, 3, 2, 1, True, False, dims=1), [(2, 3, 8)])


@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), (3, 2)), ((1, 2, 4, 4), 1), ((2, 5, 6), (4, None)),
                                       ((1, 1, 3, 3), 5), ((2, 2, 5, 5), (0, 2))])
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool2d_matches_numpy_and_gradchecks(shape, out, kind):
    """Guards against adaptive windows rounded the wrong way (overlapping windows when the
    output does not divide the input, outputs larger than the input, None keeping a dim)."""
    fn = F.adaptive_avg_pool2d if kind == "avg" else F.adaptive_max_pool2d
    check_op(lambda x: fn(x, out), lambda x: ref_adaptive(x, out, kind), [shape])


@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool1d_matches_numpy_and_gradchecks(kind):
    """Guards against the 1-d adaptive path."""
    fn = F.adaptive_avg_pool1d if kind == "avg" else F.adaptive_max_pool1d
    check_op(lambda x: fn(x, 3), lambda x: ref_adaptive(x, 3, kind, dims=1), [(2, 3, 7)])


def test_max_pool_nan_wins_and_float32():
    """Guards against NaN being skipped by the max (PyTorch propagates it) and float32 or
    float16 inputs not keeping their dtype."""
    x = pylucid.tensor([[[1.0, float("nan"), 3.0, 2.0]]])
    y, idx = F.max_pool1d(x, 2, return_indices=True)
    assert math.isnan(y.tolist()[0][0][0]) and idx.tolist() == [[[1, 2]]]
    for dt in (pylucid.float32, pylucid.float16, pylucid.bfloat16):
        z = F.max_pool2d(pylucid.ones(1, 1, 4, 4, dtype=dt), 2)
        assert z.dtype == dt and z.shape == (1, 1, 2, 2)
        assert F.avg_pool2d(pylucid.ones(1, 1, 4, 4, dtype=dt), 2).dtype == dt


def test_max_pool2d_2x2_windows_keep_the_rules():
    """Guards against the unrolled 2 x 2 / stride 2 path breaking PyTorch's rules: the first
    maximum wins a tie, a NaN wins (a later NaN replaces an earlier one), an all -inf window
    reports its first tap; an odd edge row/column is dropped."""
    inf, nan = float("inf"), float("nan")
    x = np.array([[1.0, 3.0, -inf, -inf, 2.0, nan, 0.0],
                  [3.0, 2.0, -inf, -inf, nan, 5.0, 0.0],
                  [9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0]])
    y, idx = F.max_pool2d(pylucid.tensor(x[None, None]), 2, return_indices=True)
    assert idx.tolist() == [[[[1, 2, 11]]]]  # PyTorch's too
    np.testing.assert_array_equal(np.asarray(y), [[[[3.0, -inf, nan]]]])
    # the same windows through the general path (stride 1 is not the tiled case)
    y1, idx1 = F.max_pool2d(pylucid.tensor(x[None, None]), 2, stride=1, return_indices=True)
    np.testing.assert_array_equal(np.asarray(idx1)[:, :, :1, ::2], np.asarray(idx))
    check_op(lambda t: F.max_pool2d(t, 2), lambda t: ref_max_pool(t, 2)[0], [(2, 3, 6, 7)])


def test_modules_attributes_and_repr():
    """Guards against modules that drop an argument or print differently from PyTorch."""
    m = nn.MaxPool2d(3, 2, 1, ceil_mode=True)
    assert repr(m) == "MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=True)"
    x = pylucid.tensor(RNG.standard_normal((2, 3, 8, 9)))
    np.testing.assert_allclose(np.asarray(m(x)), ref_max_pool(np.asarray(x), 3, 2, 1, ceil_mode=True)[0])
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"
    assert repr(nn.AdaptiveAvgPool2d((2, None))) == "AdaptiveAvgPool2d(output_size=(2, None))"
    y, idx = nn.AdaptiveMaxPool2d(2, return_indices=True)(x)
    assert y.shape == idx.shape == (2, 3, 2, 2)
    y, idx = nn.MaxPool1d(2, return_indices=True)(pylucid.ones(2, 3, 6))
    assert y.shape == (2, 3, 3)
    assert nn.AvgPool2d(2, divisor_override=1)(pylucid.ones(1, 1, 2, 2)).tolist() == [[[[4.0]]]]
    assert nn.AdaptiveAvgPool1d(2)(pylucid.ones(3, 4)).shape == (3, 2)
    assert nn.AdaptiveMaxPool1d(2)(pylucid.ones(3, 4)).shape == (3, 2)


def test_errors_name_the_layer():
    """Guards against crashes or untyped errors on bad input."""
    with pytest.raises(pylucid.ShapeMismatch, match="MaxPool2d: expected a 3-D .* or 4-D"):
        nn.MaxPool2d(2)(pylucid.ones(4, 4))
    with pytest.raises(pylucid.ShapeMismatch, match="MaxPool2d: given input size: .1x2x2.*too small"):
        nn.MaxPool2d(3)(pylucid.ones(1, 1, 2, 2))
    with pytest.raises(pylucid.LucidError, match="max_pool2d: pad should be at most half"):
        F.max_pool2d(pylucid.ones(1, 1, 5, 5), 3, padding=2)
    with pytest.raises(pylucid.LucidError, match="AvgPool2d: stride must be greater than zero"):
        nn.AvgPool2d(2, stride=0)(pylucid.ones(1, 1, 4, 4))
    with pytest.raises(pylucid.LucidError, match="divisor must be not zero"):
        F.avg_pool2d(pylucid.ones(1, 1, 4, 4), 2, divisor_override=0)
    with pytest.raises(pylucid.ShapeMismatch, match="non-zero sizes"):
        F.max_pool2d(pylucid.ones(1, 0, 4, 4), 2)
    with pytest.raises(pylucid.DtypeMismatch, match="avg_pool1d: expected a floating input"):
        F.avg_pool1d(pylucid.ones(1, 2, 4, dtype=pylucid.int64), 2)
    with pytest.raises(pylucid.LucidError, match="AdaptiveAvgPool2d: output_size must be non-negative"):
        nn.AdaptiveAvgPool2d(-1)(pylucid.ones(1, 1, 4, 4))
    with pytest.raises(pylucid.ShapeMismatch, match="output_size must be an int or a tuple of 2"):
        F.adaptive_max_pool2d(pylucid.ones(1, 1, 4, 4), (1, 2, 3))
    with pytest.raises(TypeError, match="kernel_size"):
        F.max_pool2d(pylucid.ones(1, 1, 4, 4), "2")


TORCH_CASES = [
    ("max_pool2d", (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", (2, 3, 10, 7), dict(kernel_size=(2, 3), stride=(3, 1), dilation=(2, 2), padding=(1, 0))),
    ("max_pool1d", (2, 3, 11), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    ("avg_pool2d", (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("avg_pool2d", (2, 3, 9, 8), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", (2, 3, 6, 6), dict(kernel_size=2, divisor_override=5)),
    ("avg_pool1d", (2, 3, 11), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True, count_include_pad=False)),
    ("adaptive_avg_pool2d", (2, 3, 9, 7), dict(output_size=(4, 5))),
    ("adaptive_avg_pool1d", (2, 3, 10), dict(output_size=4)),
    ("adaptive_max_pool2d", (2, 3, 9, 7), dict(output_size=(4, None))),
    ("adaptive_max_pool1d", (2, 3, 10), dict(output_size=7)),
]


@pytest.mark.parametrize("name,shape,kw", TORCH_CASES)
def test_matches_torch(name, shape, kw):
    """Guards against any convention difference from PyTorch: sizes, values, indices and the
    input gradient, in float32 and float64."""
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal(shape)
    g = None
    for dtype, tdtype, tol in [(pylucid.float32, torch.float32, 1e-6), (pylucid.float64, torch.float64, 1e-12)]:
        tx = torch.tensor(x, dtype=tdtype, requires_grad=True)
        lx = pylucid.tensor(x, dtype=dtype).requires_grad_()
        extra = {"return_indices": True} if "max" in name else {}
        ty = getattr(torch.nn.functional, name)(tx, **kw, **extra)
        ly = getattr(F, name)(lx, **kw, **extra)
        if extra:
            (ty, ti), (ly, li) = ty, ly
            np.testing.assert_array_equal(np.asarray(li), ti.numpy())
        assert ly.shape == tuple(ty.shape)
        if g is None:
            g = RNG.standard_normal(tuple(ty.shape))
        ty.backward(torch.tensor(g, dtype=tdtype))
        ly.backward(pylucid.tensor(g, dtype=dtype))
        np.testing.assert_allclose(np.asarray(ly.detach()), ty.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(np.asarray(lx.grad), tx.grad.numpy(), rtol=tol, atol=tol)


def test_module_reprs_match_torch():
    """Guards against reprs and attributes that differ from PyTorch's."""
    torch = pytest.importorskip("torch")
    for args, kw in [("MaxPool1d", (3,)), ("MaxPool2d", ((2, 3), 1)), ("AvgPool1d", (3, 2, 1)), ("AvgPool2d", (2,)),
                     ("AdaptiveAvgPool1d", (3,)), ("AdaptiveAvgPool2d", ((2, None),)), ("AdaptiveMaxPool1d", (2,)),
                     ("AdaptiveMaxPool2d", (2, True))]:
        tm, lm = getattr(torch.nn, args)(*kw), getattr(nn, args)(*kw)
        assert repr(lm) == repr(tm)
        for k, v in vars(tm).items():
            if not k.startswith("_") and k != "training":
                assert getattr(lm, k) == v, (args, k)


def test_fractional_max_pool2d_windows_gradients_and_errors():
    """Guards against nn.FractionalMaxPool2d / F.fractional_max_pool2d missing or choosing other
    windows than PyTorch's generate_intervals for the same random samples (and the same default
    draw), a gradient not reaching each window's maximum, and bad sizes not raising."""
    pylucid.manual_seed(0)
    x = pylucid.randn(2, 3, 9, 11, dtype=pylucid.float64)
    s = pylucid.rand(2, 3, 2, dtype=pylucid.float64)
    out, idx = pylucid.nn.functional.fractional_max_pool2d(x, 2, output_size=(4, 5), return_indices=True,
                                                           _random_samples=s)
    flat = x.reshape(2, 3, -1)
    assert out.shape == (2, 3, 4, 5) and idx.dtype == pylucid.int64
    np.testing.assert_array_equal(out.reshape(2, 3, -1).numpy(), flat.gather(2, idx.reshape(2, 3, -1)).numpy())
    assert pylucid.autograd.gradcheck(lambda t: pylucid.nn.functional.fractional_max_pool2d(t, (3, 2), output_size=(3, 4),
                                                                            _random_samples=s),
                     [x.clone().requires_grad_()])
    m = pylucid.nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert m(pylucid.randn(1, 2, 10, 12)).shape == (1, 2, 5, 6) and m(pylucid.randn(2, 8, 8)).shape == (2, 4, 4)
    with pytest.raises(ValueError):
        pylucid.nn.FractionalMaxPool2d(2)
    with pytest.raises(ValueError):
        pylucid.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(RuntimeError, match="too large"):
        pylucid.nn.functional.fractional_max_pool2d(x, 4, output_size=7)
    torch = pytest.importorskip("torch")
    for dt in ("float32", "float64"):
        pylucid.manual_seed(3)
        torch.manual_seed(3)
        a = pylucid.randn(2, 3, 9, 11, dtype=getattr(pylucid, dt))
        b = torch.randn(2, 3, 9, 11, dtype=getattr(torch, dt))
        ours = pylucid.nn.functional.fractional_max_pool2d(a, 2, output_size=(4, 5), return_indices=True)
        theirs = torch.nn.functional.fractional_max_pool2d(b, 2, output_size=(4, 5), return_indices=True)
        assert ours[1].tolist() == theirs[1].tolist() and ours[0].tolist() == theirs[0].tolist()
