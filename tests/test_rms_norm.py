"""rms_norm / RMSNorm / RMSNormBackward: forward against a numpy composite, float64 gradcheck,
partial RMSNorm, the node's Python surface, dtypes, the nn module, every bad input, and PyTorch
where it is installed."""
import math

import numpy as np
import pylucid
import pytest
from helpers import check_op
from pylucid.autograd import RMSNormBackward
from pylucid.nn import functional as F

RNG = np.random.default_rng(1)


def k_of(n, ratio):
    return n if ratio == 0 else max(1, math.ceil(n * ratio))


def ref_rms_norm(x, d, w=None, eps=1e-6, ratio=0.0):
    """The composite fallback: mean of squares over the first k of the last d dims (flattened)."""
    lead = x.shape[: x.ndim - d]
    flat = x.reshape(lead + (-1,))
    k = k_of(flat.shape[-1], ratio)
    ms = (flat[..., :k].astype(np.float64) ** 2).mean(-1, keepdims=True)
    y = (flat / np.sqrt(ms + eps)).reshape(x.shape)
    return y * w if w is not None else y


def ref_backward(x, d, w, g, eps=1e-6, ratio=0.0):
    """Closed form in numpy: (dx, dw) for upstream gradient g."""
    lead = x.shape[: x.ndim - d]
    xf, gf = x.reshape(lead + (-1,)), g.reshape(lead + (-1,))
    n = xf.shape[-1]
    k = k_of(n, ratio)
    wf = np.ones(n) if w is None else w.reshape(-1)
    r = 1 / np.sqrt((xf[..., :k] ** 2).mean(-1, keepdims=True) + eps)
    gy = gf * wf
    dot = (gy * xf).sum(-1, keepdims=True)
    dx = r * gy
    dx[..., :k] -= xf[..., :k] * r**3 * dot / k
    dw = (gf * xf * r).reshape(-1, n).sum(0).reshape(() if w is None else w.shape)
    return dx.reshape(x.shape), dw


def t64(a, requires_grad=False):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), dtype=pylucid.float64, requires_grad=requires_grad)


# ---- forward and gradients ---------------------------------------------------------------

CASES = [  # (x shape, normalized dims d)
    ((5,), 1), ((3, 4), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 2, 3, 2), 2), ((2, 1, 2, 3), 3),
]


@pytest.mark.parametrize("shape,d", CASES)
def test_forward_gradcheck_noncontiguous_accumulation(shape, d):
    """Guards against wrong normalised dims (1-D and multi-dim normalized_shape, 1- to 4-D
    inputs), a wrong closed-form gradient, strided inputs read as contiguous, and .grad being
    overwritten instead of accumulated."""
    ns = shape[len(shape) - d:]
    check_op(lambda x, w: F.rms_norm(x, ns, w), lambda x, w: ref_rms_norm(x, d, w), [shape, ns])


@pytest.mark.parametrize("shape,d", [((3, 4), 1), ((2, 3, 4), 2)])
def test_without_weight(shape, d):
    """Guards against weight=None being read as a gain (or crashing) and a d_gamma slot being
    expected from a node with no gamma."""
    ns = shape[len(shape) - d:]
    check_op(lambda x: F.rms_norm(x, ns), lambda x: ref_rms_norm(x, d), [shape])
    x = t64(RNG.standard_normal(shape), requires_grad=True)
    y = F.rms_norm(x, ns)
    assert y.grad_fn.next_functions[1] == (None, 0)


def test_float32_matches_reference():
    """Guards against a float32 kernel path (the AVX2 one on most machines) diverging from the
    float64 math beyond float32 rounding, on rows longer than the vector lanes with a tail."""
    x = RNG.standard_normal((7, 77)).astype(np.float32)
    w = RNG.standard_normal(77).astype(np.float32)
    y = F.rms_norm(pylucid.from_numpy(x), 77, pylucid.from_numpy(w))
    assert y.dtype == pylucid.float32
    np.testing.assert_allclose(np.asarray(y), ref_rms_norm(x.astype(np.float64), 1, w), rtol=2e-6, atol=2e-6)


def test_size_one_feature():
    """Guards against N = 1 (every row normalised by its own magnitude) hitting a zero-length
    reduction or a division by N - 1."""
    check_op(lambda x, w: F.rms_norm(x, 1, w), lambda x, w: ref_rms_norm(x, 1, w), [(3, 1), (1,)])


