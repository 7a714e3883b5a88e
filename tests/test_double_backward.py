"""Second order: create_graph=True through the norms, softmax and cross_entropy (each with a
fused <Op>BackwardBackward node computed in closed form from the saved statistics), Hessians of
small models against finite differences of the gradient and against torch, and the first-order
path recording nothing."""
import numpy as np
import pytest

import pylucid
from pylucid.autograd import gradgradcheck
from pylucid.autograd.functional import hessian

F = pylucid.nn.functional
F64 = pylucid.float64
RNG = np.random.default_rng(7)


def t64(a, grad=True):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), dtype=F64, requires_grad=grad)


@pytest.mark.parametrize("partial_ratio", [0.0, 0.4])
@pytest.mark.parametrize("weight", [True, False])
def test_rms_norm_gradgradcheck(partial_ratio, weight):
    """Guards the closed-form double backward (full and partial, with and without weight)."""
    x = t64(RNG.standard_normal((3, 5)))
    w = t64(RNG.standard_normal(5)) if weight else None
    fn = (lambda a, b: F.rms_norm(a, (5,), b, 1e-6, partial_ratio)) if weight else \
        (lambda a: F.rms_norm(a, (5,), None, 1e-6, partial_ratio))
    assert gradgradcheck(fn, (x, w) if weight else (x,))
    y = F.rms_norm(x, (5,), w, 1e-6, partial_ratio)
    (gx,) = pylucid.autograd.grad(y.sum(), x, create_graph=True)
    assert gx.grad_fn.name() == "RMSNormBackwardBackward"


def test_group_and_layer_norm_gradgradcheck():
    """Guards the fused double backward of GroupRMSNorm and LayerNorm (with and without affine)."""
    x = t64(RNG.standard_normal((2, 5)))
    groups = pylucid.tensor([0, 1, 0, 2, 1])
    g = t64(RNG.standard_normal(3))
    assert gradgradcheck(lambda a, b: F.group_rms_norm(a, groups, b, 1e-6), (x, g))
    assert gradgradcheck(lambda a: F.group_rms_norm(a, groups, None, 1e-6), (x,))
    w, b = t64(RNG.standard_normal(5)), t64(RNG.standard_normal(5))
    assert gradgradcheck(lambda a, ww, bb: F.layer_norm(a, (5,), ww, bb, 1e-5), (x, w, b))
    assert gradgradcheck(lambda a: F.layer_norm(a, (5,), None, None, 1e-5), (x,))


def _model(norm):
    """A tiny model: linear -> norm -> tanh -> sum of squares, as a function of the flat params."""
    W = RNG.standard_normal((4, 3))
    x = RNG.standard_normal((2, 3))

    def f(theta):
        w = theta[:12].reshape(4, 3)
        h = pylucid.tensor(x, dtype=F64) @ w.t()
        h = norm(h, theta[12:])
        return (h.tanh() ** 2).sum()
    return f, np.concatenate([W.reshape(-1), RNG.standard_normal(4)])


NORMS = {
    "rms_norm": lambda h, g: F.rms_norm(h, (4,), g, 1e-6),
    "prms_norm": lambda h, g: F.rms_norm(h, (4,), g, 1e-6, 0.5),
    "group_rms_norm": lambda h, g: F.group_rms_norm(h, pylucid.tensor([0, 1, 1, 0]), g[:2], 1e-6),
    "layer_norm": lambda h, g: F.layer_norm(h, (4,), g, None, 1e-5),
}


