"""Property-based tests (hypothesis) over the public ops: random shapes with zero-size and size-1
dims, dtypes, strided layouts (transposes, stepped slices, expanded views) and broadcasting.
Forward results are checked against numpy, gradients against finite differences on a sample,
and bad combinations must raise pylucid's typed errors, never crash. The fuzz of the whole API is
in test_fuzz.py."""
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


# ---- unary ops, products, norms, softmax, indexing (the whole-API fuzz is in test_fuzz.py) ----

UNARY = [
    ("neg", np.negative, None), ("abs", np.abs, None), ("exp", np.exp, None),
    ("log", np.log, "positive"), ("sqrt", np.sqrt, "positive"), ("rsqrt", lambda a: 1 / np.sqrt(a), "positive"),
    ("sin", np.sin, None), ("cos", np.cos, None), ("tanh", np.tanh, None),
    ("sigmoid", lambda a: 1 / (1 + np.exp(-a)), None), ("relu", lambda a: np.maximum(a, 0), None),
    ("silu", lambda a: a / (1 + np.exp(-a)), None),
]
LOW = {pylucid.float16: (np.float16, 2e-3), pylucid.bfloat16: (np.float32, 1.6e-2),
       pylucid.float32: (np.float32, 2e-6), pylucid.float64: (np.float64, 1e-12)}


@SETTINGS
@given(data=operands(n=1, dtypes=(pylucid.float32, pylucid.float64)), op=st.sampled_from(UNARY),
       to=st.sampled_from(list(LOW)))
def test_unary_ops_match_numpy_in_every_dtype(data, op, to):
    """Guards against a unary kernel mishandling a layout (transposed, stepped, expanded), a
    zero-size or size-1 dim, or a reduced-precision dtype."""
    (arr,), (t,), _ = data
    name, ref, domain = op
    if domain == "positive":
        arr, t = np.abs(arr) + 0.5, pylucid.abs(t) + 0.5
    np_dt, tol = LOW[to]
    x = t.to(to)
    exact = np.asarray(x.double())  # the input as rounded to `to`
    got = np.asarray(getattr(pylucid, name)(x).double())
    assert got.shape == arr.shape
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got, ref(exact), rtol=4 * tol, atol=4 * tol)


@SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(signature="(m,k),(k,n)->(m,n)", max_dims=3, min_side=0,
                                                 max_side=4),
       dt=st.sampled_from([pylucid.float32, pylucid.float64]), transpose=st.booleans())
