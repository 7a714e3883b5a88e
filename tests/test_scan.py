"""cumsum and cumprod: forward against numpy (and torch), float64 gradcheck and gradgradcheck
(cumprod also through zeros), dtype rules, typed errors."""
import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1), ((), 0)])
def test_scan_forward_gradcheck(op, shape, dim):
    """Guards against the scan running along the wrong axis and a wrong (non-reversed) gradient."""
    ref = getattr(np, op)
    check_op(lambda x: getattr(pylucid, op)(x, dim), lambda a: ref(a, axis=dim if a.ndim else None).reshape(a.shape),
             [shape])


def test_cumprod_gradient_with_zeros():
    """Guards against dividing the output by the input, which is NaN/inf where the input is zero."""
    a = np.array([[1.5, 0.0, 3.0, 2.0], [0.0, 4.0, 0.0, -1.0], [0.5, 2.0, 1.5, 0.0]])
    for dim in (0, 1):
        x = pylucid.tensor(a, requires_grad=True)
        assert pylucid.autograd.gradcheck(lambda t: t.cumprod(dim), [x])
        assert pylucid.autograd.gradgradcheck(lambda t: t.cumprod(dim), [x])
    torch = pytest.importorskip("torch")
    g = rand_array(a.shape)
    x = pylucid.tensor(a, requires_grad=True)
    x.cumprod(1).backward(pylucid.tensor(g))
    xt = torch.tensor(a, requires_grad=True)
    xt.cumprod(1).backward(torch.tensor(g))
    np.testing.assert_allclose(np.asarray(x.grad), xt.grad.numpy(), rtol=1e-12)


def test_scan_dtypes():
    """Guards against integer scans overflowing in a narrow type or bool summing as bool."""
    assert pylucid.tensor([True, True, False]).cumsum(0).tolist() == [1, 2, 2]
    assert pylucid.tensor([True, True, False]).cumsum(0).dtype == pylucid.int64
    big = pylucid.tensor([2**40, 2**20])
    assert big.cumprod(0).tolist() == [2**40, 2**60]
    out = pylucid.cumsum(pylucid.tensor([1, 2, 3]), 0, dtype=pylucid.float64)
    assert out.dtype == pylucid.float64 and out.tolist() == [1.0, 3.0, 6.0]
    h = pylucid.ones(3000, dtype=pylucid.float16).cumsum(0)
    assert h.dtype == pylucid.float16 and h[-1].item() == 3000.0  # float accumulation, not half
    x = pylucid.ones(3, requires_grad=True)
    y = x.cumsum(0, dtype=pylucid.float64)
    y.sum().backward()
    assert x.grad.dtype == pylucid.float32 and x.grad.tolist() == [3.0, 2.0, 1.0]


def test_scan_large_and_noncontiguous_against_numpy():
    """Guards against the parallel/chunked paths (inner > 1, many rows) mixing up columns."""
    a = rand_array((70, 300, 7))
    t = pylucid.tensor(a)
    for dim in range(3):
        np.testing.assert_allclose(np.asarray(t.cumsum(dim)), np.cumsum(a, axis=dim), rtol=1e-12, atol=1e-12)
    b = np.ascontiguousarray(a.transpose(2, 0, 1))
    tb = pylucid.tensor(b).permute(1, 2, 0)
    np.testing.assert_allclose(np.asarray(tb.cumsum(1)), np.cumsum(a, axis=1), rtol=1e-12, atol=1e-12)


def test_scan_errors_leave_inputs_intact():
    """Guards against an out-of-range dim reading memory, and a missing dim accepted."""
    x = pylucid.tensor([[1.0, 2.0]])
    with pytest.raises(IndexError, match="cumsum"):
        x.cumsum(2)
    with pytest.raises(IndexError, match="cumprod"):
        pylucid.cumprod(x, -3)
    with pytest.raises(TypeError):
        pylucid.cumsum(x)
    assert x.tolist() == [[1.0, 2.0]]


def test_scan_against_torch():
    """Guards against float32 results drifting from PyTorch's (which accumulates in double)."""
    torch = pytest.importorskip("torch")
    a = rand_array((64, 513)).astype(np.float32)
    for op in ("cumsum", "cumprod"):
        for dim in (0, 1):
            ours = np.asarray(getattr(pylucid.tensor(a), op)(dim))
            theirs = getattr(torch.tensor(a), op)(dim).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