@pytest.mark.parametrize("name", list(NORMS))
def test_hessian_of_small_models_matches_finite_differences(name):
    """Guards the Hessian through each norm against central differences of the gradient."""
    f, theta0 = _model(NORMS[name])
    H = np.asarray(hessian(f, t64(theta0, grad=False)))
    assert H.shape == (16, 16)
    np.testing.assert_allclose(H, H.T, atol=1e-8)

    def grad_at(th):
        t = t64(th)
        (g,) = pylucid.autograd.grad(f(t), t)
        return np.asarray(g)
    eps = 1e-6
    num = np.stack([(grad_at(theta0 + eps * e) - grad_at(theta0 - eps * e)) / (2 * eps) for e in np.eye(16)])
    np.testing.assert_allclose(H, num, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", list(NORMS))
def test_hessian_matches_torch(name):
    """The same model in torch (RMSNorm written out, pRMSNorm with k = 2 of 4 features,
    GroupRMSNorm as a composite of torch ops)."""
    torch = pytest.importorskip("torch")
    xin, theta0 = RNG.standard_normal((2, 3)), RNG.standard_normal(16)

    def torch_norm(h, g):
        if name == "layer_norm":
            return torch.nn.functional.layer_norm(h, (4,), g, None, 1e-5)
        if name == "group_rms_norm":
            return _torch_group_rms(torch, h, [0, 1, 1, 0], g[:2])
        k = 4 if name == "rms_norm" else 2
        return h * torch.rsqrt((h[..., :k] ** 2).mean(-1, keepdim=True) + 1e-6) * g

    def fl(theta):
        h = pylucid.tensor(xin, dtype=F64) @ theta[:12].reshape(4, 3).t()
        return (NORMS[name](h, theta[12:]).tanh() ** 2).sum()

    def ft(theta):
        h = torch.tensor(xin) @ theta[:12].reshape(4, 3).t()
        return (torch_norm(h, theta[12:]).tanh() ** 2).sum()
    H = np.asarray(hessian(fl, t64(theta0, grad=False)))
    Ht = torch.autograd.functional.hessian(ft, torch.tensor(theta0)).numpy()
    np.testing.assert_allclose(H, Ht, rtol=1e-9, atol=1e-10)


def test_first_order_backward_records_nothing():
    """Guards the first-order path: without create_graph the gradients carry no graph and no
    extra nodes stay alive."""
    x = t64(RNG.standard_normal((3, 4)))
    w = t64(RNG.standard_normal(4))
    y = F.rms_norm(x, (4,), w, 1e-6).tanh().sum()
    before = pylucid._C._live_counts()[1]
    y.backward()
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    assert pylucid._C._live_counts()[1] <= before


def test_create_graph_gradient_penalty_trains():
    """A gradient penalty (WGAN-GP style): d/dw of |d out / d x|^2 through linear and tanh."""
    torch = pytest.importorskip("torch")
    xa, wa = RNG.standard_normal((5, 3)), RNG.standard_normal((2, 3))
    res = []
    for lib in (pylucid, torch):
        x = lib.tensor(xa, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(wa, dtype=lib.float64, requires_grad=True)
        out = lib.tanh(x @ w.t()).sum()
        (gx,) = lib.autograd.grad(out, x, create_graph=True)
        pen = (gx ** 2).sum()
        pen.backward()
        res.append((np.asarray(gx.detach()), np.asarray(w.grad), np.asarray(x.grad)))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_backward_create_graph_keeps_grad_graph():
    x = t64([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    g = x.grad
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_higher_order_not_implemented_names_the_node():
    """A fused double-backward node without a recorded backward of its own (third order through
    rms_norm) must say so, naming the node, rather than return a wrong derivative."""
    x = t64(RNG.standard_normal((2, 3)))
    (g1,) = pylucid.autograd.grad(F.rms_norm(x, (3,), None, 1e-6).pow(3).sum(), x, create_graph=True)
    with pytest.raises(pylucid.LucidError, match="RMSNormBackwardBackward: double backward"):
        pylucid.autograd.grad(g1.pow(2).sum(), x, create_graph=True)


@pytest.mark.parametrize("partial_ratio", [0.0, 0.3])
def test_rms_norm_double_backward_one_pass_for_both_outputs(partial_ratio):
    """Guards NOTE [one pass for both outputs]: the d_gamma node hands its gradient to the dx node
    when that one is still to run; either root order, one root alone, and the sum of the separate
    passes must all agree (float64), and float32 must follow float64."""
    xa, wa, ga = RNG.standard_normal((6, 70)), RNG.standard_normal(70), RNG.standard_normal((6, 70))
    ua, va = RNG.standard_normal((6, 70)), RNG.standard_normal(70)

    def run(dtype, roots):
        x, w, g = (pylucid.tensor(a, dtype=dtype, requires_grad=True) for a in (xa, wa, ga))
        gx, gw = pylucid.autograd.grad(F.rms_norm(x, (70,), w, 1e-6, partial_ratio), (x, w), g, create_graph=True)
        u, v = pylucid.tensor(ua, dtype=dtype), pylucid.tensor(va, dtype=dtype)
        pick = {"both": ((gx, gw), (u, v)), "reversed": ((gw, gx), (v, u)), "dx": ((gx,), (u,)), "dw": ((gw,), (v,))}
        outs, ups = pick[roots]
        res = pylucid.autograd.grad(outs, (x, w, g), ups, allow_unused=True)
        return [np.zeros(t.shape) if r is None else np.asarray(r) for r, t in zip(res, (x, w, g))]
    both, rev = run(F64, "both"), run(F64, "reversed")
    sep = [a + b for a, b in zip(run(F64, "dx"), run(F64, "dw"))]
    for a, b, c in zip(both, rev, sep):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b, c, rtol=1e-12, atol=1e-12)
    for a, b in zip(run(pylucid.float32, "both"), both):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-4)


# ---- fused double backward of GroupRMSNorm, LayerNorm, softmax, log_softmax, cross_entropy ----

def _second_order(lib, fn, leaves, g, ups):
    """y = fn(*leaves); first = grad(y, leaves, g, create_graph); grad(first, leaves + [g], ups):
    the second-order gradients (zeros where unused) as numpy arrays, and the first-order nodes."""
    y = fn(*leaves)
    first = lib.autograd.grad(y, leaves, g, create_graph=True)
    pairs = [(f, u) for f, u in zip(first, ups) if f is not None and u is not None]
    wrt = list(leaves) + [g]
    res = lib.autograd.grad([f for f, _ in pairs], wrt, [u for _, u in pairs], allow_unused=True)
    out = [np.zeros(tuple(t.shape)) if r is None else np.asarray(r.detach()) for r, t in zip(res, wrt)]
    return out, [None if f is None else f.grad_fn for f in first]


def _compare_with_torch(fn_l, fn_t, arrays, g_array, up_arrays, node_name, rtol=1e-9, atol=1e-11):
    """The pylucid double backward (fused node `node_name`) against torch's on the same values."""
    leaves = [t64(a) for a in arrays]
    g = t64(g_array)
    ups = [None if u is None else t64(u, grad=False) for u in up_arrays]
    mine, nodes = _second_order(pylucid, fn_l, leaves, g, ups)
    assert any(n is not None and n.name() == node_name for n in nodes), [n and n.name() for n in nodes]
    torch = pytest.importorskip("torch")
    tl = [torch.tensor(a, requires_grad=True) for a in arrays]
    tg = torch.tensor(g_array, requires_grad=True)
    tu = [None if u is None else torch.tensor(u) for u in up_arrays]
    theirs, _ = _second_order(torch, fn_t, tl, tg, tu)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _torch_group_rms(torch, x, groups, w, eps=1e-6):
    B, C = x.shape[:2]
    G = max(groups) + 1
    M = torch.zeros(C, G, dtype=x.dtype)
    M[torch.arange(C), torch.tensor(groups)] = 1
    x3 = x.reshape(B, C, -1)
    ms = ((x3 * x3).sum(2) @ M) / (M.sum(0) * x3.shape[2])
    y = x3 * (torch.rsqrt(ms + eps) @ M.t()).unsqueeze(2)
    if w is not None:
        y = y * (M @ w).reshape(1, C, 1)
    return y.reshape(x.shape)


@pytest.mark.parametrize("shape", [(3, 5), (2, 5, 3, 2), (2, 5, 1)])
@pytest.mark.parametrize("weight", [True, False])
def test_group_rms_norm_fused_double_backward(shape, weight):
    """Guards GroupRMSNormBackwardBackward (closed form from the saved rstd, (B, C) and
    (B, C, *spatial)): gradgradcheck in float64 and torch's double backward of the composite."""
    groups = [0, 1, 0, 2, 1]
    gt = pylucid.tensor(groups)
    xa, wa = RNG.standard_normal(shape), RNG.standard_normal(3)
    arrays = [xa, wa] if weight else [xa]
    fn_l = (lambda a, b: F.group_rms_norm(a, gt, b, 1e-6)) if weight else \
        (lambda a: F.group_rms_norm(a, gt, None, 1e-6))
    assert gradgradcheck(fn_l, tuple(t64(a) for a in arrays))
    torch = pytest.importorskip("torch")
    fn_t = (lambda a, b: _torch_group_rms(torch, a, groups, b)) if weight else \
        (lambda a: _torch_group_rms(torch, a, groups, None))
    ups = [RNG.standard_normal(shape), RNG.standard_normal(3)][:len(arrays)]
    _compare_with_torch(fn_l, fn_t, arrays, RNG.standard_normal(shape), ups, "GroupRMSNormBackwardBackward")
    # dx alone, d_gamma alone (the one-pass hand-over must not lose either)
    if weight:
        _compare_with_torch(fn_l, fn_t, arrays, RNG.standard_normal(shape), [ups[0], None],
                            "GroupRMSNormBackwardBackward")
        _compare_with_torch(fn_l, fn_t, arrays, RNG.standard_normal(shape), [None, ups[1]],
                            "GroupRMSNormBackwardBackward")


@pytest.mark.parametrize("weight,bias", [(True, True), (True, False), (False, True), (False, False)])
def test_layer_norm_fused_double_backward(weight, bias):
    """Guards LayerNormBackwardBackward (closed form from the saved mean and rstd, with and
    without weight and bias): gradgradcheck in float64 and torch's double backward of layer norm,
    with upstream gradients for every first-order output, and for each alone."""
    shape, ns = (2, 3, 6), (3, 6)
    xa = RNG.standard_normal(shape) * 2 + 1
    wa, ba = RNG.standard_normal(ns), RNG.standard_normal(ns)
    arrays = [xa] + ([wa] if weight else []) + ([ba] if bias else [])

    def split(args, _lib):
        it = iter(args)
        x = next(it)
        return x, (next(it) if weight else None), (next(it) if bias else None)

    def fn_l(*args):
        x, w, b = split(args, pylucid)
        return F.layer_norm(x, ns, w, b, 1e-5)

    def fn_t(*args):  # written out: torch's own layer_norm double backward fails without weight
        x, w, b = split(args, None)
        xc = x - x.mean((-2, -1), keepdim=True)
        y = xc / ((xc * xc).mean((-2, -1), keepdim=True) + 1e-5).sqrt()
        return y * (1 if w is None else w) + (0 if b is None else b)
    assert gradgradcheck(fn_l, tuple(t64(a) for a in arrays))
    ups = [RNG.standard_normal(shape)] + [RNG.standard_normal(ns) for _ in arrays[1:]]
    _compare_with_torch(fn_l, fn_t, arrays, RNG.standard_normal(shape), ups, "LayerNormBackwardBackward")
    for i in range(len(ups)):
        only = [u if j == i else None for j, u in enumerate(ups)]
        _compare_with_torch(fn_l, fn_t, arrays, RNG.standard_normal(shape), only, "LayerNormBackwardBackward")


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_fused_double_backward(log, dim):
    """Guards (Log)SoftmaxBackwardBackward: one fused node whose y edge leads back into the
    forward's node; gradgradcheck in float64 (rows along every dim, so inner > 1 too) and
    torch's double backward."""
    name = "LogSoftmaxBackwardBackward" if log else "SoftmaxBackwardBackward"
    fl = (lambda a: F.log_softmax(a, dim)) if log else (lambda a: F.softmax(a, dim))
    assert gradgradcheck(fl, (t64(RNG.standard_normal((3, 4, 5))),))
    torch = pytest.importorskip("torch")
    ft = (lambda a: torch.log_softmax(a, dim)) if log else (lambda a: torch.softmax(a, dim))
    shape = (3, 4, 5)
    _compare_with_torch(fl, ft, [RNG.standard_normal(shape)], RNG.standard_normal(shape),
                        [RNG.standard_normal(shape)], name)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_fused_double_backward_matches_torch(reduction, smoothing, weighted):
    """Guards CrossEntropyBackwardBackward on class indices (ignore_index, label smoothing, class
    weights, (N, C, d) layout) and on probability targets (whose own gradient is recorded too)
    against torch's double backward."""
    torch = pytest.importorskip("torch")
    xa = RNG.standard_normal((4, 3, 2))
    ta = np.array([[0, 2], [1, -100], [2, 2], [-100, 0]])
    wa = np.array([0.5, 2.0, 1.5]) if weighted else None
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    gshape = (4, 2) if reduction == "none" else ()
    fl = lambda a: F.cross_entropy(a, pylucid.tensor(ta), weight=None if wa is None else t64(wa, False), **kw)  # noqa: E731
    ft = lambda a: torch.nn.functional.cross_entropy(  # noqa: E731
        a, torch.tensor(ta), weight=None if wa is None else torch.tensor(wa), **kw)
    _compare_with_torch(fl, ft, [xa], RNG.standard_normal(gshape), [RNG.standard_normal(xa.shape)],
                        "CrossEntropyBackwardBackward")
    qa = np.abs(RNG.standard_normal((4, 3))) + 0.1
    xb = RNG.standard_normal((4, 3))
    gshape = (4,) if reduction == "none" else ()
    fl = lambda a, q: F.cross_entropy(a, q, weight=None if wa is None else t64(wa, False), **kw)  # noqa: E731
    ft = lambda a, q: torch.nn.functional.cross_entropy(  # noqa: E731
        a, q, weight=None if wa is None else torch.tensor(wa), **kw)
    for ups in ([RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))], [None, RNG.standard_normal((4, 3))]):
        _compare_with_torch(fl, ft, [xb, qa], RNG.standard_normal(gshape), ups, "CrossEntropyBackwardBackward")