def test_matmul_matches_numpy_with_batch_broadcasting(shapes, dt, transpose):
    """Guards against matmul's batch broadcasting, empty dims or a transposed operand (passed to
    BLAS as a transpose flag) giving wrong results."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s) for s in shapes.input_shapes)
    ta = pylucid.from_numpy(a).to(dt)
    tb = (pylucid.from_numpy(np.ascontiguousarray(np.swapaxes(b, -1, -2))).transpose(-1, -2).to(dt)
          if transpose else pylucid.from_numpy(b).to(dt))
    got = ta @ tb
    assert got.shape == shapes.result_shape
    np.testing.assert_allclose(np.asarray(got.double()), a @ b, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(data=operands(n=1, dtypes=(pylucid.float32, pylucid.float64)), k=st.integers(1, 2),
       partial=st.sampled_from([0.0, 0.5]), use_weight=st.booleans())
def test_rms_norm_matches_numpy_over_layouts(data, k, partial, use_weight):
    """Guards against RMSNorm's fused kernel reading a non-contiguous row wrongly, or
    mis-handling partial_ratio, size-1 and empty dims."""
    (arr,), (t,), _ = data
    if arr.ndim < k:
        return
    shape = arr.shape[arr.ndim - k:]
    n = int(np.prod(shape))
    if n == 0:
        return
    w = np.linspace(0.5, 1.5, n).reshape(shape)
    rows = arr.reshape(-1, n).astype(np.float64)
    m = n if partial == 0 else max(1, int(np.ceil(n * partial)))
    rstd = 1 / np.sqrt((rows[:, :m] ** 2).mean(axis=1, keepdims=True) + 1e-6)
    want = (rows * rstd).reshape(arr.shape) * (w if use_weight else 1)
    weight = pylucid.from_numpy(w).to(t.dtype) if use_weight else None
    got = pylucid.nn.functional.rms_norm(t, shape, weight, eps=1e-6, partial_ratio=partial)
    np.testing.assert_allclose(np.asarray(got.double()), want, rtol=2e-5, atol=2e-5)


@SETTINGS
@given(data=operands(n=1, dtypes=(pylucid.float32, pylucid.float64)), pick=st.integers(0, 3),
       log=st.booleans())
def test_softmax_matches_numpy_along_any_dim(data, pick, log):
    """Guards against softmax/log_softmax along a non-last or strided dim reading the wrong
    elements."""
    (arr,), (t,), _ = data
    if arr.ndim == 0:
        return
    dim = pick % arr.ndim
    a = arr.astype(np.float64)
    with np.errstate(all="ignore"):
        z = a - (a.max(axis=dim, keepdims=True) if a.shape[dim] else 0)
        want = z - np.log(np.exp(z).sum(axis=dim, keepdims=True))
    want = want if log else np.exp(want)
    fn = pylucid.nn.functional.log_softmax if log else pylucid.nn.functional.softmax
    np.testing.assert_allclose(np.asarray(fn(t, dim=dim).double()), want, rtol=1e-5, atol=1e-5)


@st.composite
def basic_index(draw, shape):
    """A tuple of ints, slices (any step, negative bounds) and None / Ellipsis for ``shape``."""
    items = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "all"]))
        if kind == "int" and size > 0:
            items.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            items.append(slice(draw(st.one_of(st.none(), st.integers(-6, 6))),
                               draw(st.one_of(st.none(), st.integers(-6, 6))),
                               draw(st.one_of(st.none(), st.integers(1, 3)))))
        else:
            items.append(slice(None))
    if items and draw(st.booleans()):
        items[draw(st.integers(0, len(items) - 1))] = Ellipsis
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    return tuple(items)


@SETTINGS
@given(data=st.data())
def test_basic_indexing_matches_numpy_and_is_a_view(data):
    """Guards against slicing with steps, negative bounds, None and Ellipsis giving numpy-
    different results, or a copy where a view was due (writes must reach the base)."""
    (arr,), (t,), _ = data.draw(operands(n=1, dtypes=(pylucid.float64,)))
    idx = data.draw(basic_index(arr.shape))
    if idx.count(Ellipsis) > 1:
        return
    want = arr[idx]
    got = t[idx]
    np.testing.assert_array_equal(np.asarray(got), want)
    base = pylucid.from_numpy(arr.copy())
    view = base[idx]
    if view.numel():
        view.fill_(7.0)
        expect = arr.copy()
        expect[idx] = 7.0
        np.testing.assert_array_equal(np.asarray(base), expect)


GRAD_OPS = [
    lambda a, b: a * b + a,
    lambda a, b: (a - b) * (a - b),
    lambda a, b: pylucid.maximum(a, b) * b,
    lambda a, b: pylucid.tanh(a) * b,
    lambda a, b: pylucid.sigmoid(a - b).sum(dim=-1, keepdim=True) * a,
    lambda a, b: pylucid.nn.functional.softmax(a * b, dim=-1),
    lambda a, b: pylucid.nn.functional.rms_norm(a + b, ((a + b).shape[-1],)) if (a + b).ndim else a * b,
    lambda a, b: (a * b).mean(dim=0) if (a * b).ndim else a * b,
    lambda a, b: pylucid.exp(a).amax(dim=-1) * 1.0 if a.ndim and a.shape[-1] else a + b,
]


@settings(max_examples=60, deadline=None)
@given(data=operands(n=2, dtypes=(pylucid.float64,)), op=st.sampled_from(GRAD_OPS))
def test_composed_gradients_match_finite_differences(data, op):
    """Guards against a backward node that is right on contiguous, unbroadcast inputs but wrong
    on broadcast ones or for a size-1 dim."""
    arrays, _, _ = data
    if any(a.size == 0 for a in arrays) or sum(a.size for a in arrays) > 40:
        return
    leaves = [pylucid.from_numpy(np.asarray(a + 0.013 * np.arange(a.size).reshape(a.shape))).requires_grad_()
              for a in arrays]  # nudged apart so maximum and amax have no ties
    assert pylucid.autograd.gradcheck(op, leaves)
