"""softmax / log_softmax: forward vs numpy, float64 gradcheck along every kind of dim, strided
and non-contiguous inputs, the threaded paths, -inf rows, autocast dtypes, errors, PyTorch."""

import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from helpers import check_op, non_contiguous, rand_array

F64 = pylucid.float64


def _torch():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(
        1
    )  # tiny calls: torch's thread pool only adds wake-up latency on a busy machine
    return torch


def softmax_ref(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax_ref(x, dim):
    m = x.max(axis=dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


FNS = [(F.softmax, softmax_ref), (F.log_softmax, log_softmax_ref)]


@pytest.mark.parametrize("fn,ref", FNS)
@pytest.mark.parametrize(
    "shape,dim",
    [((3, 4), -1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 2), 0), ((5,), 0), ((2, 1, 3), 1)],
)
def test_forward_gradcheck_noncontig_and_accumulation(fn, ref, shape, dim):
    """Guards against a wrong backward along a non-last dim (the inner > 1 path) or for strided input."""
    check_op(lambda x: fn(x, dim), lambda a: ref(a, dim), [shape])


@pytest.mark.parametrize("fn,ref", FNS)
def test_transposed_input_read_through_strides(fn, ref):
    """Guards against the strided fast path (no copy for a transposed matrix) reading the wrong elements."""
    a = rand_array((5, 7))
    t = non_contiguous(a)
    assert not t.is_contiguous()
    for dim in (0, 1):
        np.testing.assert_allclose(np.asarray(fn(t, dim)), ref(a, dim), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn,ref", FNS)
def test_permuted_3d_input_falls_back_to_a_copy(fn, ref):
    """Guards against outer dims that do not collapse to one stride being read as if they did."""
    a = rand_array((3, 4, 5))
    t = pylucid.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1))).permute(1, 2, 0)
    for dim in (0, 1, 2, -1):
        np.testing.assert_allclose(np.asarray(fn(t, dim)), ref(a, dim), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn,ref", FNS)
@pytest.mark.parametrize("shape,dim", [((300, 512), -1), ((4, 64, 600), 1), ((1, 40, 2000), 1)])
def test_large_inputs_split_over_threads(fn, ref, shape, dim):
    """Guards against the OpenMP row/chunk split dropping or repeating rows (forward and backward)."""
    a = np.random.default_rng(1).normal(size=shape).astype(np.float32)
    x = pylucid.from_numpy(a).requires_grad_()
    y = fn(x, dim)
    np.testing.assert_allclose(
        np.asarray(y.detach()), ref(a.astype(np.float64), dim), rtol=2e-5, atol=2e-6
    )
    g = np.random.default_rng(2).normal(size=shape).astype(np.float32)
    y.backward(pylucid.from_numpy(g))
    yd = ref(a.astype(np.float64), dim)
    gd = g.astype(np.float64)
    if fn is F.softmax:
        expect = yd * (gd - (gd * yd).sum(axis=dim, keepdims=True))
    else:
        expect = gd - np.exp(yd) * gd.sum(axis=dim, keepdims=True)
    np.testing.assert_allclose(np.asarray(x.grad), expect, rtol=1e-4, atol=1e-5)


def test_extreme_logits_do_not_overflow():
    """Guards against exp overflow when the row max is not subtracted."""
    x = pylucid.tensor([[1000.0, 0.0], [-1000.0, -1001.0]], dtype=F64)
    np.testing.assert_allclose(
        np.asarray(F.softmax(x, -1)), [[1.0, 0.0], softmax_ref(np.array([-1000.0, -1001.0]), 0)]
    )
    np.testing.assert_allclose(
        np.asarray(F.log_softmax(x, -1)),
        [[0.0, -1000.0], [-0.31326168751822286, -1.3132616875182228]],
    )


def test_float32_exp_is_accurate_over_its_whole_range():
    """Guards against the vectorised float exp (rows of >= 32) losing accuracy anywhere in
    [-87, 0] (its range reduction and polynomial), or not giving exactly 0 for -inf / far-negative
    inputs; and against the short-row path disagreeing with it."""
    x = np.linspace(-87.0, 0.0, 100_001).astype(np.float32)
    rows = np.full((x.size, 40), -np.inf, dtype=np.float32)
    rows[:, 0], rows[:, 1], rows[:, 2] = x, 0.0, -100.0
    y = np.asarray(F.softmax(pylucid.from_numpy(rows), -1)).astype(np.float64)
    xd = x.astype(np.float64)
    ref = np.exp(xd) / (1 + np.exp(xd) + np.exp(-100.0))
    assert (np.abs(y[:, 0] - ref) / ref).max() < 1e-6
    assert (y[:, 3:] == 0).all() and (y[:, 2] < 1e-37).all()
    short = np.asarray(F.softmax(pylucid.from_numpy(rows[:, :2].copy()), -1)).astype(np.float64)
    np.testing.assert_allclose(short[:, 0], y[:, 0], rtol=1e-6)


def test_minus_inf_entries_and_all_minus_inf_rows():
    """Guards against masked (-inf) logits leaking probability, and an all -inf row giving a number
    instead of PyTorch's NaN."""
    inf = float("inf")
    x = pylucid.tensor([[0.0, -inf, 0.0], [-inf, -inf, -inf]])
    y = np.asarray(F.softmax(x, -1))
    np.testing.assert_allclose(y[0], [0.5, 0.0, 0.5])
    assert np.isnan(y[1]).all()
    ly = np.asarray(F.log_softmax(x, -1))
    assert ly[0, 1] == -inf and np.isnan(ly[1]).all()


def test_nan_propagates_to_the_whole_row():
    """Guards against a NaN being dropped by the max and leaving a finite, wrong row."""
    y = np.asarray(F.softmax(pylucid.tensor([[1.0, float("nan"), 2.0], [1.0, 2.0, 3.0]]), -1))
    assert np.isnan(y[0]).all() and np.isfinite(y[1]).all()


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_size_one_empty_and_zero_d(fn):
    """Guards against crashes or wrong shapes for a dim of size 1, empty dims and 0-d input."""
    ones = fn(pylucid.randn(3, 1, dtype=F64), 1)
    np.testing.assert_allclose(
        np.asarray(ones), np.ones((3, 1)) if fn is F.softmax else np.zeros((3, 1))
    )
    for shape, dim in [((0, 3), 1), ((3, 0), 1), ((3, 0), 0), ((2, 0, 4), 2)]:
        x = pylucid.zeros(*shape, requires_grad=True)
        y = fn(x, dim)
        assert y.shape == shape
        y.sum().backward()
        assert x.grad.shape == shape
    z = fn(pylucid.tensor(3.0), 0)
    assert z.shape == () and z.item() == (1.0 if fn is F.softmax else 0.0)


@pytest.mark.parametrize("dt", [pylucid.float16, pylucid.bfloat16, pylucid.float32])
@pytest.mark.parametrize("fn,ref", FNS)
def test_low_precision_keeps_dtype_outside_autocast(fn, ref, dt):
    """Guards against half inputs being accumulated in half (large error) or changing dtype."""
    a = rand_array((4, 50)) * 4
    x = pylucid.from_numpy(a).to(dt).requires_grad_()
    y = fn(x, -1)
    assert y.dtype == dt
    tol = 1e-2 if dt != pylucid.float32 else 1e-5
    np.testing.assert_allclose(
        np.asarray(y.detach().float()), ref(np.asarray(x.detach().double()), -1), rtol=tol, atol=tol
    )
    y.sum().backward()
    assert x.grad.dtype == dt


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_autocast_forces_float32_and_returns_grad_in_input_dtype(fn):
    """Guards against softmax running in half under autocast, or the grad coming back as float32."""
    x = pylucid.randn(3, 5).to(pylucid.bfloat16).requires_grad_()
    with pylucid.autocast(dtype=pylucid.bfloat16):
        y = fn(x, -1)
        d = fn(pylucid.randn(2, 2, dtype=F64), -1)
    assert y.dtype == pylucid.float32 and d.dtype == F64
    y.sum().backward()
    assert x.grad.dtype == pylucid.bfloat16
    assert pylucid.ops.schema("softmax").amp_policy == pylucid._C.AmpPolicy.ForceFP32
    assert pylucid.ops.schema("log_softmax").amp_policy == pylucid._C.AmpPolicy.ForceFP32


def test_tensor_methods_and_node():
    """Guards against the Tensor methods drifting from the functional form, and the node losing its state."""
    x = pylucid.randn(2, 3, dtype=F64, requires_grad=True)
    np.testing.assert_array_equal(
        np.asarray(x.softmax(0).detach()), np.asarray(F.softmax(x, 0).detach())
    )
    np.testing.assert_array_equal(
        np.asarray(x.log_softmax(-1).detach()), np.asarray(F.log_softmax(x).detach())
    )
    y = x.softmax(1)
    n = y.grad_fn
    assert (
        n.name() == "SoftmaxBackward" and n.dim == 1 and isinstance(n, pylucid._C.SoftmaxBackward)
    )
    np.testing.assert_array_equal(np.asarray(n.saved_result), np.asarray(y.detach()))
    assert n.schema == pylucid._C.SoftmaxBackward.schema_v1
    assert x.log_softmax(0).grad_fn.name() == "LogSoftmaxBackward"
    with pylucid.no_grad():
        assert F.softmax(x).grad_fn is None


def test_output_modified_in_place_is_caught():
    """Guards against a backward silently reading an output that was changed after the forward."""
    x = pylucid.randn(2, 3, requires_grad=True)
    y = F.softmax(x)
    with pylucid.no_grad():
        y.mul_(2.0)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.sum().backward()


def test_errors():
    """Guards against integer input or a bad dim crashing instead of raising a typed error."""
    with pytest.raises(
        pylucid.DtypeMismatch, match="softmax: expected a floating input, got int64"
    ):
        F.softmax(pylucid.tensor([1, 2]))
    with pytest.raises(pylucid.IndexOutOfRange, match="log_softmax: dim 2 out of range"):
        F.log_softmax(pylucid.randn(2, 3), 2)
    with pytest.raises(TypeError):
        F.softmax(None)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_against_torch(name):
    """Guards against drift from PyTorch's values and gradients on a 3-D input along each dim."""
    torch = _torch()
    a = rand_array((3, 4, 5)) * 3
    g = rand_array((3, 4, 5))
    for dim in (0, 1, 2):
        x = pylucid.from_numpy(a.copy()).requires_grad_()
        y = getattr(F, name)(x, dim)
        y.backward(pylucid.from_numpy(g))
        tx = torch.tensor(a, requires_grad=True)
        ty = getattr(torch.nn.functional, name)(tx, dim)
        ty.backward(torch.tensor(g))
        np.testing.assert_allclose(
            np.asarray(y.detach()), ty.detach().numpy(), rtol=1e-12, atol=1e-12
        )
        np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
