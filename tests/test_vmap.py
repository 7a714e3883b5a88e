"""pylucid.vmap / pylucid.func.vmap: PyTorch's in_dims/out_dims semantics by one call per batch
element; per-sample gradients with vmap(grad(f)); PyTorch's errors; numbers against torch."""
import numpy as np
import pytest

import pylucid
from pylucid.func import functional_call, grad, vmap


def test_in_dims_out_dims_and_structures():
    x, y = pylucid.arange(12.0).reshape(3, 4), pylucid.arange(4.0)
    np.testing.assert_array_equal(vmap(pylucid.dot, in_dims=(0, None))(x, y).numpy(), (x @ y).numpy())
    np.testing.assert_array_equal(vmap(lambda a: a * 2, in_dims=1, out_dims=1)(x).numpy(), (x * 2).numpy())
    s, t = vmap(lambda a, b: (a + b, a.sum()))(x, x)
    assert s.shape == (3, 4) and t.tolist() == x.sum(1).tolist()
    d = vmap(lambda p: {"w": p["w"] * 2})({"w": x})
    assert d["w"].shape == (3, 4)
    assert vmap(vmap(pylucid.outer))(pylucid.ones(2, 3, 4), pylucid.ones(2, 3, 5)).shape == (2, 3, 4, 5)
    assert pylucid.vmap is vmap


def test_per_sample_gradients_equal_a_loop():
    pylucid.manual_seed(0)
    model = pylucid.nn.Linear(4, 2)
    params = {k: v.detach() for k, v in model.named_parameters()}
    X, Y = pylucid.randn(5, 4), pylucid.randn(5, 2)

    def loss(p, xi, yi):
        return pylucid.nn.functional.mse_loss(functional_call(model, p, (xi[None],)), yi[None])

    g = vmap(grad(loss), in_dims=(None, 0, 0))(params, X, Y)
    for i in range(5):
        model.zero_grad()
        pylucid.nn.functional.mse_loss(model(X[i:i + 1]), Y[i:i + 1]).backward()
        np.testing.assert_allclose(g["weight"][i].numpy(), model.weight.grad.numpy(), rtol=1e-6)


def test_gradient_flows_through_vmap():
    x = pylucid.randn(3, 4, dtype=pylucid.float64, requires_grad=True)
    assert pylucid.autograd.gradcheck(lambda t: vmap(lambda r: r.sin() * r.sum())(t), (x,))


def test_randomness_same_replays_the_generator():
    pylucid.manual_seed(0)
    out = vmap(lambda a: a + pylucid.rand(()), randomness="same")(pylucid.zeros(3))
    assert out[0].item() == out[1].item() == out[2].item()
    out = vmap(lambda a: a + pylucid.rand(()), randomness="different")(pylucid.zeros(3))
    assert len(set(out.tolist())) == 3


def test_errors():
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        vmap(lambda a, b: a + b)(pylucid.ones(2), pylucid.ones(3))
    with pytest.raises(ValueError, match="in_dims"):
        vmap(lambda a: a, in_dims=(0, 0))(pylucid.ones(2))
    with pytest.raises(ValueError, match="at least one input"):
        vmap(lambda a: a, in_dims=None)(pylucid.ones(2))
    with pytest.raises(ValueError, match="must only return Tensors"):
        vmap(lambda a: 3)(pylucid.ones(2))
    with pytest.raises(ValueError, match="randomness"):
        vmap(lambda a: a, randomness="x")


def test_against_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    for lib_out, ref in [
        (vmap(lambda m: m @ m.T)(pylucid.from_numpy(a)), torch.vmap(lambda m: m @ m.T)(torch.from_numpy(a))),
        (vmap(lambda m: m.softmax(-1), in_dims=2, out_dims=0)(pylucid.from_numpy(a)),
         torch.vmap(lambda m: m.softmax(-1), in_dims=2, out_dims=0)(torch.from_numpy(a))),
    ]:
        np.testing.assert_allclose(lib_out.numpy(), ref.numpy(), rtol=1e-6, atol=1e-6)