THIRD_ORDER_ELEMENTWISE = {
    "tanh": pylucid.tanh, "sigmoid": pylucid.sigmoid, "exp": pylucid.exp, "sin": pylucid.sin,
    "cos": pylucid.cos, "log": lambda t: pylucid.log(t * t + 0.5), "sqrt": lambda t: pylucid.sqrt(t * t + 1),
    "rsqrt": lambda t: pylucid.rsqrt(t * t + 1), "silu": F.silu, "softplus": F.softplus,
    "softplus_beta": lambda t: F.softplus(t, beta=2.0, threshold=3.0), "gelu": F.gelu,
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "elu": F.elu, "selu": F.selu,
    "celu": lambda t: F.celu(t, 0.7), "mish": F.mish, "logsigmoid": F.logsigmoid, "softsign": F.softsign,
    "tanhshrink": F.tanhshrink, "erf": pylucid.erf, "erfc": pylucid.erfc, "log1p": lambda t: pylucid.log1p(t * t),
    "expm1": pylucid.expm1, "atan": pylucid.atan, "sinh": pylucid.sinh, "cosh": pylucid.cosh,
    "asinh": pylucid.asinh, "tan": lambda t: pylucid.tan(t * 0.5), "asin": lambda t: pylucid.asin(t * 0.3),
    "acos": lambda t: pylucid.acos(t * 0.3), "atanh": lambda t: pylucid.atanh(t * 0.3),
    "acosh": lambda t: pylucid.acosh(t * t + 1.5), "log2": lambda t: pylucid.log2(t * t + 0.5),
    "log10": lambda t: pylucid.log10(t * t + 0.5), "exp2": pylucid.exp2,
}


