"""pylucid.autograd.functional (vjp, jvp, jacobian, hessian, hvp, vhp), hooks, anomaly mode and
pylucid.testing.assert_close, compared with torch where it is installed."""
import numpy as np
import pytest

import pylucid
from pylucid.autograd import functional as AF

F64 = pylucid.float64
RNG = np.random.default_rng(3)


def f_multi(x, y):
    return (x.tanh() * y).sum() + (x ** 2 * y.exp()).sum()


def test_functional_api_matches_torch():
    torch = pytest.importorskip("torch")
    xa, ya, va = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3)
    P = lambda a: pylucid.tensor(a, dtype=F64)  # noqa: E731
    T = lambda a: torch.tensor(a)  # noqa: E731
    vec = lambda x: x.tanh() * x  # noqa: E731
    pairs = [
        (AF.vjp(vec, P(xa), P(va))[1], torch.autograd.functional.vjp(vec, T(xa), T(va))[1]),
        (AF.jvp(vec, P(xa), P(va))[1], torch.autograd.functional.jvp(vec, T(xa), T(va))[1]),
        (AF.jacobian(vec, P(xa)), torch.autograd.functional.jacobian(vec, T(xa))),
        (AF.hvp(lambda x: (x ** 3).sum(), P(xa), P(va))[1],
         torch.autograd.functional.hvp(lambda x: (x ** 3).sum(), T(xa), T(va))[1]),
        (AF.vhp(lambda x: (x ** 3).sum(), P(xa), P(va))[1],
         torch.autograd.functional.vhp(lambda x: (x ** 3).sum(), T(xa), T(va))[1]),
    ]
    hp = AF.hessian(f_multi, (P(xa), P(ya)))
    ht = torch.autograd.functional.hessian(f_multi, (T(xa), T(ya)))
    pairs += [(hp[i][j], ht[i][j]) for i in range(2) for j in range(2)]
    jp = AF.jacobian(lambda x, y: (x * y, x.sum() * y), (P(xa), P(ya)))
    jt = torch.autograd.functional.jacobian(lambda x, y: (x * y, x.sum() * y), (T(xa), T(ya)))
    pairs += [(jp[i][j], jt[i][j]) for i in range(2) for j in range(2)]
    for p, t in pairs:
        assert tuple(p.shape) == tuple(t.shape)
        np.testing.assert_allclose(np.asarray(p), t.numpy(), rtol=1e-10, atol=1e-12)


def test_functional_strict_and_create_graph():
    x = pylucid.tensor([1.0, 2.0], dtype=F64)
    with pytest.raises(pylucid.LucidError, match="strict"):
        AF.vjp(lambda t: pylucid.ones(2, dtype=F64), x, pylucid.ones(2, dtype=F64), strict=True)
    out, g = AF.vjp(lambda t: pylucid.ones(2, dtype=F64), x, pylucid.ones(2, dtype=F64))
    assert g.tolist() == [0.0, 0.0]
    xl = pylucid.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    _, g = AF.vjp(lambda t: t ** 3, xl, pylucid.ones(2, dtype=F64), create_graph=True)
    g.sum().backward()
    assert xl.grad.tolist() == [6.0, 12.0]


def test_tensor_hook_replaces_gradient_and_handle_removes():
    x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h1 = x.register_hook(lambda g: seen.append(g.tolist()))
    h2 = x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0]] and x.grad.tolist() == [20.0, 40.0]
    h2.remove()
    h1.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and len(seen) == 1
    y = x * 2  # a non-leaf: the hook sees the gradient flowing into y
    y.register_hook(lambda g: g * 0)
    x.grad = None
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    with pytest.raises(pylucid.LucidError, match="doesn't require gradient"):
        pylucid.ones(1).register_hook(lambda g: g)


def test_node_hooks():
    x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    calls = []
    y.grad_fn.register_prehook(lambda gout: calls.append("pre") or (gout[0] * 2,))
    h = y.grad_fn.register_hook(lambda gin, gout: calls.append(("post", gout[0].tolist())) or None)
    y.sum().backward(retain_graph=True)
    assert calls == ["pre", ("post", [2.0, 2.0])] and x.grad.tolist() == [6.0, 6.0]
    h.remove()
    y.sum().backward()
    assert len(calls) == 3


def test_detect_anomaly_names_the_forward_op():
    x = pylucid.tensor([0.0, 1.0], requires_grad=True)
    with pylucid.autograd.detect_anomaly():
        y = (x.sqrt() * 0).sum()
        with pytest.raises(pylucid.LucidError, match=r"(?s)Function 'SqrtBackward0' returned nan values in its 0th "
                           r"output \(detect_anomaly: the backward of sqrt\).*test_autograd_functional"):
            y.backward()
    y = (x.sqrt() * 0).sum()
    y.backward()  # off again: NaN gradients pass silently, as in PyTorch
    assert np.isnan(x.grad.tolist()[0])


