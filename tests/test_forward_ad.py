"""pylucid.autograd.forward_ad: dual tensors whose tangents come back from unpack_dual as J t
(computed by double backward), PyTorch's API and errors, numbers against hand derivatives and torch."""
import numpy as np
import pytest

import pylucid
import pylucid.autograd.forward_ad as fwAD


def test_tangent_is_the_directional_derivative():
    x0 = pylucid.tensor([0.3, 1.2, -0.7], dtype=pylucid.float64)
    t = pylucid.tensor([1.0, 0.5, 2.0], dtype=pylucid.float64)
    with fwAD.dual_level():
        x = fwAD.make_dual(x0, t)
        y = x.sin() * x ** 2
        p, tan = fwAD.unpack_dual(y)
        np.testing.assert_allclose(p.detach().numpy(), (x0.sin() * x0 ** 2).numpy())
        want = (x0.cos() * x0 ** 2 + 2 * x0 * x0.sin()) * t
        np.testing.assert_allclose(tan.numpy(), want.numpy(), rtol=1e-12)
        assert fwAD.unpack_dual(pylucid.ones(3)).tangent is None
        assert fwAD.unpack_dual(x).tangent is t
        u = fwAD.make_dual(pylucid.tensor(2.0, dtype=pylucid.float64), pylucid.tensor(3.0, dtype=pylucid.float64))
        both = fwAD.unpack_dual((x * u).sum()).tangent.item()  # two duals: their directions add
        assert both == pytest.approx(float((t * 2.0).sum() + 3.0 * x0.sum()))


def test_reverse_mode_still_flows_through_a_dual():
    w = pylucid.tensor([1.0, 2.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(w, pylucid.tensor([1.0, 1.0]))
        y = (d * d).sum()
        assert fwAD.unpack_dual(y).tangent.item() == pytest.approx(6.0)
        y.backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_errors_and_levels():
    with pytest.raises(pylucid.LucidError, match="level"):
        fwAD.make_dual(pylucid.ones(2), pylucid.ones(2))
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="different size"):
            fwAD.make_dual(pylucid.ones(2), pylucid.ones(3))
        lvl = fwAD.enter_dual_level()
        with pytest.raises(pylucid.LucidError, match="not the last"):
            fwAD.exit_dual_level(level=lvl - 1)
        fwAD.exit_dual_level(level=lvl)


def test_against_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((4, 3))
    t = np.random.default_rng(1).standard_normal((4, 3))
    got = []
    for lib in (torch, pylucid):
        with lib.autograd.forward_ad.dual_level():
            x = lib.autograd.forward_ad.make_dual(lib.tensor(a), lib.tensor(t))
            y = lib.nn.functional.softmax(x.tanh() @ lib.tensor(a.T), dim=-1).log().sum(0)
            got.append(lib.autograd.forward_ad.unpack_dual(y).tangent.numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-10, atol=1e-12)
