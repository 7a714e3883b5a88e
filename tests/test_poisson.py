"""pylucid.poisson: moments of the samples, seeded reproducibility, PyTorch's exact draws (and
generator state afterwards), zero gradient, typed errors."""
import numpy as np
import pytest

import pylucid


@pytest.mark.parametrize("rate", [0.3, 4.0, 9.5, 10.0, 57.0, 2000.0])
def test_moments(rate):
    pylucid.manual_seed(0)
    x = pylucid.poisson(pylucid.full((20000,), rate, dtype=pylucid.float64)).numpy()
    assert (x == np.round(x)).all() and (x >= 0).all()
    se = np.sqrt(rate / x.size)
    assert abs(x.mean() - rate) < 5 * se
    assert abs(x.var() / rate - 1) < 0.06


def test_zero_rate_shape_dtype_and_seeding():
    r = pylucid.tensor([[0.0, 1.5], [12.0, 0.0]])
    pylucid.manual_seed(1)
    a = pylucid.poisson(r)
    assert a.dtype == pylucid.float32 and tuple(a.shape) == (2, 2)
    assert a[0, 0].item() == 0 and a[1, 1].item() == 0
    pylucid.manual_seed(1)
    assert pylucid.poisson(r).tolist() == a.tolist()
    g = pylucid.Generator().manual_seed(7)
    h = pylucid.Generator().manual_seed(7)
    assert pylucid.poisson(r, generator=g).tolist() == pylucid.poisson(r, generator=h).tolist()


def test_gradient_is_zero():
    r = pylucid.tensor([2.0, 30.0], requires_grad=True)
    pylucid.poisson(r).sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]


def test_errors():
    with pytest.raises(pylucid.LucidError, match="non-negative"):
        pylucid.poisson(pylucid.tensor([1.0, -1.0]))
    with pytest.raises(pylucid.LucidError, match="non-negative"):
        pylucid.poisson(pylucid.tensor([float("nan")]))
    with pytest.raises(TypeError, match="poisson"):
        pylucid.poisson(pylucid.tensor([1, 2]))


def test_matches_torch_draw_for_draw():
    torch = pytest.importorskip("torch")
    rates = np.concatenate([np.random.default_rng(0).uniform(0, 40, 300), [0.0, 9.99, 10.0, 1e4]])
    torch.manual_seed(5)
    pylucid.manual_seed(5)
    for dt in (np.float64, np.float32):
        a = torch.poisson(torch.tensor(rates.astype(dt)))
        b = pylucid.poisson(pylucid.tensor(rates.astype(dt)))
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    # The generator has advanced by exactly as many draws.
    assert torch.rand(3).tolist() == pylucid.rand(3).tolist()
