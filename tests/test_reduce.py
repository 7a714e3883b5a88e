"""Reductions: forward vs numpy over every dim spec, gradients, ties, NaN, empty dims, dtypes,
accumulation precision and the large-input (parallel / dense) paths."""
import warnings

import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array

F64 = pylucid.float64

DIMS = [None, 0, -1, (0, 2), (1,), (2, 0, 1)]


def _np_dim(dim):
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _lse(a, axis=None, keepdims=False):
    m = np.max(a, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis) if axis is not None else r.reshape(())


# (name, pylucid fn(x, dim, keepdim), numpy ref(a, axis, keepdims))
REDUCTIONS = [
    ("sum", lambda x, d, k: x.sum(dim=d, keepdim=k), lambda a, d, k: np.sum(a, axis=d, keepdims=k)),
    ("mean", lambda x, d, k: pylucid.mean(x, d, k), lambda a, d, k: np.mean(a, axis=d, keepdims=k)),
    ("var", lambda x, d, k: x.var(d, keepdim=k), lambda a, d, k: np.var(a, axis=d, keepdims=k, ddof=1)),
    ("var0", lambda x, d, k: x.var(d, keepdim=k, correction=0), lambda a, d, k: np.var(a, axis=d, keepdims=k)),
    ("std", lambda x, d, k: pylucid.std(x, d, keepdim=k), lambda a, d, k: np.std(a, axis=d, keepdims=k, ddof=1)),
    ("amax", lambda x, d, k: x.amax(dim=() if d is None else d, keepdim=k), lambda a, d, k: np.max(a, axis=d, keepdims=k)),
    ("amin", lambda x, d, k: pylucid.amin(x, () if d is None else d, k), lambda a, d, k: np.min(a, axis=d, keepdims=k)),
    ("logsumexp", lambda x, d, k: x.logsumexp(d, keepdim=k), _lse),
    ("norm2", lambda x, d, k: x.norm(dim=d, keepdim=k), lambda a, d, k: np.sqrt(np.sum(a * a, axis=d, keepdims=k))),
    ("norm1", lambda x, d, k: x.norm(1, d, k), lambda a, d, k: np.sum(np.abs(a), axis=d, keepdims=k)),
    ("norm3", lambda x, d, k: x.norm(3, d, k), lambda a, d, k: np.sum(np.abs(a) ** 3, axis=d, keepdims=k) ** (1 / 3)),
    ("norminf", lambda x, d, k: x.norm(float("inf"), d, k), lambda a, d, k: np.max(np.abs(a), axis=d, keepdims=k)),
]
RIDS = [r[0] for r in REDUCTIONS]


@pytest.mark.parametrize("name,fn,ref", REDUCTIONS, ids=RIDS)
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_forward_and_gradcheck(name, fn, ref, dim, keepdim):
    """Guards against reducing the wrong dims, a wrong keepdim shape, and gradients not broadcast
    back over the reduced dims (also non-contiguous and accumulated twice)."""
    check_op(lambda x: fn(x, dim, keepdim), lambda a: ref(a, _np_dim(dim), keepdim), [(3, 4, 5)])


@pytest.mark.parametrize("name,fn,ref", REDUCTIONS, ids=RIDS)
def test_zero_dim_and_size_one(name, fn, ref):
    """Guards against 0-d inputs and size-1 dims breaking the dim bookkeeping."""
    check_op(lambda x: fn(x, None, False), lambda a: ref(a, None, False), [(1, 3, 1)])
    a = np.array(0.7)
    out = fn(pylucid.tensor(a, dtype=F64), 0, False)
    with warnings.catch_warnings():  # numpy warns on var of one element (NaN, as ours)
        warnings.simplefilter("ignore")
        expected = ref(a, None, False)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12)