def test_empty_outer_dim():
    """Guards against an input with no rows (0, N) crashing the kernel or giving d_gamma garbage
    instead of zeros."""
    x = t64(np.zeros((0, 4)), requires_grad=True)
    w = t64(np.ones(4), requires_grad=True)
    y = F.rms_norm(x, 4, w)
    assert y.shape == (0, 4) and y.grad_fn.outer == 0 and y.grad_fn.saved_rstd.shape == (0,)
    y.sum().backward()
    assert x.grad.shape == (0, 4)
    np.testing.assert_array_equal(np.asarray(w.grad), np.zeros(4))


def test_large_input_uses_chunks_and_stays_exact():
    """Guards against the threaded path (rows split in chunks, d_gamma partial sums combined)
    losing or double-counting rows: compared with the numpy closed form on float64."""
    x = RNG.standard_normal((300, 512))
    w = RNG.standard_normal(512)
    g = RNG.standard_normal((300, 512))
    xt, wt = t64(x, True), t64(w, True)
    y = F.rms_norm(xt, 512, wt)
    np.testing.assert_allclose(np.asarray(y.detach()), ref_rms_norm(x, 1, w), rtol=1e-12, atol=1e-12)
    dx, dw = pylucid.autograd.grad(y, (xt, wt), t64(g))
    rdx, rdw = ref_backward(x, 1, w, g)
    np.testing.assert_allclose(np.asarray(dx), rdx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(dw), rdw, rtol=1e-10, atol=1e-10)


def test_backward_is_deterministic():
    """Guards against d_gamma depending on thread scheduling (partial sums must be combined in
    a fixed order): two runs must agree bit for bit."""
    x = pylucid.from_numpy(RNG.standard_normal((512, 256)).astype(np.float32)).requires_grad_()
    w = pylucid.from_numpy(RNG.standard_normal(256).astype(np.float32)).requires_grad_()
    g = pylucid.from_numpy(RNG.standard_normal((512, 256)).astype(np.float32))
    runs = [pylucid.autograd.grad(F.rms_norm(x, 256, w), (x, w), g) for _ in range(3)]
    for dx, dw in runs[1:]:
        np.testing.assert_array_equal(np.asarray(dx), np.asarray(runs[0][0]))
        np.testing.assert_array_equal(np.asarray(dw), np.asarray(runs[0][1]))


# ---- partial RMSNorm ---------------------------------------------------------------------

@pytest.mark.parametrize("n,ratio", [(8, 0.0625), (8, 0.01), (10, 0.3), (8, 0.5), (8, 1.0), (6, 0.999)])
def test_partial(n, ratio):
    """Guards against pRMSNorm taking the RMS over the wrong prefix (k = max(1, ceil(N p)),
    including the float trap 10 * 0.3 = 3.0000000000000004 -> k = 4), scaling only the prefix,
    or dropping the gradient path through the statistic."""
    check_op(lambda x, w: F.rms_norm(x, n, w, partial_ratio=ratio),
             lambda x, w: ref_rms_norm(x, 1, w, ratio=ratio), [(3, n), (n,)])
    y = F.rms_norm(t64(RNG.standard_normal((2, n)), True), n, partial_ratio=ratio)
    assert y.grad_fn.k == k_of(n, ratio) and y.grad_fn.N == n
    assert y.grad_fn.schema.name == "rms_norm"  # an option of rms_norm, not a separate op


def test_partial_ratio_one_is_plain_rms_norm():
    """Guards against partial_ratio=1.0 differing from plain RMSNorm."""
    x = t64(RNG.standard_normal((4, 6)))
    np.testing.assert_array_equal(np.asarray(F.rms_norm(x, 6, partial_ratio=1.0)), np.asarray(F.rms_norm(x, 6)))


def test_partial_multi_dim():
    """Guards against the prefix being taken per last dim instead of over the flattened slice."""
    check_op(lambda x: F.rms_norm(x, (3, 4), partial_ratio=0.25),
             lambda x: ref_rms_norm(x, 2, ratio=0.25), [(2, 3, 4)])


# ---- the node from Python ----------------------------------------------------------------

