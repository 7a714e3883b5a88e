"""Tensor.unfold as a view: shares storage (writes show through both ways), PyTorch's shapes and
strides, gradients (overlapping windows accumulate) of every order, typed errors."""
import numpy as np
import pytest

import pylucid
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(5)


def _ref(a, dim, size, step):
    """numpy: the windows along dim as a new last axis."""
    a = np.moveaxis(a, dim, -1)
    n = a.shape[-1]
    idx = np.arange(0, n - size + 1, step)[:, None] + np.arange(size)[None, :]
    w = a[..., idx]  # (..., count, size)
    return np.moveaxis(w, -2, dim if dim >= 0 else dim - 1)


@pytest.mark.parametrize("shape,dim,size,step", [((6,), 0, 3, 2), ((2, 7, 3), 1, 3, 1), ((2, 7, 3), -1, 2, 1),
                                                 ((4, 5), 0, 4, 3), ((3, 8), 1, 8, 1), ((3, 8), 1, 1, 5)])
def test_values_strides_and_storage(shape, dim, size, step):
    a = RNG.standard_normal(shape)
    x = pylucid.tensor(a)
    u = x.unfold(dim, size, step)
    np.testing.assert_array_equal(u.numpy(), _ref(a, dim % len(shape), size, step))
    assert u.data_ptr() == x.data_ptr()
    d = dim % len(shape)
    expect = list(x.stride())
    expect[d] *= step
    assert list(u.stride()) == expect + [x.stride()[d]]


def test_writes_show_through_both_ways():
    x = pylucid.arange(6.0)
    u = x.unfold(0, 2, 2)
    u.mul_(10)
    assert x.tolist() == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    x[1] = -1.0
    assert u[0, 1].item() == -1.0


def test_of_a_non_contiguous_tensor():
    a = RNG.standard_normal((5, 4))
    x = pylucid.tensor(a).t()
    assert not x.is_contiguous()
    u = x.unfold(1, 2, 1)
    np.testing.assert_array_equal(u.numpy(), _ref(a.T, 1, 2, 1))
    assert u.data_ptr() == x.data_ptr()


def test_overlapping_windows_accumulate_gradient():
    x = pylucid.arange(5.0, requires_grad=True)
    x.unfold(0, 3, 1).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0, 2.0, 1.0]


@pytest.mark.parametrize("dim,size,step", [(1, 3, 1), (1, 2, 3), (0, 2, 1), (2, 1, 1)])
def test_gradcheck_and_gradgradcheck(dim, size, step):
    x = pylucid.tensor(RNG.standard_normal((3, 7, 2)), requires_grad=True)
    assert gradcheck(lambda t: t.unfold(dim, size, step), (x,))
    assert gradgradcheck(lambda t: t.unfold(dim, size, step) ** 2, (x,))
    xt = pylucid.from_numpy(np.ascontiguousarray(RNG.standard_normal((2, 7, 3)))).transpose(0, 2).requires_grad_(True)
    assert gradcheck(lambda t: t.unfold(dim, size, step), (xt,))


def test_zero_dim_and_empty():
    assert pylucid.tensor(3.0).unfold(0, 1, 1).tolist() == [3.0]
    assert tuple(pylucid.tensor(3.0).unfold(0, 0, 1).shape) == (0,)
    assert tuple(pylucid.arange(6.0).unfold(0, 0, 2).shape) == (4, 0)


def test_errors():
    x = pylucid.arange(6.0)
    with pytest.raises(pylucid.ShapeMismatch, match="maximum size for tensor at dimension 0 is 6 but size is 7"):
        x.unfold(0, 7, 1)
    with pytest.raises(pylucid.LucidError, match="step is 0"):
        x.unfold(0, 2, 0)
    with pytest.raises(IndexError):
        x.unfold(1, 2, 1)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_matches_torch():
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 9, 3)).astype(np.float32)
    g = None
    for dim, size, step in ((1, 4, 2), (1, 3, 1), (-1, 2, 1)):
        tx, lx = torch.tensor(a, requires_grad=True), pylucid.tensor(a, requires_grad=True)
        tu, lu = tx.unfold(dim, size, step), lx.unfold(dim, size, step)
        assert tuple(tu.shape) == tuple(lu.shape) and tuple(tu.stride()) == tuple(lu.stride())
        np.testing.assert_array_equal(lu.detach().numpy(), tu.detach().numpy())
        g = RNG.standard_normal(tuple(tu.shape)).astype(np.float32)
        (tu * torch.tensor(g)).sum().backward()
        (lu * pylucid.tensor(g)).sum().backward()
        np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)