def test_func_jvp_and_hvp():
    from pylucid.func import jvp

    x = pylucid.tensor([0.3, 1.2, -0.7], dtype=pylucid.float64)
    t = pylucid.tensor([1.0, 0.5, 2.0], dtype=pylucid.float64)

    def f(v):
        return (v.sin() * v ** 2).sum()

    def df(v):  # f'(x) by hand
        return v.cos() * v ** 2 + 2 * v * v.sin()

    def d2f(v):
        return -v.sin() * v ** 2 + 4 * v * v.cos() + 2 * v.sin()

    out, j = jvp(f, (x,), (t,))
    assert out.item() == pytest.approx(f(x).item()) and j.item() == pytest.approx((df(x) * t).sum().item())
    _, hv = jvp(grad(f), (x,), (t,))  # Hessian-vector product (the Hessian is diagonal here)
    np.testing.assert_allclose(hv.numpy(), (d2f(x) * t).numpy(), rtol=1e-12)
    out, j, aux = jvp(lambda v: (v.exp(), v.sum()), (x,), (t,), has_aux=True)
    np.testing.assert_allclose(j.numpy(), (x.exp() * t).numpy(), rtol=1e-12)
    assert aux.item() == pytest.approx(0.8) and not j.requires_grad
    with pytest.raises(pylucid.LucidError, match="tuple"):
        jvp(f, x, t)


def test_stack_module_state_ensemble_matches_each_model():
    """Guards against the model-ensembling recipe (stack_module_state + vmap over functional_call)
    missing, or giving other numbers than calling each model."""
    from pylucid.func import stack_module_state

    pylucid.manual_seed(0)
    models = [pylucid.nn.Sequential(pylucid.nn.Linear(3, 4), pylucid.nn.BatchNorm1d(4)) for _ in range(3)]
    params, buffers = stack_module_state(models)
    assert list(params) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert params["0.weight"].shape == (3, 4, 3) and params["0.weight"].is_leaf and params["0.weight"].requires_grad
    assert buffers["1.running_mean"].shape == (3, 4) and not buffers["1.running_mean"].requires_grad
    x = pylucid.randn(5, 3)
    for m in models:
        m.eval()
    params, buffers = stack_module_state(models)
    out = vmap(lambda p, b, v: functional_call(models[0], (p, b), (v,)), in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    out.sum().backward()
    assert params["0.bias"].grad.shape == (3, 4) and models[0][0].bias.grad is None
    with pytest.raises(RuntimeError, match="at least one model"):
        stack_module_state([])
    models[1].train()
    with pytest.raises(RuntimeError, match="training/eval mode"):
        stack_module_state(models)
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([pylucid.nn.Linear(2, 2), pylucid.nn.Bilinear(2, 2, 2)])


def test_jacrev_of_dict_arguments_and_tuple_outputs():
    """Guards against jacrev/hessian refusing a dict of parameters or a tuple output (the
    neural-tangent-kernel recipe: vmap(jacrev(f))(params, x) with params a dict)."""
    from pylucid.func import hessian, jacrev

    pylucid.manual_seed(1)
    W = pylucid.randn(2, 3, dtype=pylucid.float64)
    x = pylucid.randn(3, dtype=pylucid.float64)

    def f(p, v):
        return (p["w"] @ v).tanh() * p["s"]

    p = {"w": W, "s": pylucid.tensor(1.5, dtype=pylucid.float64)}
    j = jacrev(f)(p, x)
    assert set(j) == {"w", "s"} and j["w"].shape == (2, 2, 3) and j["s"].shape == (2,)
    ref = pylucid.autograd.functional.jacobian(lambda w, s: f({"w": w, "s": s}, x), (W, p["s"]))
    np.testing.assert_allclose(j["w"].numpy(), ref[0].numpy(), rtol=1e-12)
    np.testing.assert_allclose(j["s"].numpy(), ref[1].numpy(), rtol=1e-12)
    a, b = jacrev(lambda v: (v.sin(), v.prod()))(x)
    np.testing.assert_allclose(a.numpy(), np.diag(x.cos().numpy()), rtol=1e-12)
    assert b.shape == (3,)
    h = hessian(lambda q: (q["w"] ** 3).sum())({"w": x})
    np.testing.assert_allclose(h["w"]["w"].numpy(), np.diag(6 * x.numpy()), rtol=1e-12)
    batched = vmap(jacrev(f), in_dims=(None, 0))(p, pylucid.randn(4, 3, dtype=pylucid.float64))
    assert batched["w"].shape == (4, 2, 2, 3)
    torch = pytest.importorskip("torch")
    tj = torch.func.jacrev(lambda q, v: (q["w"] @ v).tanh() * q["s"])(
        {"w": torch.from_numpy(W.numpy()), "s": torch.tensor(1.5, dtype=torch.float64)}, torch.from_numpy(x.numpy()))
    np.testing.assert_allclose(j["w"].numpy(), tj["w"].numpy(), rtol=1e-12)