@pytest.mark.parametrize("shape,dim", [
    ((100_000, 7), 0),        # bias gradient: leading dim, narrow rows (split across threads)
    ((3000, 4100), 0),        # leading dim, rows wider than one accumulator tile
    ((7, 100_000), 1),        # few long rows
    ((1_000_003,), None),     # full reduction to a scalar (split across threads)
    ((50, 60, 70), (0, 2)),   # non-block dims (copied into rows)
    ((40, 50, 60), 1),        # middle dim
])
def test_large_inputs_match_numpy(shape, dim):
    """Guards against the dense fast paths (tiles, row splits, thread partials) dropping or
    double-counting elements."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype(np.float32)
    x = pylucid.from_numpy(a)
    d = _np_dim(dim)
    a64 = a.astype(np.float64)
    np.testing.assert_allclose(np.asarray(x.sum(dim)), np.sum(a64, axis=d), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(np.asarray(x.mean(dim)), np.mean(a64, axis=d), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(x.var(dim)), np.var(a64, axis=d, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(x.amax(() if dim is None else dim)), np.max(a, axis=d))
    np.testing.assert_allclose(np.asarray(x.logsumexp(dim)), _lse(a64, d), rtol=1e-5)
    if not isinstance(dim, tuple):
        np.testing.assert_array_equal(np.asarray(x.argmax(dim)), np.argmax(a, axis=dim))


def test_large_noncontiguous_input():
    """Guards against a transposed large input (copied once into the dense layout) being misread."""
    a = np.random.default_rng(2).standard_normal((300, 500))
    x = pylucid.from_numpy(a).transpose(0, 1)
    for dim in (0, 1, None):
        np.testing.assert_allclose(np.asarray(x.sum(dim)), np.sum(a.T, axis=dim), rtol=1e-10)
        np.testing.assert_allclose(np.asarray(x.std(dim)), np.std(a.T, axis=dim, ddof=1), rtol=1e-10)
    np.testing.assert_array_equal(np.asarray(x.argmin(1)), np.argmin(a.T, axis=1))


def test_strided_numpy_view():
    """Guards against an offset, stride-2 numpy view being reduced as if dense."""
    base = rand_array((8, 9, 10))
    v = base[1::2, :, ::3]
    x = pylucid._C._from_numpy(v)
    np.testing.assert_allclose(np.asarray(x.sum((0, 2))), v.sum(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(x.amax(1)), v.max(axis=1))


def test_float32_sum_accumulates_in_double():
    """Guards against float32 accumulation (error ~1e-3 relative on 10^7 terms)."""
    a = np.full(10_000_000, 0.1, dtype=np.float32)
    s = pylucid.from_numpy(a).sum().item()
    exact = float(np.float32(0.1)) * 1e7
    assert abs(s - exact) / exact < 1e-7


def test_half_sum_accumulates_in_float():
    """Guards against accumulating in 16 bits: a float16 running sum of ones stalls at 2048."""
    for dt in (pylucid.float16, pylucid.bfloat16):
        x = pylucid.ones(4096, dtype=dt)
        s = x.sum()
        assert s.dtype == dt and s.item() == 4096.0
        assert x.mean().item() == 1.0


def test_sum_dtypes():
    """Guards against integer sums staying narrow or becoming float, and dtype= being ignored."""
    i = pylucid.tensor([[1, 2], [3, 4]])
    assert i.sum().dtype == pylucid.int64 and i.sum().item() == 10
    assert pylucid.tensor([True, True, False]).sum().item() == 2
    assert i.sum(dtype=F64).dtype == F64
    x = pylucid.tensor([1.5, 2.5], requires_grad=True)
    y = x.sum(dtype=F64)
    assert y.dtype == F64
    y.backward()
    assert x.grad.dtype == pylucid.float32 and x.grad.tolist() == [1.0, 1.0]
    assert pylucid.mean(i, dtype=F64).item() == 2.5
    assert i.prod().dtype == pylucid.int64 and i.prod().item() == 24
    assert i.amax().item() == 4 and i.amax().dtype == pylucid.int64


def test_float_only_reductions_reject_integers():
    """Guards against mean/var/norm of integers truncating (PyTorch refuses them)."""
    i = pylucid.tensor([1, 2])
    for f in (pylucid.mean, pylucid.var, pylucid.std, pylucid.norm):
        with pytest.raises(pylucid.DtypeMismatch, match="expected a floating input, got int64"):
            f(i)
    assert pylucid.logsumexp(i, 0).dtype == pylucid.float32  # promotes, as PyTorch


def test_empty_reductions():
    """Guards against garbage or crashes for empty reductions: sum 0, prod 1, mean/var NaN,
    and extrema refusing a zero-size reduced dim with a clear error."""
    e = pylucid.zeros(0, 3)
    assert e.sum(0).tolist() == [0.0, 0.0, 0.0]
    assert e.prod(0).tolist() == [1.0, 1.0, 1.0]
    assert np.isnan(e.mean().item()) and np.isnan(np.asarray(e.var(0))).all()
    assert e.sum(1).shape == (0,)
    assert e.logsumexp(0).tolist() == [float("-inf")] * 3
    v, i = e.max(1)  # reducing the non-empty dim of an empty tensor is fine
    assert v.shape == (0,) and i.shape == (0,)
    for f in (lambda: e.amax(), lambda: e.max(), lambda: e.max(0), lambda: e.argmax(0), lambda: e.argmin(),
              lambda: e.norm(float("inf"))):
        with pytest.raises(IndexError, match="cannot reduce over dim 0 of size 0"):
            f()
    x = pylucid.zeros(0, dtype=F64, requires_grad=True)
    x.sum().backward()
    assert x.grad.shape == (0,)


def test_var_correction_and_unbiased():
    """Guards against unbiased/correction being mixed up or N - correction <= 0 not giving inf/NaN."""
    a = np.array([[1.0, 2.0, 4.0], [0.5, 0.0, 3.0]])
    x = pylucid.tensor(a, dtype=F64)
    np.testing.assert_allclose(np.asarray(x.var(1, unbiased=False)), a.var(axis=1))
    np.testing.assert_allclose(np.asarray(x.var(1, True)), a.var(axis=1, ddof=1))
    np.testing.assert_allclose(np.asarray(pylucid.var(x, False)), a.var())
    np.testing.assert_allclose(np.asarray(x.std(correction=2)), a.std(ddof=2))
    assert np.isnan(pylucid.tensor([3.0]).var().item())
    assert np.isinf(pylucid.tensor([3.0, 1.0]).var(correction=2).item())
    with pytest.raises(pylucid.LucidError, match="either unbiased or correction"):
        x.var(unbiased=True, correction=0)


def test_var_is_accurate_for_large_mean():
    """Guards against the one-pass sum-of-squares formula losing everything to cancellation."""
    a = (1e4 + np.random.default_rng(3).standard_normal(10_000)).astype(np.float32)
    v = pylucid.from_numpy(a).var().item()
    np.testing.assert_allclose(v, np.var(a.astype(np.float64), ddof=1), rtol=1e-5)


def test_std_gradient_is_zero_for_constant_input():
    """Guards against NaN/inf gradients of std where std == 0 (PyTorch masks them to 0)."""
    x = pylucid.ones(2, 3, dtype=F64, requires_grad=True)
    x.std(1).sum().backward()
    assert np.asarray(x.grad).tolist() == [[0.0] * 3] * 2


def test_max_min_with_dim_return_values_and_indices():
    """Guards against max(dim) returning a plain tensor, or the wrong index among ties."""
    x = pylucid.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]])
    r = x.max(dim=1)
    assert type(r).__name__ == "max" and r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    values, indices = pylucid.min(x, 0, keepdim=True)
    assert values.tolist() == [[1.0, 2.0, 5.0]] and indices.tolist() == [[0, 1, 0]]
    assert indices.dtype == pylucid.int64
    assert x.max().item() == 7.0 and x.min().item() == 1.0
    assert x.argmax().item() == 3 and x.argmin().item() == 0
    assert x.argmax(1, keepdim=True).tolist() == [[1], [0]]
    assert pylucid.max(x, pylucid.tensor([6.0, 0.0, 0.0])).tolist() == [[6.0, 5.0, 5.0], [7.0, 2.0, 7.0]]


def test_extremum_gradient_splits_evenly_among_ties():
    """Guards against the whole gradient going to one of several tied maxima (amax rule, used
    for amax/amin and max()/min(); max(dim) routes to its index, tests/test_grad_routing.py)."""
    for f in (lambda t: t.amax(1), lambda t: t.max(), lambda t: -(-t).amin(1)):
        x = pylucid.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 3.0]], dtype=F64, requires_grad=True)
        y = f(x)
        y.backward(pylucid.ones(*y.shape, dtype=F64))
        expected = [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]] if y.ndim else [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
        assert x.grad.tolist() == expected


def test_nan_propagates_through_extrema():
    """Guards against max/argmax skipping NaN (PyTorch returns NaN and the first NaN's index)."""
    x = pylucid.tensor([1.0, float("nan"), 3.0, float("nan")])
    assert np.isnan(x.max().item()) and np.isnan(x.amin().item())
    assert x.argmax().item() == 1 and x.argmin().item() == 1
    v, i = x.max(0)
    assert np.isnan(v.item()) and i.item() == 1
    big = np.zeros(100_000, dtype=np.float32)
    big[70_000] = np.nan
    assert pylucid.from_numpy(big).argmax().item() == 70_000


@pytest.mark.parametrize("n", [200_000, 1_300_000])
def test_argmax_first_occurrence_across_thread_partials(n):
    """Guards against thread partials picking a later tied index (1.3M elements per row is past
    the float32 row kernels' per-thread grain, so rows and one long row are split)."""
    a = np.zeros((3, n), dtype=np.float32)
    a[:, n - 50_000] = 1
    a[:, 60_000] = 1
    x = pylucid.from_numpy(a)
    assert x.argmax(1).tolist() == [60_000] * 3
    assert pylucid.from_numpy(a[0].copy()).argmax().item() == 60_000
    a[1, n - 10] = np.nan
    assert pylucid.from_numpy(a[1].copy()).argmax().item() == n - 10
    assert pylucid.from_numpy(a).argmin(1).tolist() == [0, n - 10, 0]


def test_logsumexp_is_stable():
    """Guards against exp overflow (x = 1000) and NaN from inf - inf."""
    x = pylucid.tensor([[1000.0, 1000.0], [-1000.0, -1000.0], [float("-inf"), float("-inf")], [float("inf"), 0.0]])
    out = x.logsumexp(1).tolist()
    np.testing.assert_allclose(out[:2], [1000.0 + np.log(2), -1000.0 + np.log(2)], rtol=1e-6)
    assert out[2] == float("-inf") and out[3] == float("inf")


def test_prod_gradient_with_zeros():
    """Guards against dividing the product by x (0/0 = NaN) when the slice holds zeros."""
    x = pylucid.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 4.0]], dtype=F64, requires_grad=True)
    x.prod(1).sum().backward()
    assert x.grad.tolist() == [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [8.0, 4.0, 2.0]]
    check_op(lambda t: t.prod(1), lambda a: a.prod(axis=1), [(3, 4)])
    check_op(lambda t: t.prod(), lambda a: a.prod(), [(2, 3)])
    check_op(lambda t: t.prod(0, keepdim=True), lambda a: a.prod(axis=0, keepdims=True), [(2, 3)])


