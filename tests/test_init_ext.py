"""nn.init.trunc_normal_ (both of PyTorch's samplers), orthogonal_, dirac_ and sparse_: the same
draws as PyTorch's for the same seed (skipped without torch), and without torch the properties
that define them (bounds, orthogonality, identity convolution, zeros per column)."""
import numpy as np
import pylucid
import pytest
from pylucid.nn import init


def _draw(lib, fn, shape, seed=3, **kw):
    lib.manual_seed(seed)
    w = lib.empty(*shape)
    getattr(lib.nn.init, fn)(w, **kw)
    return np.asarray(w.detach().numpy())


@pytest.mark.parametrize("fn,shape,kw", [
    ("trunc_normal_", (64, 33), {"std": 0.02}),                      # wide interval: normal + redraws
    ("trunc_normal_", (40, 20), {"mean": 0.5, "std": 1.0, "a": -1.0, "b": 1.5}),
    ("trunc_normal_", (50, 10), {"mean": 0.0, "std": 1.0, "a": 1.0, "b": 1.4}),  # narrow: rejection
    ("orthogonal_", (6, 10), {}), ("orthogonal_", (12, 4), {"gain": 2.0}), ("orthogonal_", (4, 2, 3), {}),
    ("sparse_", (10, 6), {"sparsity": 0.3, "std": 0.5}),
])
def test_same_draws_as_torch(fn, shape, kw):
    """Guards against a sampler that consumes the generator in another order than PyTorch's."""
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(_draw(pylucid, fn, shape, **kw), _draw(torch, fn, shape, **kw), rtol=1e-5, atol=1e-6)
    if fn == "trunc_normal_":
        np.testing.assert_array_equal(_draw(pylucid, fn, shape, **kw), _draw(torch, fn, shape, **kw))


def test_dirac_equals_torch():
    torch = pytest.importorskip("torch")
    for shape, groups in (((4, 2, 3, 3), 1), ((6, 3, 5), 2), ((2, 2, 3, 3, 3), 1)):
        a, b = pylucid.empty(*shape), torch.empty(*shape)
        init.dirac_(a, groups)
        torch.nn.init.dirac_(b, groups)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_properties_without_torch():
    """Bounds of the truncated normal, Q^T Q = gain^2 I, a Dirac conv passes its input through,
    ceil(sparsity * rows) zeros per column; all return the tensor itself and record no graph."""
    pylucid.manual_seed(0)
    w = pylucid.empty(200, 50, requires_grad=True)
    assert init.trunc_normal_(w, mean=0.1, std=0.5, a=-0.2, b=0.3) is w and w.grad_fn is None
    assert float(w.min()) >= -0.2 and float(w.max()) <= 0.3
    q = init.orthogonal_(pylucid.empty(8, 3), gain=1.5).numpy()
    np.testing.assert_allclose(q.T @ q, 2.25 * np.eye(3), atol=1e-5)
    conv = pylucid.nn.Conv2d(3, 3, 3, padding=1, bias=False)
    init.dirac_(conv.weight)
    x = pylucid.randn(2, 3, 5, 5)
    np.testing.assert_allclose(conv(x).detach().numpy(), x.numpy(), atol=1e-6)
    s = init.sparse_(pylucid.empty(10, 4), sparsity=0.25)
    assert (s.numpy() == 0).sum(0).tolist() == [3, 3, 3, 3]


def test_errors():
    with pytest.raises(ValueError, match="orthogonal_"):
        init.orthogonal_(pylucid.empty(3))
    with pytest.raises(ValueError, match="dirac_"):
        init.dirac_(pylucid.empty(3, 3))
    with pytest.raises(ValueError, match="dirac_"):
        init.dirac_(pylucid.empty(3, 3, 3), groups=2)
    with pytest.raises(ValueError, match="sparse_"):
        init.sparse_(pylucid.empty(3, 3, 3), 0.5)