def test_grad_fn_attributes():
    """Guards against the node's documented state (seed 001) being unreadable or wrong."""
    x = RNG.standard_normal((2, 3, 4))
    xt, wt = t64(x, True), t64(np.ones(4), True)
    node = F.rms_norm(xt, 4, wt, eps=1e-5).grad_fn
    assert isinstance(node, RMSNormBackward) and isinstance(node, pylucid.autograd.Node)
    assert node.name() == "RMSNormBackward"
    assert (node.outer, node.N, node.k, node.eps) == (6, 4, 4, 1e-5)
    assert node.outer * node.N == xt.numel()
    assert node.saved_rstd.shape == (6,) and node.saved_rstd.dtype == pylucid.float64
    np.testing.assert_allclose(np.asarray(node.saved_rstd), 1 / np.sqrt((x**2).mean(-1) + 1e-5).reshape(-1))
    s = RMSNormBackward.schema_v1
    assert (s.name, s.version, s.amp_policy, s.produces_grad) == ("rms_norm", 1, pylucid._C.AmpPolicy.ForceFP32, True)
    assert node.schema == s and pylucid.ops.schema("rms_norm") == s
    fns = node.next_functions
    assert len(fns) == 2 and all(type(f).__name__ == "AccumulateGrad" for f, _ in fns)
    assert fns[0][0].variable is xt and fns[1][0].variable is wt
    rstd32 = F.rms_norm(pylucid.randn(3, 4, requires_grad=True), 4).grad_fn.saved_rstd
    assert rstd32.dtype == pylucid.float32


def test_static_forward_and_apply():
    """Guards against the seed's static forward(x, gamma, eps) and apply(grad_out) diverging
    from the functional path and the closed form."""
    x, w, g = RNG.standard_normal((3, 5)), RNG.standard_normal(5), RNG.standard_normal((3, 5))
    xt, wt = t64(x, True), t64(w, True)
    y = RMSNormBackward.forward(xt, wt, 1e-6)
    np.testing.assert_allclose(np.asarray(y.detach()), ref_rms_norm(x, 1, w), rtol=1e-12)
    assert isinstance(y.grad_fn, RMSNormBackward)
    dx, dw = y.grad_fn.apply(t64(g))
    rdx, rdw = ref_backward(x, 1, w, g)
    np.testing.assert_allclose(np.asarray(dx), rdx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(dw), rdw, rtol=1e-10, atol=1e-12)
    with pylucid.no_grad():
        assert RMSNormBackward.forward(xt, wt, 1e-6).grad_fn is None
    with pytest.raises(pylucid.ShapeMismatch, match="grad_out shape"):
        y.grad_fn.apply(t64(np.ones((3, 4))))


def test_no_node_without_grad():
    """Guards against recording a node (and keeping x alive) when nothing requires grad."""
    y = F.rms_norm(pylucid.randn(2, 3), 3, pylucid.ones(3))
    assert y.grad_fn is None and not y.requires_grad
    x = pylucid.randn(2, 3, requires_grad=True)
    with pylucid.no_grad():
        assert F.rms_norm(x, 3).grad_fn is None


def test_only_weight_requires_grad():
    """Guards against d_gamma being skipped (or dx computed for nothing) when only the gain
    requires grad."""
    x, g = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    w = t64(np.ones(3), True)
    y = F.rms_norm(t64(x), 3, w)
    dx, dw = y.grad_fn.apply(t64(g))
    assert dx is None
    np.testing.assert_allclose(np.asarray(dw), ref_backward(x, 1, np.ones(3), g)[1], rtol=1e-12)


def test_saved_state_freed_and_inplace_detected():
    """Guards against a second backward reading freed state, and against a backward silently
    using an input modified in place after the forward."""
    x = t64(RNG.standard_normal((2, 3)), True)
    y = F.rms_norm(x * 1.0, 3)
    node = y.grad_fn
    y.sum().backward()
    assert node.saved_rstd is None
    with pytest.raises(pylucid.LucidError, match="second time"):
        y.sum().backward()
    a = t64(RNG.standard_normal((2, 3)))
    b = a * 1.0
    b.requires_grad_()
    y = F.rms_norm(b, 3)
    with pylucid.no_grad():
        b.mul_(2.0)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.sum().backward()