@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_double_backward_with_zeros(zeros):
    """Guards the second derivative of prod where slices hold one or two zeros (g * prod / x
    would give NaN there): the Hessian of a 4-element product is prod over the other two."""
    a = np.array([2.0, -3.0, 0.5, 1.5])
    a[:zeros] = 0.0
    x = pylucid.tensor(a, dtype=F64, requires_grad=True)
    assert pylucid.autograd.gradgradcheck(lambda t: t.prod(), (x,))
    (g,) = pylucid.autograd.grad(x.prod(), x, create_graph=True)
    H = np.stack([np.asarray(pylucid.autograd.grad(g[i], x, retain_graph=True)[0]) for i in range(4)])
    ref = np.array([[0.0 if i == j else np.prod(np.delete(a, [i, j])) for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(H, ref, rtol=1e-12, atol=0)
    xs = pylucid.tensor(np.stack([a, a[::-1]]), dtype=F64, requires_grad=True)
    assert pylucid.autograd.gradgradcheck(lambda t: t.prod(1), (xs,))


def test_norm_variants():
    a = rand_array((4, 5))
    x = pylucid.tensor(a, dtype=F64)
    np.testing.assert_allclose(x.norm().item(), np.linalg.norm(a))
    np.testing.assert_allclose(x.norm("fro").item(), np.linalg.norm(a))
    np.testing.assert_allclose(np.asarray(x.norm(0, 1)), np.count_nonzero(a, axis=1))
    np.testing.assert_allclose(x.norm(float("-inf")).item(), np.abs(a).min())
    with pytest.raises(pylucid.LucidError, match="norm: p must be"):
        x.norm("nuc")
    z = pylucid.zeros(3, dtype=F64, requires_grad=True)
    z.norm().backward()
    assert z.grad.tolist() == [0.0, 0.0, 0.0]  # not NaN at the origin


def test_dim_errors():
    """Guards against out-of-range or repeated dims being accepted silently."""
    x = pylucid.ones(2, 3)
    with pytest.raises(IndexError, match=r"sum: dim 2 out of range"):
        x.sum(2)
    with pytest.raises(IndexError, match="appears more than once"):
        x.mean((0, -2))
    with pytest.raises(IndexError, match="argmax: dim -3 out of range"):
        x.argmax(-3)


def test_reductions_are_forcefp32_under_autocast():
    """Guards against reductions of float16 inputs running (and returning) in float16 under
    autocast, and against the gradient coming back in float32."""
    x = pylucid.ones(3, dtype=pylucid.float16, requires_grad=True)
    with pylucid.autocast(dtype=pylucid.float16):
        outs = [x.sum(), x.mean(), x.var(), x.amax(), x.logsumexp(0), x.norm()]
    assert all(o.dtype == pylucid.float32 for o in outs)
    outs[1].backward()
    assert x.grad.dtype == pylucid.float16
    for name in ("sum", "mean", "var", "std", "max", "amax", "logsumexp", "prod", "norm"):
        assert pylucid.ops.schema(name).amp_policy == pylucid.ops.AmpPolicy.ForceFP32


def test_nodes():
    x = pylucid.ones(2, 2, requires_grad=True)
    assert x.mean().grad_fn.name() == "MeanBackward"
    assert x.max(0).values.grad_fn.name() == "MaxBackward0"
    assert x.std().grad_fn.name() == "StdBackward"
    assert x.max(0).indices.grad_fn is None
    assert not x.argmax().requires_grad


def test_against_pytorch():
    """Guards against drift from PyTorch in logsumexp, var/std and norm, forward and gradient."""
    torch = pytest.importorskip("torch")
    a = rand_array((4, 6, 5), low=-3, high=3)
    cases = [
        (lambda t: t.logsumexp((0, 2)), lambda t: t.logsumexp((0, 2))),
        (lambda t: t.var(1, keepdim=True), lambda t: t.var(1, keepdim=True)),
        (lambda t: t.std(correction=0), lambda t: t.std(correction=0)),
        (lambda t: t.norm(3, (1, 2)), lambda t: torch.linalg.vector_norm(t, 3, (1, 2))),
        (lambda t: t.prod(2), lambda t: t.prod(2)),
    ]
    for ours, theirs in cases:
        x = pylucid.tensor(a, dtype=F64, requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        y, ty = ours(x), theirs(tx)
        np.testing.assert_allclose(np.asarray(y.detach()), ty.detach().numpy(), rtol=1e-12)
        (y * y).sum().backward()
        (ty * ty).sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape,dims", [
    ((30, 40, 50), (0, 2)),
    ((6, 7, 8, 9, 10), (0, 2, 4)),
    ((6, 1, 8, 9, 50), (0, 1, 3)),
    ((40, 30, 40), (0, 1, 2)),
])
def test_sums_over_non_block_dims(shape, dims):
    """Guards against split_reduce (several runs of reduced dims folded one run at a time, no copy)
    mixing up the order of the kept dims or dividing the mean more than once."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape)
    x = pylucid.from_numpy(a.astype(np.float32))
    np.testing.assert_allclose(np.asarray(x.sum(dims)), a.astype(np.float32).astype(np.float64).sum(axis=dims),
                               rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(x.mean(dims, keepdim=True)),
                               a.astype(np.float32).astype(np.float64).mean(axis=dims, keepdims=True), rtol=1e-5, atol=1e-6)
    i = rng.integers(-100, 100, shape)
    np.testing.assert_array_equal(np.asarray(pylucid.from_numpy(i).sum(dims)), i.sum(axis=dims))
    h = pylucid.from_numpy(a.astype(np.float16))
    np.testing.assert_allclose(np.asarray(h.mean(dims).float()), a.astype(np.float16).astype(np.float64).mean(axis=dims),
                               rtol=2e-3, atol=2e-3)
    xd = pylucid.from_numpy(a)
    np.testing.assert_allclose(np.asarray(xd.var(dims)), a.var(axis=dims, ddof=1), rtol=1e-10)
    np.testing.assert_array_equal(np.asarray(xd.amax(dims)), a.max(axis=dims))
    np.testing.assert_array_equal(np.asarray(h.amin(dims).float()), a.astype(np.float16).min(axis=dims))
    a[(0,) * a.ndim] = np.nan
    assert np.isnan(np.asarray(pylucid.from_numpy(a).amax(dims)).flat[0])


def _first_arg_reference(a, is_max):
    """First index of the maximum (minimum) per row, NaN counting as the extremum (PyTorch)."""
    out = []
    for row in a:
        nan = np.flatnonzero(np.isnan(row))
        out.append(int(nan[0]) if nan.size else int(np.argmax(row) if is_max else np.argmin(row)))
    return out


@pytest.mark.parametrize("shape", [(7, 1), (5, 3), (33, 257), (4, 1000), (2, 70_000), (1, 300_000)])
def test_float32_argmax_argmin_rows_match_reference(shape):
    """Guards the vectorised float32 arg-extremum rows (integer keys, blockwise max, rescan of one
    block, chunks of one long row over threads): first occurrence among ties (incl. ties across
    block and chunk boundaries), -0 tied with +0, +-inf, subnormals, NaN of either sign winning
    with the first NaN taken, and max/min(dim) returning the value at that index."""
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(-3, 4, size=shape).astype(np.float32)  # many ties
    n = shape[1]
    a[0, :] = 0.0
    a[0, n // 2:] = -0.0
    if shape[0] > 1:
        a[1, n - 1] = np.inf
        a[1, 0] = -np.inf
    if shape[0] > 2:
        a[2, n // 3] = np.float32(-np.nan)  # sign bit set: still the extremum
        a[2, n - 1] = np.nan
    if shape[0] > 3:
        a[3, :] = np.float32(1e-45)
        a[3, n - 1] = np.float32(3e-45)
    x = pylucid.from_numpy(a)
    assert x.argmax(1).tolist() == _first_arg_reference(a, True)
    assert x.argmin(1).tolist() == _first_arg_reference(a, False)
    v, i = x.max(1)
    assert i.tolist() == _first_arg_reference(a, True)
    np.testing.assert_array_equal(np.asarray(v), a[np.arange(shape[0]), i.tolist()])
    assert x.argmax().item() == _first_arg_reference(a.reshape(1, -1), True)[0]
    assert x.argmin().item() == _first_arg_reference(a.reshape(1, -1), False)[0]
    t = pylucid.from_numpy(np.ascontiguousarray(a.T))  # dim 0: the generic path, same answers
    assert t.argmax(0).tolist() == _first_arg_reference(a, True)


@pytest.mark.parametrize("n", [1, 15, 16, 17, 32, 33, 511, 512, 513, 1024, 1537])
def test_float32_arg_rows_block_edges(n):
    """Guards the blockwise float32 arg kernel at its edges: row tails shorter than a vector, the
    extremum in the last partial vector or in a later 512-element block with an equal value in an
    earlier one, rows of -inf only (nothing beats the start value), and blocks holding both +inf
    and -inf or huge values (where a NaN check built on a running sum would raise false alarms)."""
    rng = np.random.default_rng(n)
    rows = [rng.integers(-3, 4, n).astype(np.float32), np.full(n, -np.inf, np.float32),
            np.full(n, np.inf, np.float32), (rng.choice([-1, 1], n) * 3e38).astype(np.float32),
            rng.choice(np.array([np.inf, -np.inf, 0.0, -0.0], np.float32), n)]
    last = np.zeros(n, np.float32)
    last[n - 1] = 2
    rows.append(last)
    late = np.ones(n, np.float32)
    late[: n // 2] = 0
    rows.append(late)
    a = np.stack(rows)
    for is_max in (True, False):
        want = _first_arg_reference(a, is_max)
        x = pylucid.from_numpy(a)
        assert (x.argmax(1) if is_max else x.argmin(1)).tolist() == want
        for r in range(a.shape[0]):
            row = pylucid.from_numpy(a[r].copy())
            assert (row.argmax() if is_max else row.argmin()).item() == want[r]


def test_float32_row_kernels_at_every_alignment():
    """Guards the head peeled off before the first cache-line boundary (rows starting anywhere in
    a 64-byte line, as numpy's 16-byte aligned buffers and sliced views do): arg results, the
    first NaN inside the head, and the double sum all unchanged by the start offset."""
    rng = np.random.default_rng(7)
    buf = rng.integers(-4, 5, 4000).astype(np.float32)
    for n in (3, 16, 40, 256, 271, 700, 1500):
        for off in range(16):
            v = buf[off:off + n]
            x = pylucid.from_numpy(v)
            assert x.argmax().item() == _first_arg_reference(v[None], True)[0]
            assert x.argmin().item() == _first_arg_reference(v[None], False)[0]
            assert x.sum().item() == float(np.float32(v.astype(np.float64).sum()))
    nan = buf.copy()
    nan[5] = np.nan
    for off in range(6):
        assert pylucid.from_numpy(nan[off:off + 700]).argmax().item() == 5 - off


def test_float32_arg_noncontiguous_rows():
    """Guards against a strided float32 view reaching the dense row kernel."""
    a = np.random.default_rng(3).integers(-9, 9, size=(40, 300)).astype(np.float32)
    v = a[::2, ::3]
    x = pylucid._C._from_numpy(v)
    assert x.argmax(1).tolist() == _first_arg_reference(v, True)
    assert x.argmin(1).tolist() == _first_arg_reference(v, False)
    assert x.argmax().item() == _first_arg_reference(v.reshape(1, -1), True)[0]


def test_argmax_float32_matches_pytorch():
    """Guards the float32 fast path against PyTorch on random data with NaN and ties."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).integers(-50, 50, size=(64, 4096)).astype(np.float32)
    a[5, 100] = a[5, 3000] = np.nan
    x, t = pylucid.from_numpy(a), torch.from_numpy(a)
    assert x.argmax(-1).tolist() == t.argmax(-1).tolist()
    assert x.argmin(-1).tolist() == t.argmin(-1).tolist()
    assert x.argmax().item() == t.argmax().item()


@pytest.mark.parametrize("shape", [(1, 64), (13, 64), (9, 100), (17, 255), (1000, 71)])
def test_float32_short_row_sums_do_not_depend_on_their_group(shape):
    """Guards the short-row float32 sum (rows of 64..255 summed eight at a time, padded groups
    re-reading row 0): every row equals the float64 sum of its elements (integers: exact) and the
    same row summed alone, on one thread or several; mean divides the same sums."""
    rng = np.random.default_rng(shape[0])
    a = rng.integers(-1000, 1000, shape).astype(np.float32) * np.float32(0.125)
    x = pylucid.from_numpy(a)
    want = a.astype(np.float64).sum(axis=1)
    n = pylucid.get_num_threads()
    try:
        for t in (1, 2):
            pylucid.set_num_threads(t)
            np.testing.assert_array_equal(np.asarray(x.sum(1)), want.astype(np.float32))
            np.testing.assert_array_equal(np.asarray(x.mean(1)), (want / shape[1]).astype(np.float32))
    finally:
        pylucid.set_num_threads(n)
    b = rng.standard_normal(shape).astype(np.float32)
    rows = np.asarray(pylucid.from_numpy(b).sum(1))
    for r in range(shape[0]):
        assert np.asarray(pylucid.from_numpy(b[r:r + 1].copy()).sum(1))[0] == rows[r]


@pytest.mark.parametrize("shape", [(1, 300_001), (3, 70_000), (64, 4096), (1, 2_000_000), (4096, 64)])
def test_float32_row_sums_same_bits_on_any_thread_count(shape):
    """Guards the float32 row sum's split over threads: rows past 65536 elements are summed as fixed
    spans whose double partials are added in order, so one thread and four give the same bits (a
    split that followed the thread count would not); and a cancelling row (1e8 and -1e8 around
    small terms) still rounds the float64 sum of its float32 elements. A row of ones between 2^60
    and -2^60 makes the result depend on which partial each one lands in."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(shape) * 10 ** rng.uniform(-3, 3, shape)).astype(np.float32)
    a[0, :2] = [1e8, -1e8]
    a[0, -1] = 0.1
    if shape[1] > 65536:  # the ones absorbed in double next to 2^60 depend on the summation order
        a[-1] = 1.0
        a[-1, 0], a[-1, -1] = 2.0**60, -(2.0**60)
    x = pylucid.from_numpy(a)
    n = pylucid.get_num_threads()
    try:
        got = []
        for t in (1, 2, 4):
            pylucid.set_num_threads(t)
            got.append(np.asarray(x.sum(1)).view(np.int32).copy())
            got.append(np.float32(x.sum().item()).view(np.int32))
    finally:
        pylucid.set_num_threads(n)
    for rows, total in zip(got[2::2], got[3::2]):
        np.testing.assert_array_equal(rows, got[0])
        assert total == got[1]
    want = a.astype(np.float64).sum(axis=1)
    err = np.abs(np.asarray(x.sum(1)).astype(np.float64) - want)
    # Accumulated in double: the float32 rounding (half an ulp) plus double rounding far below it.
    half_ulp = 0.5 * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert (err <= half_ulp + 1e-12 * np.abs(a.astype(np.float64)).sum(axis=1)).all()


@pytest.mark.parametrize("shape", [(3, 0), (5, 1), (7, 7), (7, 8), (7, 15), (7, 16), (9, 33), (4, 64), (1024, 1024),
                                   (2, 100_000), (1, 1_000_001), (3, 400_000), (1, 2_100_000)])
def test_float32_row_sums_accumulate_in_double(shape):
    """Guards the vectorised float32 row sum (double lanes, rows or one long row over threads past
    the per-thread grain): lane tails, empty rows, and double accumulation (a float32 sum of 0.1s drifts by ~1e-4
    relative; a double one rounds once)."""
    a = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    if shape[1] > 1000:
        a[0, :] = 0.1
    x = pylucid.from_numpy(a)
    want = a.astype(np.float64).sum(axis=1).astype(np.float32)
    np.testing.assert_allclose(np.asarray(x.sum(1)), want, rtol=1e-6, atol=1e-6)
    if shape[1] > 1000:
        assert np.asarray(x.sum(1))[0] == np.float32(np.float64(np.float32(0.1)) * shape[1])
    np.testing.assert_allclose(np.asarray(x.mean(1)), (a.astype(np.float64).mean(axis=1) if shape[1] else
                                                       np.full(shape[0], np.nan)).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(x.sum().item(), a.astype(np.float64).sum(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape,dims", [((128, 256), 0), ((128, 10), 0), ((3, 0), 0), ((1, 5), 0), ((4096, 300), 0),
                                        ((6, 50, 7), 1), ((2, 3000, 1100), 1), ((5, 4, 3, 2), (0, 1)),
                                        ((100_000, 2), 0)])
def test_float32_sums_over_leading_dims_accumulate_in_double(shape, dims):
    """Column sums (a bias gradient: x.sum(0); a sum over a middle dim) of float32 add in double, in
    row order or in fixed pieces of rows, so they are within half an ulp of the exact sum and the
    same bits on 1 and 2 threads."""
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    if a.size:
        a.reshape(-1)[::3] = 0.1
    x = pylucid.from_numpy(a)
    got, n = [], pylucid.get_num_threads()
    try:
        for t in (1, 2):
            pylucid.set_num_threads(t)
            got.append((np.asarray(x.sum(dims)).copy(), np.asarray(x.mean(dims)).copy()))
    finally:
        pylucid.set_num_threads(n)
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])
    want = a.astype(np.float64).sum(axis=dims)
    half_ulp = 0.5 * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    err = np.abs(got[0][0].astype(np.float64) - want)
    assert (err <= half_ulp + 1e-12 * np.abs(a.astype(np.float64)).sum(axis=dims)).all()
    count = np.prod([shape[d] for d in np.atleast_1d(dims)])
    if count:
        np.testing.assert_allclose(got[0][1], (want / count).astype(np.float32), rtol=1e-6)
