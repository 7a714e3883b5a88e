"""Second order: create_graph=True through the norms (fused RMSNormBackwardBackward and the
recorded LayerNorm/GroupRMSNorm backward), Hessians of small models against finite differences of
the gradient and against torch, and the first-order path recording nothing."""
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
    """Guards the recorded backward of GroupRMSNorm and LayerNorm (with and without affine)."""
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


@pytest.mark.parametrize("name", ["rms_norm", "prms_norm", "layer_norm"])
def test_hessian_matches_torch(name):
    """The same model in torch (RMSNorm written out, pRMSNorm with k = 2 of 4 features)."""
    torch = pytest.importorskip("torch")
    xin, theta0 = RNG.standard_normal((2, 3)), RNG.standard_normal(16)

    def torch_norm(h, g):
        if name == "layer_norm":
            return torch.nn.functional.layer_norm(h, (4,), g, None, 1e-5)
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