@pytest.mark.parametrize("name", sorted(THIRD_ORDER_ELEMENTWISE))
def test_elementwise_third_order_gradgradcheck(name):
    """Guards third order through the fused elementwise double backward (tanh, sigmoid and every
    smooth activation): the derivative of the first derivative is itself differentiable twice, as
    a physics-informed net's u_xx backpropagated to its weights needs (it raised before)."""
    f = THIRD_ORDER_ELEMENTWISE[name]
    x = t64([-1.7, -0.4, 0.3, 1.1, 2.2])

    def first(a):
        return pylucid.autograd.grad(f(a).sum(), a, create_graph=True)[0]

    assert gradgradcheck(first, (x,))


def test_tanh_third_and_fourth_derivative_closed_form():
    """Guards d3/dx3 and d4/dx4 of tanh (y' = 1 - y^2: y''' = -2 (1 - y^2)(1 - 3 y^2),
    y'''' = 8 y (1 - y^2)(2 - 3 y^2)) through repeated autograd.grad."""
    x = t64([-1.3, 0.0, 0.4, 2.0])
    d = pylucid.tanh(x)
    ds = []
    for _ in range(4):
        (d,) = pylucid.autograd.grad(d.sum(), x, create_graph=True)
        ds.append(d)
    y = np.tanh(np.array([-1.3, 0.0, 0.4, 2.0]))
    np.testing.assert_allclose(ds[2].detach().numpy(), -2 * (1 - y ** 2) * (1 - 3 * y ** 2), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ds[3].detach().numpy(), 8 * y * (1 - y ** 2) * (2 - 3 * y ** 2), rtol=1e-12, atol=1e-14)


