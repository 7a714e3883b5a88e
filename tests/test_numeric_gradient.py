"""pylucid.gradient (PyTorch's torch.gradient): central differences with one-sided ends, against
numpy.gradient, differentiable; and the keyword spelling of Tensor.flip(dims=...)."""
import numpy as np
import pytest

import pylucid


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(edge_order):
    a = np.random.default_rng(0).standard_normal((5, 6))
    t = pylucid.tensor(a)
    got = pylucid.gradient(t, edge_order=edge_order)
    want = np.gradient(a, edge_order=edge_order)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-12)
    (g1,) = pylucid.gradient(t, spacing=0.5, dim=1, edge_order=edge_order)
    np.testing.assert_allclose(g1.numpy(), np.gradient(a, 0.5, axis=1, edge_order=edge_order), rtol=1e-12)
    x = np.array([0.0, 1.0, 3.0, 4.0, 7.0, 7.5])
    (g2,) = pylucid.gradient(t, spacing=(pylucid.tensor(x),), dim=-1, edge_order=edge_order)
    np.testing.assert_allclose(g2.numpy(), np.gradient(a, x, axis=-1, edge_order=edge_order), rtol=1e-12)
    g3 = pylucid.gradient(t, spacing=[2.0, 3.0])
    np.testing.assert_allclose(g3[1].numpy(), np.gradient(a, 2.0, 3.0)[1], rtol=1e-12)


def test_gradient_is_differentiable_and_checks_input():
    t = pylucid.randn(6, dtype=pylucid.float64, requires_grad=True)
    assert pylucid.autograd.gradcheck(lambda v: pylucid.gradient(v, edge_order=2)[0], (t,))
    with pytest.raises(ValueError, match="edge_order"):
        pylucid.gradient(t, edge_order=3)
    with pytest.raises(ValueError, match="at least edge_order"):
        pylucid.gradient(pylucid.ones(2), edge_order=2)
    assert pylucid.gradient(pylucid.tensor([1, 4, 9]))[0].dtype == pylucid.float32


def test_gradient_against_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    for kw in ({}, {"spacing": 2.0}, {"dim": 1, "edge_order": 2}):
        for g, w in zip(pylucid.gradient(pylucid.from_numpy(a), **kw), torch.gradient(torch.from_numpy(a), **kw)):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-6)


def test_flip_dims_keyword():
    b = pylucid.arange(6).reshape(2, 3)
    assert b.flip(dims=(0, 1)).tolist() == [[5, 4, 3], [2, 1, 0]]
    assert b.flip(0, 1).tolist() == b.flip([0, 1]).tolist() == b.flip(dims=[0, 1]).tolist()
    with pytest.raises(TypeError):
        b.flip(0, dims=(1,))
