"""layer_norm / LayerNorm / LayerNormBackward: forward against a numpy composite, float64
gradcheck with every weight/bias combination, the node's saved state, the module, bad inputs,
and PyTorch where it is installed."""
import numpy as np
import pylucid
import pytest
from helpers import check_op
from pylucid.autograd import LayerNormBackward
from pylucid.nn import functional as F

RNG = np.random.default_rng(3)


def ref_layer_norm(x, d, w=None, b=None, eps=1e-5):
    """The composite fallback: biased variance over the last d dims."""
    axes = tuple(range(x.ndim - d, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


@pytest.mark.parametrize("shape,d", [((5,), 1), ((3, 4), 1), ((2, 3, 4), 2), ((2, 1, 2, 3), 3)])
def test_forward_gradcheck_with_weight_and_bias(shape, d):
    """Guards against wrong normalised dims, a wrong closed-form gradient for x, weight or bias,
    strided inputs and .grad not accumulating."""
    ns = shape[len(shape) - d:]
    check_op(lambda x, w, b: F.layer_norm(x, ns, w, b), lambda x, w, b: ref_layer_norm(x, d, w, b), [shape, ns, ns])


@pytest.mark.parametrize("which", ["none", "weight", "bias"])
def test_optional_affine(which):
    """Guards against a missing weight or bias being read (or its gradient slot misplaced)."""
    if which == "none":
        check_op(lambda x: F.layer_norm(x, 4), lambda x: ref_layer_norm(x, 1), [(3, 4)])
    elif which == "weight":
        check_op(lambda x, w: F.layer_norm(x, 4, w), lambda x, w: ref_layer_norm(x, 1, w), [(3, 4), (4,)])
    else:
        check_op(lambda x, b: F.layer_norm(x, 4, None, b), lambda x, b: ref_layer_norm(x, 1, None, b), [(3, 4), (4,)])


def test_large_offset_is_stable():
    """Guards against computing the variance as E[x^2] - E[x]^2, which cancels to garbage when
    the mean dwarfs the spread (float32)."""
    x = (1e4 + RNG.standard_normal((4, 256))).astype(np.float32)
    y = F.layer_norm(pylucid.from_numpy(x), 256)
    np.testing.assert_allclose(np.asarray(y), ref_layer_norm(x.astype(np.float64), 1), rtol=1e-3, atol=2e-3)


def test_large_input_and_empty_rows():
    """Guards against the chunked threaded backward dropping rows, and against (0, N) inputs."""
    x, w, b, g = (RNG.standard_normal(s) for s in [(300, 400), (400,), (400,), (300, 400)])
    ts = [pylucid.from_numpy(a.copy()).requires_grad_() for a in (x, w, b)]
    y = F.layer_norm(*[ts[0], 400, ts[1], ts[2]])
    np.testing.assert_allclose(np.asarray(y.detach()), ref_layer_norm(x, 1, w, b), rtol=1e-10, atol=1e-12)
    dx, dw, db = pylucid.autograd.grad(y, ts, pylucid.from_numpy(g))
    m, r = x.mean(1, keepdims=True), 1 / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    xh = (x - m) * r
    gy = g * w
    rdx = r * (gy - gy.mean(1, keepdims=True) - xh * (gy * xh).mean(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(dx), rdx, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(np.asarray(dw), (g * xh).sum(0), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(db), g.sum(0), rtol=1e-10, atol=1e-10)
    e = pylucid.zeros(0, 4, requires_grad=True)
    eb = pylucid.zeros(4, requires_grad=True)
    F.layer_norm(e, 4, None, eb).sum().backward()
    assert e.grad.shape == (0, 4) and eb.grad.tolist() == [0.0] * 4


def test_grad_fn_attributes():
    """Guards against the node's saved mean/rstd and schema being unreadable or wrong."""
    x = RNG.standard_normal((2, 3, 4))
    xt = pylucid.from_numpy(x.copy()).requires_grad_()
    node = F.layer_norm(xt, (3, 4), None, pylucid.zeros(3, 4, dtype=pylucid.float64, requires_grad=True)).grad_fn
    assert isinstance(node, LayerNormBackward) and node.name() == "LayerNormBackward"
    assert (node.outer, node.N) == (2, 12) and len(node.next_functions) == 3
    assert node.next_functions[1] == (None, 0)
    np.testing.assert_allclose(np.asarray(node.saved_mean), x.reshape(2, -1).mean(1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(node.saved_rstd), 1 / np.sqrt(x.reshape(2, -1).var(1) + 1e-5), rtol=1e-12)
    s = LayerNormBackward.schema_v1
    assert (s.name, s.version, s.produces_grad) == ("layer_norm", 1, True) and node.schema == s
    assert s.amp_policy == pylucid._C.AmpPolicy.ForceFP32
    dx, dw, db = node.apply(pylucid.ones(2, 3, 4, dtype=pylucid.float64))
    assert dx.shape == (2, 3, 4) and dw is None and db.tolist() == [[2.0] * 4] * 3


def test_module():
    """Guards against LayerNorm's parameters (weight ones, bias zeros, both optional) drifting
    from PyTorch's, and the module differing from the functional."""
    m = pylucid.nn.LayerNorm((2, 3), eps=1e-6)
    assert m.weight.shape == (2, 3) and m.bias.shape == (2, 3)
    assert m.weight.tolist() == [[1.0] * 3] * 2 and m.bias.tolist() == [[0.0] * 3] * 2
    x = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(m(pylucid.from_numpy(x)).detach()),
                               ref_layer_norm(x.astype(np.float64), 2, eps=1e-6), rtol=1e-5, atol=1e-6)
    assert pylucid.nn.LayerNorm(3, bias=False).bias is None
    plain = pylucid.nn.LayerNorm(3, elementwise_affine=False)
    assert plain.weight is None and plain.bias is None and list(plain.parameters()) == []
    assert repr(plain) == "LayerNorm((3,), eps=1e-05, elementwise_affine=False, bias=False)"  # as torch 2.x


@pytest.mark.parametrize("kwargs,match", [
    ({"normalized_shape": 5}, r"normalized_shape \[5\] does not match trailing dims \[4\]"),
    ({"normalized_shape": 4, "bias": pylucid.zeros(3)}, r"bias shape \[3\] does not match normalized_shape \[4\]"),
    ({"normalized_shape": 4, "weight": pylucid.ones(2, 2)}, r"weight shape \[2, 2\] does not match"),
    ({"normalized_shape": 4, "eps": -1.0}, "eps must be >= 0"),
])
def test_bad_arguments(kwargs, match):
    """Guards against mismatched parameters or a negative eps being accepted."""
    with pytest.raises(pylucid.ShapeMismatch, match=match):
        F.layer_norm(pylucid.randn(2, 3, 4), **kwargs)


def test_module_rejects_bad_arguments():
    """Guards against a LayerNorm built with a zero-size dim or NaN eps failing only later."""
    with pytest.raises(pylucid.ShapeMismatch, match="positive sizes"):
        pylucid.nn.LayerNorm(0)
    with pytest.raises(pylucid.ShapeMismatch, match="eps must be >= 0"):
        pylucid.nn.LayerNorm(3, eps=float("nan"))


@pytest.mark.parametrize("dt,rtol,atol", [("float32", 1e-5, 1e-5), ("float64", 1e-10, 1e-12)])
@pytest.mark.parametrize("shape,d,affine", [((8, 33), 1, True), ((2, 3, 5, 7), 2, True), ((4, 16), 1, False)])
def test_matches_torch(dt, rtol, atol, shape, d, affine):
    """Guards against drifting from torch.nn.functional.layer_norm in forward or any gradient."""
    torch = pytest.importorskip("torch")
    ns = shape[len(shape) - d:]
    npdt = np.dtype(dt)
    x, w, b, g = (RNG.standard_normal(s).astype(npdt) for s in (shape, ns, ns, shape))
    tin = [torch.tensor(a, requires_grad=True) for a in ((x, w, b) if affine else (x,))]
    ty = torch.nn.functional.layer_norm(tin[0], ns, *(tin[1:] if affine else (None, None)), eps=1e-5)
    tgrads = torch.autograd.grad(ty, tin, torch.tensor(g))
    pin = [pylucid.from_numpy(a.copy()).requires_grad_() for a in ((x, w, b) if affine else (x,))]
    py = F.layer_norm(pin[0], ns, *(pin[1:] if affine else (None, None)), eps=1e-5)
    pgrads = pylucid.autograd.grad(py, pin, pylucid.from_numpy(g))
    np.testing.assert_allclose(np.asarray(py.detach()), ty.detach().numpy(), rtol=rtol, atol=atol)
    for a, t in zip(pgrads, tgrads):
        np.testing.assert_allclose(np.asarray(a), t.numpy(), rtol=rtol, atol=atol * 10)