def test_piecewise_linear_third_order_is_zero_not_an_error():
    """Guards relu/leaky_relu/hardtanh at second order: the derivative of the first derivative is a
    constant zero (as in PyTorch), not an unused input."""
    x = t64([-1.0, 0.5, 2.0])
    for f in (F.relu, F.leaky_relu, F.hardtanh, pylucid.abs):
        (g,) = pylucid.autograd.grad(f(x).sum(), x, create_graph=True)
        (h,) = pylucid.autograd.grad(g.sum(), x, create_graph=True)
        assert h.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_third_order_gradgradcheck(log, dim):
    """Guards third order through (log_)softmax's fused double backward, which silently dropped
    the path through the saved output (a wrong third derivative, no error) before it wrote its
    own backward with recorded ops."""
    x = t64(RNG.standard_normal((3, 4)))
    c = pylucid.tensor(RNG.standard_normal((3, 4)), dtype=F64)
    f = F.log_softmax if log else F.softmax

    def first(a):
        return pylucid.autograd.grad((f(a, dim) * c).sum(), a, create_graph=True)[0]

    assert gradgradcheck(first, (x,))


def test_softmax_third_order_matches_torch():
    """Guards the weighted third derivative of softmax(z)[0] against PyTorch's."""
    torch = pytest.importorskip("torch")
    res = []
    for lib, fn in ((pylucid, F), (torch, torch.nn.functional)):
        z = lib.tensor([0.3, -0.8, 1.5], dtype=lib.float64, requires_grad=True)
        for f in (lambda t: fn.softmax(t, 0)[0], lambda t: fn.log_softmax(t, 0)[1]):
            g = lib.autograd.grad(f(z), z, create_graph=True)[0]
            h = lib.autograd.grad((g * lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64)).sum(), z, create_graph=True)[0]
            res.append(lib.autograd.grad((h * lib.tensor([0.5, -1.0, 3.0], dtype=lib.float64)).sum(), z)[0].tolist())
    np.testing.assert_allclose(res[:2], res[2:], rtol=1e-10)


