"""Property-based tests (hypothesis) over the public ops: random shapes with zero-size and size-1
dims, dtypes, strided layouts (transposes, stepped slices, expanded views) and broadcasting.
Forward results are checked against numpy, gradients against finite differences on a sample,
and bad combinations must raise pylucid's typed errors, never crash."""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import pylucid  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ERRORS = (pylucid.LucidError, TypeError, ValueError, IndexError)

NP_DTYPES = {pylucid.float32: np.float32, pylucid.float64: np.float64, pylucid.int64: np.int64}


def layout(draw, arr):
    """The same values as ``arr`` as a tensor with a drawn memory layout."""
    kind = draw(st.sampled_from(["contiguous", "transposed", "stepped", "expanded"]))
    if kind == "transposed" and arr.ndim >= 2:
        return pylucid.from_numpy(np.ascontiguousarray(np.swapaxes(arr, 0, -1))).transpose(0, -1)
    if kind == "stepped" and arr.ndim >= 1:
        big = np.repeat(arr, 2, axis=-1) if arr.shape[-1] else arr
        return pylucid.from_numpy(np.ascontiguousarray(big))[..., ::2] if arr.shape[-1] else pylucid.from_numpy(arr.copy())
    if kind == "expanded" and arr.ndim >= 1 and arr.shape[0] >= 1 and (arr == arr[:1]).all():
        return pylucid.from_numpy(np.ascontiguousarray(arr[:1])).expand(*arr.shape)
    return pylucid.from_numpy(arr.copy())


@st.composite
def operands(draw, n=2, dtypes=(pylucid.float32, pylucid.float64, pylucid.int64)):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=4,
                                                    min_side=0, max_side=4))
    dt = draw(st.sampled_from(dtypes))
    arrays = []
    for s in shapes.input_shapes:
        if dt == pylucid.int64:
            a = draw(hnp.arrays(np.int64, s, elements=st.integers(-50, 50)))
        else:
            a = draw(hnp.arrays(np.float64, s, elements=st.floats(-10, 10, allow_nan=False))).astype(NP_DTYPES[dt])
        arrays.append(a)
    tensors = [layout(draw, a) for a in arrays]
    return arrays, tensors, shapes.result_shape


BINARY = [
    (lambda a, b: a + b, np.add),
    (lambda a, b: a - b, np.subtract),
    (lambda a, b: a * b, np.multiply),
    (pylucid.maximum, np.maximum),
    (pylucid.minimum, np.minimum),
    (lambda a, b: a > b, np.greater),
    (lambda a, b: a == b, np.equal),
]


@SETTINGS
@given(data=operands(), op=st.sampled_from(BINARY))
def test_binary_ops_match_numpy(data, op):
    arrays, tensors, shape = data
    got = op[0](*tensors)
    want = op[1](*arrays)
    assert got.shape == tuple(shape)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)


@SETTINGS
@given(data=operands(n=1, dtypes=(pylucid.float32, pylucid.float64)),
       op=st.sampled_from(["sum", "mean", "amax"]), keepdim=st.booleans(), pick=st.integers(0, 3))
def test_reductions_match_numpy(data, op, keepdim, pick):
    (arr,), (t,), _ = data
    dim = pick % arr.ndim if arr.ndim else None
    if op == "amax" and ((dim is None and arr.size == 0) or (dim is not None and arr.shape[dim] == 0)):
        with pytest.raises(ERRORS):
            getattr(t, op)(dim=dim, keepdim=keepdim) if dim is not None else getattr(t, op)()
        return
    if dim is None:
        got = getattr(t, op)()
        want = getattr(np, {"amax": "max"}.get(op, op))(arr)
    else:
        got = getattr(t, op)(dim=dim, keepdim=keepdim)
        want = getattr(np, {"amax": "max"}.get(op, op))(arr, axis=dim, keepdims=keepdim)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(data=operands(n=2, dtypes=(pylucid.float64,)),
       op=st.sampled_from([lambda a, b: a * b + a, lambda a, b: (a - b) * (a - b),
                           lambda a, b: pylucid.maximum(a, b) * b]))
def test_gradients_match_finite_differences(data, op):
    arrays, _, _ = data
    if any(a.size == 0 for a in arrays) or sum(a.size for a in arrays) > 40:
        return
    leaves = [pylucid.from_numpy(np.asarray(a + 0.01 * np.arange(a.size).reshape(a.shape))).requires_grad_()
              for a in arrays]  # nudged apart so maximum has no ties
    assert pylucid.autograd.gradcheck(op, leaves)


@SETTINGS
@given(sa=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
       sb=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
def test_incompatible_shapes_raise_shape_mismatch(sa, sb):
    try:
        np.broadcast_shapes(sa, sb)
        compatible = True
    except ValueError:
        compatible = False
    a, b = pylucid.ones(*sa), pylucid.ones(*sb)
    if compatible:
        assert (a + b).shape == np.broadcast_shapes(sa, sb)
    else:
        with pytest.raises(pylucid.ShapeMismatch, match="add"):
            a + b


@SETTINGS
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
       new=st.lists(st.integers(-2, 6), min_size=0, max_size=4))
def test_reshape_valid_or_clear_error(shape, new):
    t = pylucid.zeros(*shape)
    a = np.zeros(shape)
    try:
        if any(v < -1 for v in new):  # numpy tolerates these; PyTorch (and pylucid) refuse
            raise ValueError
        want = a.reshape(new).shape
    except ValueError:
        with pytest.raises(ERRORS):
            t.reshape(new)
        return
    assert t.reshape(new).shape == want


# ---- bounded fuzz of the Python API: any argument, no crash ---------------------------------

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3), st.lists(st.integers(-3, 3), max_size=3),
    st.builds(lambda s: pylucid.ones(*s), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)),
    st.builds(lambda s: pylucid.zeros(*s, dtype=pylucid.int64), hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)),
)
METHODS = ["__add__", "__mul__", "__truediv__", "__pow__", "__getitem__", "reshape", "sum", "mean",
           "transpose", "permute", "expand", "unsqueeze", "squeeze", "matmul", "max", "softmax",
           "clamp", "to", "view", "flatten", "masked_fill", "__matmul__", "var", "log_softmax"]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
       method=st.sampled_from(METHODS), args=st.lists(VALUES, max_size=3))
def test_fuzz_public_methods_never_crash(shape, method, args):
    t = pylucid.ones(*shape, requires_grad=True)
    fn = getattr(t, method, None)
    if fn is None:
        return
    try:
        out = fn(*args)
    except ERRORS:
        return
    if isinstance(out, pylucid.Tensor) and out.requires_grad and out.dtype.is_floating_point:
        try:
            out.sum().backward()
        except ERRORS:
            pass
