"""Edge values where PyTorch's answer is a convention rather than arithmetic: NaN through var/std,
number exponents of pow taken as sqrt/rsqrt/products, the poles of lgamma/digamma, negative and
zero vector-norm orders, in-place ops on empty tensors, clamp_ with tensor bounds, round of int64,
heaviside broadcasting, histogram's default bins. Expected values are PyTorch 2.13's."""
import math

import numpy as np
import pytest

import pylucid

nan, inf = float("nan"), float("inf")


def same(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all((a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("dtype", [pylucid.float32, pylucid.float64])
def test_var_std_propagate_nan_and_inf(dtype):
    x = pylucid.tensor([[1.0, nan, 2.0], [1.0, inf, 2.0], [1.0, 2.0, 4.0]], dtype=dtype)
    assert same(x.var(dim=1).tolist()[:2], [nan, nan])
    assert same(x.std(dim=1).tolist()[:2], [nan, nan])
    assert math.isnan(x.var().item()) and math.isnan(x.std().item())
    v, m = pylucid.var_mean(x, dim=1)
    assert math.isnan(v[0].item()) and math.isnan(m[0].item())
    assert x[2].var().item() == pytest.approx(7 / 3)


def test_pow_number_exponents_follow_pytorch():
    x = pylucid.tensor([-0.0, 0.0, -inf, inf, -2.0, 4.0, nan])
    expected = {
        0.5: [-0.0, 0.0, nan, inf, nan, 2.0, nan],
        -0.5: [-inf, inf, nan, 0.0, nan, 0.5, nan],
        2: [0.0, 0.0, inf, inf, 4.0, 16.0, nan],
        3: [-0.0, 0.0, -inf, inf, -8.0, 64.0, nan],
        -1: [-inf, inf, -0.0, 0.0, -0.5, 0.25, nan],
        -2: [inf, inf, 0.0, 0.0, 0.25, 0.0625, nan],
        1.5: [0.0, 0.0, inf, inf, nan, 8.0, nan],
    }
    for e, want in expected.items():
        assert same((x ** e).tolist(), want), e
        assert same(pylucid.pow(x, e).tolist(), want), e
    # A tensor exponent is std::pow throughout: pow(-0, 0.5) = +0.
    assert same(pylucid.pow(x, pylucid.full_like(x, 0.5)).tolist()[:1], [0.0])


def test_pow_cube_and_inverse_square_round_as_products():
    a = np.random.default_rng(0).uniform(0.01, 3.0, 1000).astype(np.float32)
    t = pylucid.tensor(a)
    assert np.array_equal((t ** 3).numpy(), a * a * a)
    assert np.array_equal((t ** -2).numpy(), np.float32(1) / (a * a))


def test_pow_gradcheck_at_special_exponents():
    x = pylucid.tensor([0.3, 1.7, 2.5], dtype=pylucid.float64, requires_grad=True)
    for e in (0.5, -0.5, 2, 3, -1, -2, 1.5, 2.5):
        assert pylucid.autograd.gradcheck(lambda t: t ** e, (x,))


def test_lgamma_digamma_poles_and_infinities():
    x = pylucid.tensor([-0.0, 0.0, -1.0, -inf, inf, nan], dtype=pylucid.float64)
    assert same(pylucid.lgamma(x).tolist(), [inf, inf, inf, inf, inf, nan])
    assert same(pylucid.digamma(pylucid.tensor([-0.0, 0.0, -1.0])).tolist(), [inf, -inf, nan])


def test_vector_norm_any_order():
    x = pylucid.tensor([1.0, 2.0, 0.5], dtype=pylucid.float64, requires_grad=True)
    assert pylucid.linalg.vector_norm(x, -1).item() == pytest.approx(1 / (1 + 0.5 + 2))
    assert pylucid.linalg.vector_norm(x, -2).item() == pytest.approx((1 + 0.25 + 4) ** -0.5)
    assert pylucid.linalg.vector_norm(x, 0).item() == 3.0
    assert pylucid.norm(x, -1).item() == pytest.approx(1 / 3.5)
    assert pylucid.autograd.gradcheck(lambda t: pylucid.linalg.vector_norm(t, -1.5), (x,))


def test_inplace_on_empty_numpy_tensor():
    t = pylucid.from_numpy(np.zeros((0, 3), np.float32))  # numpy gives zero strides
    assert t.abs_().shape == (0, 3)
    assert t.clamp_(min=0.0).shape == (0, 3)


def test_clamp_inplace_tensor_bounds():
    x = pylucid.tensor([1.0, 5.0, -3.0])
    r = x.clamp_(pylucid.zeros(3), pylucid.full((3,), 2.0))
    assert r is x and x.tolist() == [1.0, 2.0, 0.0]
    x = pylucid.tensor([1.0, 5.0, -3.0])
    x.clamp_(max=pylucid.tensor(2.0))
    assert x.tolist() == [1.0, 2.0, -3.0]
    i = pylucid.tensor([1, 5, -3])
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clamp_(pylucid.zeros(3))
    assert i.tolist() == [1, 5, -3]
    with pytest.raises(ValueError):
        pylucid.zeros(3).clamp_(pylucid.zeros(2, 3))


def test_round_int64_square_bool_heaviside_histogram():
    assert pylucid.round(pylucid.tensor([15, 26])).tolist() == [15, 26]
    assert pylucid.round(pylucid.tensor([15, 26])).dtype == pylucid.int64
    sq = pylucid.square(pylucid.tensor([True, False]))
    assert sq.dtype == pylucid.int64 and sq.tolist() == [1, 0]
    h = pylucid.heaviside(pylucid.tensor(0.0), pylucid.tensor([1.0, 2.0, 3.0]))
    assert h.tolist() == [1.0, 2.0, 3.0]
    assert pylucid.histogram(pylucid.tensor([1.0, 2.0, 3.0])).hist.shape == (100,)


def test_against_torch():
    torch = pytest.importorskip("torch")
    a = np.array([[1.5, -0.0, nan], [inf, -inf, 2.0], [0.25, 3.0, -1.0]], np.float32)
    for name, args in [("var", ()), ("std", (1,)), ("pow", (0.5,)), ("pow", (-0.5,)), ("pow", (3,)), ("pow", (-2,)),
                       ("lgamma", ()), ("digamma", ()), ("square", ())]:
        want = getattr(torch, name)(torch.from_numpy(a), *args).numpy()
        got = getattr(pylucid, name)(pylucid.from_numpy(a), *args).numpy()
        if name in ("lgamma", "digamma"):  # PyTorch's float32 forms are a few ulp off away from the poles
            assert np.allclose(got, want, rtol=1e-5, equal_nan=True), name  # (infinities compare by sign)
        else:
            assert same(got, want), name


def _grad(fn, pts):
    x = pylucid.tensor(pts, dtype=pylucid.float64, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.tolist()


def test_gradients_at_kinks_follow_pytorch():
    assert _grad(lambda x: x.sign(), [-1.0, 0.0, 2.0]) == [0.0, 0.0, 0.0]  # a node with zero gradient
    assert "SignBackward0" in repr(pylucid.tensor([1.0], requires_grad=True).sign())
    assert _grad(pylucid.nn.functional.hardswish, [-3.0, 3.0, 0.0]) == [0.0, 1.0, 0.5]
    assert _grad(lambda x: pylucid.atan2(x, x), [0.0]) == [0.0]
    assert same(_grad(lambda x: x.abs().sqrt(), [0.0]), [nan])  # g sgn(x) with g = inf, as PyTorch
    lo, hi = pylucid.zeros(4, dtype=pylucid.float64), pylucid.ones(4, dtype=pylucid.float64)
    # the whole gradient at a bound (PyTorch's min <= x <= max), not half of it
    assert _grad(lambda x: pylucid.clamp(x, lo, hi), [-1.0, 0.0, 1.0, 2.0]) == [0.0, 1.0, 1.0, 0.0]
    lo = pylucid.zeros(4, dtype=pylucid.float64, requires_grad=True)
    x = pylucid.tensor([-1.0, 0.0, 0.5, 2.0], dtype=pylucid.float64)
    pylucid.clamp(x, min=lo).sum().backward()
    assert lo.grad.tolist() == [1.0, 0.0, 0.0, 0.0]
    assert pylucid.clamp(pylucid.tensor([0.5]), pylucid.tensor([2.0]), pylucid.tensor([1.0])).item() == 1.0


def test_kink_gradients_against_torch():
    torch = pytest.importorskip("torch")
    pts = [-3.0, -1.0, 0.0, 0.0, 1.0, 3.0]
    for expr in ("x.sign()", "x.abs()", "x.abs().sqrt()", "torch.atan2(x, x)", "F.hardswish(x)", "F.relu6(x)",
                 "F.hardtanh(x)", "torch.clamp(x, torch.zeros_like(x), torch.ones_like(x))", "x.clamp(0, 1)"):
        got = []
        for lib in (torch, pylucid):
            x = lib.tensor(pts, dtype=lib.float64, requires_grad=True)
            eval(expr, {"torch": lib, "x": x, "F": lib.nn.functional}).sum().backward()
            got.append(x.grad.tolist())
        assert same(got[1], got[0]), expr


def test_linspace_single_point_is_start():
    assert pylucid.linspace(0, 1, 1).tolist() == [0.0]
    assert pylucid.linspace(5, -2, 1, dtype=pylucid.float64).tolist() == [5.0]
    assert pylucid.logspace(2.5, 7, 1).tolist() == pytest.approx([10 ** 2.5])