# ---- dtypes ------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_inputs_keep_dtype_and_accumulate_in_float32(dt):
    """Guards against half inputs accumulating in 16 bits (the mean of squares of 4096 values
    overflows float16) or returning float32 outside autocast."""
    dtype = getattr(pylucid, dt)
    x = RNG.standard_normal((3, 4096)).astype(np.float32) * 50  # x^2 sums far beyond 65504
    xt = pylucid.from_numpy(x).to(dtype).requires_grad_()
    w = pylucid.ones(4096, dtype=dtype)
    y = F.rms_norm(xt, 4096, w)
    assert y.dtype == dtype and y.grad_fn.saved_rstd.dtype == pylucid.float32
    xr = np.asarray(xt.detach().float())
    np.testing.assert_allclose(np.asarray(y.detach().float()), ref_rms_norm(xr, 1), rtol=1e-2, atol=1e-2)
    y.sum().backward()
    assert xt.grad.dtype == dtype and np.isfinite(np.asarray(xt.grad.float())).all()


def test_mixed_dtypes_promote():
    """Guards against a float16 input with a float32 gain truncating the result to float16
    (PyTorch promotes: the output is float32)."""
    y = F.rms_norm(pylucid.randn(2, 3).half(), 3, pylucid.ones(3))
    assert y.dtype == pylucid.float32


def test_integer_input_rejected():
    """Guards against integer inputs being normalised with integer arithmetic."""
    with pytest.raises(pylucid.DtypeMismatch, match="rms_norm: expected a floating input, got int64"):
        F.rms_norm(pylucid.ones(2, 3, dtype=pylucid.int64), 3)


# ---- bad inputs --------------------------------------------------------------------------

def test_seed_error_message():
    """Guards against the documented ShapeMismatch of the static forward losing the shapes."""
    x = pylucid.randn(2, 3, 4)
    msg = r"rms_norm: weight shape \[5\] does not match trailing dims \[4\] of input \[2, 3, 4\]"
    with pytest.raises(pylucid.ShapeMismatch, match=msg):
        RMSNormBackward.forward(x, pylucid.ones(5), 1e-6)
    with pytest.raises(pylucid.ShapeMismatch, match="more dims than input"):
        RMSNormBackward.forward(pylucid.randn(4), pylucid.ones(2, 4), 1e-6)
    with pytest.raises(ValueError):  # ShapeMismatch is also a ValueError
        RMSNormBackward.forward(x, pylucid.ones(3, 3), 1e-6)


@pytest.mark.parametrize("kwargs,match", [
    ({"normalized_shape": 5}, r"normalized_shape \[5\] does not match trailing dims \[4\] of input \[2, 3, 4\]"),
    ({"normalized_shape": (2, 3, 4, 4)}, "more dims than input"),
    ({"normalized_shape": ()}, "at least one dim"),
    ({"normalized_shape": 4, "weight": pylucid.ones(5)}, r"weight shape \[5\] does not match normalized_shape \[4\]"),
    ({"normalized_shape": 4, "eps": -1e-6}, "eps must be >= 0"),
    ({"normalized_shape": 4, "eps": float("nan")}, "eps must be >= 0"),
    ({"normalized_shape": 4, "partial_ratio": -0.1}, r"partial_ratio must be in \[0, 1\]"),
    ({"normalized_shape": 4, "partial_ratio": 1.5}, r"partial_ratio must be in \[0, 1\]"),
    ({"normalized_shape": 4, "partial_ratio": float("nan")}, r"partial_ratio must be in \[0, 1\]"),
])
def test_bad_arguments_raise_shape_mismatch(kwargs, match):
    """Guards against bad shapes, eps or partial_ratio being accepted (NaN slipping through a
    `< 0` test) or raising an untyped error."""
    x = pylucid.randn(2, 3, 4, requires_grad=True)
    with pytest.raises(pylucid.ShapeMismatch, match=match):
        F.rms_norm(x, **kwargs)


def test_bad_types():
    """Guards against None or non-tensors reaching the kernel (a crash) instead of a TypeError."""
    with pytest.raises(TypeError):
        F.rms_norm(None, 3)
    with pytest.raises(TypeError):
        F.rms_norm(np.ones((2, 3)), 3)
    with pytest.raises(pylucid.DtypeMismatch):
        F.rms_norm(pylucid.randn(2, 3), "3")
    with pytest.raises(pylucid.DtypeMismatch, match="needs gamma"):
        RMSNormBackward.forward(pylucid.randn(2, 3), None, 1e-6)