def test_assert_close_defaults_and_message():
    from pylucid.testing import assert_close
    assert_close(pylucid.tensor([1.0, 2.0]), pylucid.tensor([1.0, 2.0 + 1e-6]))
    with pytest.raises(AssertionError, match=r"Tensor-likes are not close!\n\nMismatched elements: 1 / 2 \(50.0%\)"):
        assert_close(pylucid.tensor([1.0, 2.0]), pylucid.tensor([1.0, 2.1]))
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(pylucid.tensor([1.0]), pylucid.tensor([1.0], dtype=F64))
    with pytest.raises(AssertionError, match="shape"):
        assert_close(pylucid.ones(2), pylucid.ones(3))
    assert_close(pylucid.tensor([1.0], dtype=F64), pylucid.tensor([1.0 + 1e-8], dtype=F64))
    assert_close(1.0, 1.0 + 1e-9)
    assert_close([pylucid.ones(1)], [pylucid.ones(1)])
    with pytest.raises(AssertionError):
        assert_close(pylucid.tensor([float("nan")]), pylucid.tensor([float("nan")]))
    assert_close(pylucid.tensor([float("nan")]), pylucid.tensor([float("nan")]), equal_nan=True)


def test_grad_accepts_any_iterable_of_inputs():
    """Guards autograd.grad(loss, params.values()) (MAML with a dict of fast weights, or
    functional_call's parameter dict) raising 'input 0 is a dict_values'."""
    params = {"a": pylucid.tensor([1.0, 2.0], requires_grad=True), "b": pylucid.tensor(3.0, requires_grad=True)}
    loss = (params["a"] * params["b"]).sum()
    ga, gb = pylucid.autograd.grad(loss, params.values(), create_graph=True)
    assert ga.tolist() == [3.0, 3.0] and gb.item() == 3.0
    gen = (p for p in params.values())
    assert [g.tolist() for g in pylucid.autograd.grad([loss], gen)] == [[3.0, 3.0], 3.0]


def test_make_tensor_draws_like_torch():
    """Guards testing.make_tensor's values and random stream against PyTorch's (gradgradcheck draws
    its grad_outputs with it, so a seeded script's later numbers depend on it)."""
    torch = pytest.importorskip("torch")
    cases = [((2, 3), "float64", -1, 1, False), ((4,), "float32", None, None, True), ((3, 2), "int64", -5, 5, False),
             ((5,), "bool", None, None, False)]
    for shape, dt, lo, hi, nc in cases:
        pylucid.manual_seed(3)
        torch.manual_seed(3)
        a = pylucid.testing.make_tensor(shape, dtype=getattr(pylucid, dt), low=lo, high=hi, noncontiguous=nc)
        b = torch.testing.make_tensor(shape, dtype=getattr(torch, dt), device="cpu", low=lo, high=hi, noncontiguous=nc)
        assert a.tolist() == b.tolist() and a.is_contiguous() == b.is_contiguous()
        assert pylucid.rand(3).tolist() == torch.rand(3).tolist()
    with pytest.raises(ValueError):
        pylucid.testing.make_tensor(2, dtype=pylucid.int64, requires_grad=True)


def test_gradgradcheck_draws_grad_outputs_like_torch():
    """Guards the random stream after gradgradcheck: PyTorch draws its grad_outputs with
    make_tensor(low=-1, high=1), one per output that requires grad, so a seeded script's next
    torch.randn differs unless pylucid draws the same."""
    torch = pytest.importorskip("torch")
    for lib in (pylucid, torch):
        lib.manual_seed(0)
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda t: (t.sin(), (t * 2).detach()), (x,))
    assert pylucid.randn(4).tolist() == torch.randn(4).tolist()


def test_grad_is_grads_batched_matches_torch():
    """Guards grad(..., is_grads_batched=True) (refused before): one gradient per batch row of
    grad_outputs, stacked, as PyTorch's vmapped backward returns (the Jacobian from an identity)."""
    torch = pytest.importorskip("torch")
    m = RNG.standard_normal((3, 2))
    res = []
    for lib in (pylucid, torch):
        v = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
        u = lib.tensor([2.0], dtype=lib.float64, requires_grad=True)
        o = lib.tanh(lib.tensor(m) @ v)
        (j,) = lib.autograd.grad(o, v, grad_outputs=lib.eye(3, dtype=lib.float64), is_grads_batched=True,
                                 retain_graph=True)
        jm = lib.autograd.grad(o, (v, u), lib.eye(3, dtype=lib.float64), is_grads_batched=True, materialize_grads=True,
                               retain_graph=True)
        ju = lib.autograd.grad(o, (v, u), lib.eye(3, dtype=lib.float64), is_grads_batched=True, allow_unused=True)
        assert ju[1] is None and tuple(jm[1].shape) == (1,)  # PyTorch's zeros_like(input)
        res.append(j.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)
    with pytest.raises(pylucid.ShapeMismatch):
        v = pylucid.tensor([1.0, 2.0], requires_grad=True)
        pylucid.autograd.grad(v * 2, v, grad_outputs=pylucid.ones(3, 3), is_grads_batched=True)