@pytest.mark.parametrize("stride,groups", [(1, 1), (2, 2)])
def test_conv_third_order_gradgradcheck(stride, groups):
    """Guards third order through ConvolutionBackwardBackward (several inner MAML steps on a conv
    net differentiate it again): it raised 'double backward is not implemented'."""
    x = t64(RNG.standard_normal((1, 2, 5, 5)))
    w = t64(RNG.standard_normal((2, 2 // groups, 3, 3)))
    b = t64(RNG.standard_normal(2))

    def first(a, k, c):
        y = F.conv2d(a, k, c, stride=stride, padding=1, groups=groups)
        return pylucid.autograd.grad((y.tanh()).sum(), (a, k, c), create_graph=True)

    assert gradgradcheck(first, (x, w, b), atol=1e-4)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing,weighted", [(0.0, False), (0.2, True)])
def test_cross_entropy_third_order_gradgradcheck(reduction, smoothing, weighted):
    """Guards third order through CrossEntropyBackwardBackward (MAML with several inner steps on a
    classifier differentiates it again; it raised), with class weights, label smoothing,
    ignore_index and every reduction."""
    x = t64(RNG.standard_normal((4, 3)))
    tgt = pylucid.tensor([2, 0, -100, 1])
    w = pylucid.tensor([0.5, 1.5, 1.0], dtype=F64) if weighted else None
    c = pylucid.tensor(RNG.standard_normal(4), dtype=F64)

    def first(a):
        loss = F.cross_entropy(a, tgt, weight=w, reduction=reduction, label_smoothing=smoothing)
        loss = (loss * c).sum() if reduction == "none" else loss
        return pylucid.autograd.grad(loss, a, create_graph=True)[0]

    assert gradgradcheck(first, (x,))


def test_pow_number_exponent_gradient_graph_as_torch():
    """``g = grad(x ** 3, create_graph=True)`` is ``g * (3 * x^2)`` as PyTorch records it (a MulBackward0
    over the power), and x ** 0 gives zeros; values and second derivatives as the formulas."""
    x = pylucid.tensor([0.0, 1.5, -2.0], dtype=pylucid.float64, requires_grad=True)
    g, = pylucid.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "MulBackward0"
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    h, = pylucid.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * x.detach().numpy())
    g0, = pylucid.autograd.grad((x ** 0).sum(), x, create_graph=True)
    np.testing.assert_array_equal(g0.detach().numpy(), np.zeros(3))
    assert pylucid.autograd.gradgradcheck(lambda t: t ** 2.5, (x.detach().abs().add(0.5).requires_grad_(),))