def test_zero_size_normalized_dim_rejected():
    """Guards against a zero-size normalised dim producing NaN rstd (0/0) silently."""
    with pytest.raises(pylucid.ShapeMismatch, match="positive sizes"):
        F.rms_norm(pylucid.randn(2, 0), 0)


# ---- the module --------------------------------------------------------------------------

def test_module_attributes_and_forward():
    """Guards against the module's documented attributes (seed 000) drifting: weight ones of
    shape (dim,), eps, partial_ratio, k, a tuple dim, and forward equal to the functional."""
    m = pylucid.nn.RMSNorm(6, eps=1e-5, partial_ratio=0.3)
    assert isinstance(m.weight, pylucid.nn.Parameter) and m.weight.shape == (6,)
    np.testing.assert_array_equal(np.asarray(m.weight.detach()), np.ones(6))
    assert (m.eps, m.partial_ratio, m.k) == (1e-5, 0.3, 2)
    assert pylucid.nn.RMSNorm(6).k == 6
    assert repr(m) == "RMSNorm((6,), eps=1e-05, elementwise_affine=True, partial_ratio=0.3, k=2)"
    assert repr(pylucid.nn.RMSNorm(6)) == "RMSNorm((6,), eps=1e-06, elementwise_affine=True)"  # PyTorch's form
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(m(pylucid.from_numpy(x)).detach()),
                               ref_rms_norm(x.astype(np.float64), 1, eps=1e-5, ratio=0.3), rtol=1e-5)
    t = pylucid.nn.RMSNorm((3, 4))
    assert t.weight.shape == (3, 4) and t.k == 12
    assert t(pylucid.randn(2, 3, 4)).shape == (2, 3, 4)


def test_module_trains_weight():
    """Guards against the module's weight not receiving a gradient."""
    m = pylucid.nn.RMSNorm(4)
    m(pylucid.randn(3, 4)).sum().backward()
    assert m.weight.grad is not None and m.weight.grad.shape == (4,)


@pytest.mark.parametrize("args,match", [
    ((0,), "positive sizes"), ((-3,), "positive sizes"), (((2, 0),), "positive sizes"),
    ((4, -1.0), "eps must be >= 0"), ((4, float("nan")), "eps must be >= 0"),
    ((4, 1e-6, 1.01), r"partial_ratio must be in \[0, 1\]"), ((4, 1e-6, float("nan")), r"partial_ratio"),
])
def test_module_rejects_bad_arguments(args, match):
    """Guards against a module built with an invalid dim, eps or ratio failing only later."""
    with pytest.raises(pylucid.ShapeMismatch, match=match):
        pylucid.nn.RMSNorm(*args)


# ---- PyTorch, where installed ------------------------------------------------------------

@pytest.mark.parametrize("dt,rtol,atol", [("float32", 1e-5, 1e-5), ("float64", 1e-10, 1e-12)])
@pytest.mark.parametrize("shape,d,weight", [((8, 33), 1, True), ((2, 3, 5, 7), 2, True), ((4, 16), 1, False)])
def test_matches_torch(dt, rtol, atol, shape, d, weight):
    """Guards against drifting from torch.nn.functional.rms_norm in forward or either gradient."""
    torch = pytest.importorskip("torch")
    ns = shape[len(shape) - d:]
    npdt = np.dtype(dt)
    x = RNG.standard_normal(shape).astype(npdt)
    w = RNG.standard_normal(ns).astype(npdt)
    g = RNG.standard_normal(shape).astype(npdt)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True) if weight else None
    ty = torch.nn.functional.rms_norm(tx, ns, tw, 1e-6)
    tgrads = torch.autograd.grad(ty, (tx, tw) if weight else (tx,), torch.tensor(g))
    px = pylucid.from_numpy(x.copy()).requires_grad_()
    pw = pylucid.from_numpy(w.copy()).requires_grad_() if weight else None
    py = F.rms_norm(px, ns, pw, 1e-6)
    pgrads = pylucid.autograd.grad(py, (px, pw) if weight else (px,), pylucid.from_numpy(g))
    np.testing.assert_allclose(np.asarray(py.detach()), ty.detach().numpy(), rtol=rtol, atol=atol)
    for a, b in zip(pgrads, tgrads):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=rtol, atol=atol * 10)
