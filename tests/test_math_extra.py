"""The composites of _math_extra (stacking, diff, running reductions, order statistics, cov,
small linear algebra, ranges), _compat_extra (finfo/iinfo, the no-op switches, compile) and
pylucid.random: forward against numpy (and torch where installed), float64 gradcheck and
gradgradcheck through check_op (non-contiguous inputs included), size-1 and empty dims, typed
errors."""
import math
import warnings

import numpy as np
import pytest

import pylucid
from helpers import as_leaf, check_op, rand_array


def _lower_median(a, axis):
    return np.take(np.sort(a, axis=axis), (a.shape[axis] - 1) // 2, axis=axis)


def _block_diag(*arrays):
    rows = sum(a.shape[0] for a in arrays)
    out = np.zeros((rows, sum(a.shape[1] for a in arrays)))
    r = c = 0
    for a in arrays:
        out[r:r + a.shape[0], c:c + a.shape[1]] = a
        r, c = r + a.shape[0], c + a.shape[1]
    return out


DIFFERENTIABLE = [
    # name, pylucid fn, numpy reference, shapes
    ("diff", lambda a: pylucid.diff(a), lambda a: np.diff(a), [(3, 5)]),
    ("diff_n2_dim0", lambda a: pylucid.diff(a, 2, 0), lambda a: np.diff(a, 2, 0), [(5, 3)]),
    ("diff_prepend", lambda a, b: pylucid.diff(a, dim=0, prepend=b, append=b),
     lambda a, b: np.diff(np.concatenate([b, a, b]), axis=0), [(4, 3), (1, 3)]),
    ("cummax", lambda a: pylucid.cummax(a, 1).values, lambda a: np.maximum.accumulate(a, 1), [(3, 6)]),
    ("cummin", lambda a: pylucid.cummin(a, 0).values, lambda a: np.minimum.accumulate(a, 0), [(5, 2)]),
    ("logcumsumexp", lambda a: pylucid.logcumsumexp(a, 1), lambda a: np.logaddexp.accumulate(a, 1), [(3, 5)]),
    ("median_dim", lambda a: pylucid.median(a, 1).values, lambda a: _lower_median(a, 1), [(3, 6)]),
    ("median_all", lambda a: pylucid.median(a), lambda a: _lower_median(a.reshape(-1), 0), [(3, 4)]),
    ("nanmedian_dim", lambda a: pylucid.nanmedian(a, 0).values, lambda a: _lower_median(a, 0), [(5, 3)]),
    ("quantile", lambda a: pylucid.quantile(a, 0.3, dim=1), lambda a: np.quantile(a, 0.3, axis=1), [(3, 5)]),
    ("quantile_vec", lambda a: pylucid.quantile(a, pylucid.tensor([0.1, 0.9], dtype=pylucid.float64)),
     lambda a: np.quantile(a, [0.1, 0.9]), [(4, 3)]),
    ("quantile_midpoint", lambda a: pylucid.quantile(a, 0.4, 0, interpolation="midpoint"),
     lambda a: np.quantile(a, 0.4, axis=0, method="midpoint"), [(6, 2)]),
    ("cov", lambda a: pylucid.cov(a), np.cov, [(3, 5)]),
    ("cov_1d", lambda a: pylucid.cov(a), np.cov, [(6,)]),
    ("cov_weights", lambda a: pylucid.cov(a, fweights=pylucid.tensor([1, 2, 1, 3]),
                                          aweights=pylucid.tensor([0.5, 1.0, 2.0, 1.0], dtype=pylucid.float64)),
     lambda a: np.cov(a, fweights=[1, 2, 1, 3], aweights=[0.5, 1.0, 2.0, 1.0]), [(2, 4)]),
    ("corrcoef", lambda a: pylucid.corrcoef(a), np.corrcoef, [(3, 5)]),
    ("hstack", lambda a, b: pylucid.hstack([a, b]), lambda a, b: np.hstack([a, b]), [(2, 3), (2, 1)]),
    ("vstack", lambda a, b: pylucid.vstack([a, b]), lambda a, b: np.vstack([a, b]), [(3,), (2, 3)]),
    ("dstack", lambda a, b: pylucid.dstack([a, b]), lambda a, b: np.dstack([a, b]), [(2, 3), (2, 3)]),
    ("column_stack", lambda a, b: pylucid.column_stack([a, b]), lambda a, b: np.column_stack([a, b]), [(3,), (3, 2)]),
    ("block_diag", lambda a, b: pylucid.block_diag(a, b), _block_diag, [(2, 3), (3, 1)]),
    ("cartesian_prod", lambda a, b: pylucid.cartesian_prod(a, b),
     lambda a, b: np.array([[x, y] for x in a for y in b]), [(3,), (2,)]),
    ("combinations", lambda a: pylucid.combinations(a, 2),
     lambda a: np.array([[a[i], a[j]] for i in range(4) for j in range(i + 1, 4)]), [(4,)]),
    ("rot90", lambda a: pylucid.rot90(a, 1, [0, 1]), lambda a: np.rot90(a, 1, (0, 1)), [(2, 3)]),
    ("rot90_k3", lambda a: pylucid.rot90(a, -1, [1, 2]), lambda a: np.rot90(a, -1, (1, 2)), [(2, 3, 4)]),
    ("mv", pylucid.mv, lambda a, b: a @ b, [(3, 4), (4,)]),
    ("vdot", pylucid.vdot, np.vdot, [(4,), (4,)]),
    ("inner", pylucid.inner, np.inner, [(2, 4), (3, 4)]),
    ("addmv", lambda c, a, b: pylucid.addmv(c, a, b, beta=0.5, alpha=2.0),
     lambda c, a, b: 0.5 * c + 2.0 * (a @ b), [(3,), (3, 4), (4,)]),
    ("addr", lambda c, a, b: pylucid.addr(c, a, b, alpha=3.0), lambda c, a, b: c + 3.0 * np.outer(a, b),
     [(3, 2), (3,), (2,)]),
    ("addbmm", lambda c, a, b: pylucid.addbmm(c, a, b, beta=2.0),
     lambda c, a, b: 2.0 * c + np.einsum("bij,bjk->ik", a, b),
     [(2, 4), (3, 2, 5), (3, 5, 4)]),
    ("chain_matmul", lambda a, b: pylucid.chain_matmul(a, b, a), lambda a, b: a @ b @ a, [(3, 3), (3, 3)]),
    ("matrix_power", lambda a: pylucid.matrix_power(a, 5), lambda a: np.linalg.matrix_power(a, 5), [(2, 3, 3)]),
]


@pytest.mark.parametrize("name,fn,ref,shapes", DIFFERENTIABLE, ids=[c[0] for c in DIFFERENTIABLE])
def test_differentiable_against_numpy(name, fn, ref, shapes):
    """Guards against a wrong value, gradient, double backward or non-contiguous handling."""
    check_op(fn, ref, shapes)


def test_median_mode_indices_point_at_values():
    """Guards against values and indices of the order statistics disagreeing."""
    x = pylucid.tensor([[3.0, 1.0, 2.0, 1.0], [5.0, 5.0, 0.0, 2.0]])
    for res in (pylucid.median(x, 1), pylucid.nanmedian(x, 1), pylucid.mode(x, 1), pylucid.cummax(x, 1)):
        values, indices = res
        assert res.values is values and indices.dtype == pylucid.int64
        np.testing.assert_array_equal(np.take_along_axis(x.numpy(), indices.numpy().reshape(2, -1), 1).reshape(
            values.shape), values.numpy())
    assert pylucid.mode(x, 1).values.tolist() == [1.0, 5.0]
    assert pylucid.median(x, 1, keepdim=True).values.shape == (2, 1)
    assert "return_types.median" in repr(pylucid.median(x, 1))


def test_nan_rules():
    """Guards against median/quantile skipping NaN (they propagate it) or nan* variants keeping it."""
    x = pylucid.tensor([[1.0, math.nan, 3.0, 2.0], [math.nan] * 4])
    assert math.isnan(pylucid.median(x, 1).values[0].item()) and pylucid.median(x, 1).indices[0].item() == 1
    assert pylucid.nanmedian(x, 1).values[0].item() == 2.0
    assert math.isnan(pylucid.nanmedian(x, 1).values[1].item())
    assert math.isnan(pylucid.quantile(x, 0.5, dim=1)[0].item())
    assert pylucid.nanquantile(x, 0.5, dim=1)[0].item() == 2.0
    assert math.isnan(pylucid.median(x).item()) and pylucid.nanmedian(x).item() == 2.0
    assert math.isnan(pylucid.cummax(pylucid.tensor([1.0, math.nan, 5.0]), 0).values[2].item())


def test_size_one_and_empty_dims():
    """Guards against the composites breaking on a size-1 or empty dim."""
    one = as_leaf(pylucid.from_numpy(rand_array((1, 3))))
    assert pylucid.median(one, 0).values.shape == (3,)
    assert pylucid.diff(one, dim=0).shape == (0, 3)
    assert pylucid.cummax(one, 0).values.shape == (1, 3)
    assert pylucid.logcumsumexp(one, 0).shape == (1, 3)
    assert pylucid.autograd.gradcheck(lambda a: pylucid.quantile(a, 0.5, dim=1), [one])
    empty = pylucid.zeros(0, 3)
    assert pylucid.diff(empty, dim=0).shape == (0, 3)
    assert pylucid.cummin(empty, 0).indices.shape == (0, 3)
    assert pylucid.logcumsumexp(empty, 0).shape == (0, 3)
    assert pylucid.hstack([empty, empty]).shape == (0, 6)
    assert pylucid.count_nonzero(empty, 0).tolist() == [0, 0, 0]
    assert pylucid.combinations(pylucid.arange(2), 3).shape == (0, 3)
    assert pylucid.tril_indices(0, 3).shape == (2, 0)
    assert math.isnan(pylucid.median(empty).item())
    with pytest.raises(IndexError):
        pylucid.median(empty, 0)
    with pytest.raises(RuntimeError):
        pylucid.quantile(pylucid.zeros(0), 0.5)


def test_zero_dim_inputs():
    """Guards against a 0-d input coming back 1-d (numpy's ascontiguousarray turns 0-d into (1,))."""
    s = pylucid.tensor(3.0)
    assert pylucid.cummax(s, 0).indices.shape == () and pylucid.cummax(s, 0).values.shape == ()
    assert pylucid.mode(s).values.shape == () and pylucid.mode(s).indices.shape == ()
    assert pylucid.median(s, 0).values.shape == () and pylucid.median(s).shape == ()
    assert pylucid.quantile(s, 0.5).shape == () and pylucid.logcumsumexp(s, 0).shape == ()


def test_logcumsumexp_keeps_tiny_terms():
    """Guards against underflow from shifting by the global maximum: a masked -1e9 stays -1e9."""
    x = pylucid.tensor([-1e9, 0.0, -math.inf, 3.0], dtype=pylucid.float64)
    np.testing.assert_allclose(pylucid.logcumsumexp(x, 0).numpy(), np.logaddexp.accumulate(x.numpy()))


def test_integer_results_against_numpy():
    """Guards against wrong index/count results (computed with numpy, returned as int64)."""
    a = np.array([[0, 3, 1], [2, 0, 3]])
    t = pylucid.tensor(a)
    np.testing.assert_array_equal(pylucid.tril_indices(4, 3, 1).numpy(), np.stack(np.tril_indices(4, 1, 3)))
    np.testing.assert_array_equal(pylucid.triu_indices(3, 5, -1).numpy(), np.stack(np.triu_indices(3, -1, 5)))
    assert pylucid.count_nonzero(t).item() == 4 and pylucid.count_nonzero(t, dim=1).tolist() == [2, 2]
    np.testing.assert_array_equal(pylucid.argwhere(t).numpy(), np.argwhere(a))
    np.testing.assert_array_equal(pylucid.isin(t, pylucid.tensor([1, 3])).numpy(), np.isin(a, [1, 3]))
    np.testing.assert_array_equal(pylucid.isin(t, 3, invert=True).numpy(), ~np.isin(a, 3))
    b = pylucid.tensor([0.5, 1.0, 2.5])
    np.testing.assert_array_equal(pylucid.bucketize(t, b).numpy(), np.searchsorted([0.5, 1.0, 2.5], a, "left"))
    np.testing.assert_array_equal(pylucid.bucketize(t, b, right=True).numpy(),
                                  np.searchsorted([0.5, 1.0, 2.5], a, "right"))
    mn, mx = pylucid.aminmax(t.float(), dim=1)
    assert mn.tolist() == [0.0, 0.0] and mx.tolist() == [3.0, 3.0]
    assert pylucid.aminmax(t).max.item() == 3
    x = rand_array((20,))
    hist, edges = pylucid.histogram(pylucid.from_numpy(x), 4, range=(-1.0, 1.0))
    ref = np.histogram(x, 4, range=(-1.0, 1.0))
    np.testing.assert_allclose(hist.numpy(), ref[0])
    np.testing.assert_allclose(edges.numpy(), ref[1])


def test_ranges():
    """Guards against range excluding its end or logspace using the wrong base."""
    with pytest.warns(UserWarning, match="deprecated"):
        r = pylucid.range(1, 4)
    assert r.tolist() == [1.0, 2.0, 3.0, 4.0] and r.dtype == pylucid.get_default_dtype()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert pylucid.range(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
        assert pylucid.range(5, 1, -2, dtype=pylucid.int64).tolist() == [5, 3, 1]
    np.testing.assert_allclose(pylucid.logspace(-1, 2, 4, dtype=pylucid.float64).numpy(), np.logspace(-1, 2, 4))
    np.testing.assert_allclose(pylucid.logspace(0, 3, 4, base=2.0).numpy(), [1, 2, 4, 8])


def test_errors_are_typed():
    """Guards against bad arguments failing with an untyped or misleading error."""
    x = pylucid.ones(2, 3)
    with pytest.raises(IndexError):
        pylucid.diff(x, dim=2)
    with pytest.raises(RuntimeError):
        pylucid.diff(pylucid.tensor(1.0))
    with pytest.raises(RuntimeError):
        pylucid.rot90(x, 1, [0, 0])
    with pytest.raises(RuntimeError):
        pylucid.rot90(x, 1, [0])
    with pytest.raises(ValueError):
        pylucid.quantile(x, 1.5)
    with pytest.raises(ValueError):
        pylucid.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(TypeError):
        pylucid.quantile(pylucid.ones(3, dtype=pylucid.int64), 0.5)
    with pytest.raises(TypeError):
        pylucid.quantile(x, pylucid.tensor([0.5], dtype=pylucid.float64))
    with pytest.raises(RuntimeError):
        pylucid.block_diag(pylucid.ones(1, 1, 1))
    with pytest.raises(RuntimeError):
        pylucid.mv(x, pylucid.ones(2))
    with pytest.raises(RuntimeError):
        pylucid.matrix_power(x, 2)
    with pytest.raises(RuntimeError):  # a negative power of a singular matrix
        pylucid.matrix_power(pylucid.zeros(2, 2), -1)
    with pytest.raises(RuntimeError):
        pylucid.cov(pylucid.ones(2, 2, 2))
    with pytest.raises(TypeError):
        pylucid.median([1.0, 2.0])
    with pytest.raises(RuntimeError):
        pylucid.median(pylucid.tensor([True, False]))
    with pytest.raises(RuntimeError):
        pylucid.logcumsumexp(pylucid.tensor([1, 2]), 0)
    with pytest.raises(RuntimeError), pytest.warns(UserWarning):
        pylucid.range(0, 1, 0)
    with pytest.raises(RuntimeError):
        pylucid.diff(x, n=-1)
    with pytest.raises(RuntimeError):  # refused up front rather than enumerated
        pylucid.combinations(pylucid.arange(4), 2**40, with_replacement=True)
    with pytest.raises(RuntimeError):
        pylucid.tril_indices(2**40, 2**40)


def test_methods_exist():
    """Guards against a function PyTorch also offers as a Tensor method missing here."""
    x = pylucid.tensor([[1.0, 4.0], [2.0, 3.0]])
    assert x.diff().tolist() == [[3.0], [1.0]]
    assert x.median().item() == 2.0 and x.cummax(0).indices.tolist() == [[0, 0], [1, 0]]
    assert x.count_nonzero().item() == 4 and x.aminmax().min.item() == 1.0
    assert x.matrix_power(2).tolist() == [[9.0, 16.0], [8.0, 17.0]]
    assert x.quantile(0.5).item() == 2.5 and x.rot90().tolist() == [[4.0, 3.0], [1.0, 2.0]]
    assert x.mv(pylucid.tensor([1.0, 1.0])).tolist() == [5.0, 5.0]


def test_finfo_iinfo():
    """Guards against wrong dtype limits (attention masks use finfo(dtype).min)."""
    for dt, np_dt in ((pylucid.float16, np.float16), (pylucid.float32, np.float32), (pylucid.float64, np.float64)):
        fi, ref = pylucid.finfo(dt), np.finfo(np_dt)
        assert (fi.eps, fi.max, fi.min, fi.tiny, fi.bits) == (float(ref.eps), float(ref.max), float(ref.min),
                                                              float(ref.tiny), ref.bits)
        assert fi.smallest_normal == fi.tiny and fi.resolution == 10.0**-ref.precision
    bf = pylucid.finfo(pylucid.bfloat16)
    assert bf.eps == 2.0**-7 and bf.bits == 16 and bf.dtype == "bfloat16"
    assert pylucid.tensor([bf.max], dtype=pylucid.bfloat16).float().item() == bf.max
    assert pylucid.finfo().dtype == "float32"
    ii = pylucid.iinfo(pylucid.int64)
    assert (ii.min, ii.max, ii.bits) == (-2**63, 2**63 - 1, 64)
    with pytest.raises(TypeError):
        pylucid.finfo(pylucid.int64)
    with pytest.raises(TypeError):
        pylucid.iinfo(pylucid.float32)
    with pytest.raises(TypeError):
        pylucid.iinfo(pylucid.bool)


def test_finfo_iinfo_match_torch():
    """Guards against a limit differing from PyTorch's."""
    torch = pytest.importorskip("torch")
    for name in ("float16", "bfloat16", "float32", "float64"):
        a, b = pylucid.finfo(getattr(pylucid, name)), torch.finfo(getattr(torch, name))
        for f in ("eps", "max", "min", "tiny", "smallest_normal", "resolution", "bits", "dtype"):
            assert getattr(a, f) == getattr(b, f), (name, f)
        assert repr(a) == repr(b)
    assert repr(pylucid.iinfo(pylucid.int64)) == repr(torch.iinfo(torch.int64))


def test_against_torch():
    """Guards against a PyTorch convention (shapes, tie-breaking, dtype) the numpy references miss."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 5))
    xi = rng.integers(0, 4, (3, 6))
    q = np.array([0.1, 0.5, 0.75])
    cases = [
        (lambda m, a: m.median(a, 1), xi), (lambda m, a: m.mode(a, 1), xi), (lambda m, a: m.mode(a, 0), xi),
        (lambda m, a: m.cummax(a, 1), xi), (lambda m, a: m.cummin(a, 0), xi),
        (lambda m, a: m.quantile(a, m.tensor(q), dim=1, keepdim=True), x),
        (lambda m, a: m.nanquantile(a, 0.3, dim=0, interpolation="nearest"), x),
        (lambda m, a: m.block_diag(a, a[0], a[0, 0]), x), (lambda m, a: m.combinations(a[0], 3), x),
        (lambda m, a: m.combinations(a[0], 2, with_replacement=True), x),
        (lambda m, a: m.column_stack([a[0], a[1]]), x), (lambda m, a: m.dstack([a[0], a[1]]), x),
        (lambda m, a: m.count_nonzero(a, dim=(0, 1)), xi), (lambda m, a: m.aminmax(a, dim=1, keepdim=True), x),
        (lambda m, a: m.histogram(a.reshape(-1), 4), x), (lambda m, a: m.inner(a, m.tensor(2.0, dtype=a.dtype)), x),
        (lambda m, a: m.logspace(-1, 2, 5), x), (lambda m, a: m.cov(a, correction=0), x),
    ]
    for fn, a in cases:
        want, got = fn(torch, torch.tensor(a)), fn(pylucid, pylucid.tensor(a))
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for w, g in zip(want, got):
            np.testing.assert_allclose(np.asarray(g), w.numpy(), rtol=1e-6, atol=1e-6)
    for a, b in [(torch.float32, pylucid.float32), (torch.int64, pylucid.int64), (torch.bool, pylucid.bool)]:
        for c, d in [(torch.float32, pylucid.float32), (torch.int64, pylucid.int64), (torch.bool, pylucid.bool)]:
            assert torch.can_cast(a, c) == pylucid.can_cast(b, d)


def test_switches_and_compile():
    """Guards against the compatibility switches raising, forgetting their setting or changing a model."""
    assert pylucid.get_float32_matmul_precision() == "highest"
    pylucid.set_float32_matmul_precision("high")
    assert pylucid.get_float32_matmul_precision() == "high"
    pylucid.set_float32_matmul_precision("highest")
    with pytest.raises(ValueError):
        pylucid.set_float32_matmul_precision("fast")
    assert pylucid.are_deterministic_algorithms_enabled() is False
    pylucid.use_deterministic_algorithms(True, warn_only=True)
    assert pylucid.are_deterministic_algorithms_enabled() and pylucid.is_deterministic_algorithms_warn_only_enabled()
    pylucid.use_deterministic_algorithms(False)
    model = pylucid.nn.Linear(2, 2)
    assert pylucid.compile(model) is model
    assert pylucid.compile(mode="reduce-overhead")(model) is model

    @pylucid.compile
    def f(x):
        return x * 2
    assert f(pylucid.tensor(3.0)).item() == 6.0


def test_random_module_and_fork_rng():
    """Guards against fork_rng leaking the draws made inside it into the stream outside."""
    pylucid.random.manual_seed(3)
    expected = pylucid.rand(3).tolist()
    pylucid.random.manual_seed(3)
    with pylucid.random.fork_rng():
        pylucid.randn(10)
    assert pylucid.rand(3).tolist() == expected
    state = pylucid.random.get_rng_state()
    a = pylucid.rand(2).tolist()
    pylucid.random.set_rng_state(state)
    assert pylucid.rand(2).tolist() == a
    assert pylucid.random.initial_seed() == 3
