"""index_add/index_copy/index_fill/index_put, scatter/scatter_reduce, take, kthvalue,
div(rounding_mode=), unique(dim=), erfinv, fill_diagonal_ and the table of in-place methods:
values against PyTorch (skipped without it) and numpy, float64 gradcheck of every
differentiable one (non-contiguous inputs, repeated indices, ties), typed errors."""
import numpy as np
import pylucid
import pytest
from pylucid.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(10)


def _t(a, requires_grad=False):
    return pylucid.tensor(np.asarray(a), requires_grad=requires_grad)


def _np(t):
    return np.asarray(t.detach().numpy())


def _torch():
    return pytest.importorskip("torch")


def _both(fn, *arrays):
    """fn applied to pylucid and to torch tensors made from the same arrays."""
    torch = _torch()
    ours = fn(pylucid, *[pylucid.tensor(a) for a in arrays])
    theirs = fn(torch, *[torch.tensor(a) for a in arrays])
    return ours, theirs


CASES = {
    "index_add": lambda L, x, i, s: x.index_add(1, i, s, alpha=2.0),
    "index_add_dim0": lambda L, x, i, s: L.index_add(x.t(), 0, i, s.t()),
    "index_copy": lambda L, x, i, s: x.index_copy(1, i[:2], s[:, :2]),
    "index_fill": lambda L, x, i, s: x.index_fill(1, i, -3.0),
    "scatter_src": lambda L, x, i, s: x.scatter(1, i.view(1, -1).expand(3, -1)[:, :2], s),
    "scatter_value": lambda L, x, i, s: x.scatter(1, i.view(1, -1).expand(3, -1), 7.5),
    "scatter_add": lambda L, x, i, s: x.scatter(1, i.view(1, -1).expand(3, -1), s, reduce="add"),
    "take": lambda L, x, i, s: L.take(x, L.tensor([[0, 14], [-1, 3]])),
    "index_put_acc": lambda L, x, i, s: x.index_put((L.tensor([0, 2, 0]), L.tensor([1, 1, 1])), L.tensor(2.0, dtype=x.dtype),
                                                    accumulate=True),
    "index_put": lambda L, x, i, s: x.index_put((L.tensor([0, 2]),), L.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=x.dtype)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_index_family_equals_torch(name):
    """Guards against a wrong position, a repeat that overwrites instead of adding (or the
    reverse), or a lost alpha."""
    x = RNG.standard_normal((3, 5))
    i = np.array([4, 0, 4])
    s = RNG.standard_normal((3, 3))
    ours, theirs = _both(lambda L, x, i, s: CASES[name](L, x, i, s), x, i, s)
    np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_equals_torch_with_gradients(reduce, include_self):
    """Values and both gradients, with repeated targets, ties in the max and a zero in the product."""
    torch = _torch()
    x = np.round(RNG.standard_normal((3, 4)), 1)
    src = np.round(RNG.standard_normal((3, 5)), 1)
    src[0, 1] = src[0, 3] = x[0, 2] = 2.5  # ties for amax
    src[1, 0] = 0.0                         # a zero for prod
    idx = np.array([[2, 2, 0, 2, 1], [0, 0, 3, 1, 1], [3, 3, 3, 0, 2]])
    out = {}
    for L in (pylucid, torch):
        a = L.tensor(x, requires_grad=True)
        b = L.tensor(src, requires_grad=True)
        r = a.scatter_reduce(1, L.tensor(idx), b, reduce, include_self=include_self)
        (r * L.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
        out[L] = [np.asarray(t.detach().numpy()) for t in (r, a.grad, b.grad)]
    for p, q in zip(out[pylucid], out[torch]):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-12)


def test_gradchecks():
    """float64 finite differences through every differentiable index op, non-contiguous inputs included."""
    x = _t(RNG.standard_normal((5, 4)).T, True)  # non-contiguous
    src = _t(RNG.standard_normal((4, 3)), True)
    i = pylucid.tensor([4, 1, 4])
    idx2 = pylucid.tensor([[0, 2, 0], [1, 1, 3], [2, 0, 0], [4, 4, 4]])
    assert gradcheck(lambda x, s: x.index_add(1, i, s, alpha=0.5), [x, src])
    assert gradcheck(lambda x, s: x.index_copy(1, pylucid.tensor([3, 0, 2]), s), [x, src])
    assert gradcheck(lambda x: x.index_fill(1, i, 0.25), [x])
    assert gradcheck(lambda x, s: x.scatter(1, idx2, s), [x, src])
    assert gradcheck(lambda x: pylucid.take(x, pylucid.tensor([[0, 19], [7, 7]])), [x])
    assert gradcheck(lambda x, s: x.index_put((pylucid.tensor([0, 0, 3]),), s[:3, :1].expand(3, 5),
                                              accumulate=True), [x, src])
    for reduce in ("sum", "mean", "amax", "prod"):
        assert gradcheck(lambda x, s, r=reduce: x.scatter_reduce(1, idx2, s, r, include_self=False), [x, src])
    assert gradgradcheck(lambda x, s: x.index_add(1, i, s * s), [x, src])
    assert gradcheck(lambda x: pylucid.kthvalue(x, 2, dim=0, keepdim=True).values, [x])


def test_kthvalue_take_div_unique_against_torch():
    """kthvalue's value and index, take with negative indices, the two rounding modes of div on
    floats and integers (negative operands), and unique over rows and columns with inverse/counts."""
    torch = _torch()
    x = RNG.permutation(24).reshape(2, 3, 4).astype(np.float64)
    for k, dim, keep in ((1, -1, False), (3, 1, True), (2, 0, False)):
        a, b = _both(lambda L, x, k=k, d=dim, kd=keep: L.kthvalue(x, k, d, kd), x)
        np.testing.assert_array_equal(_np(a.values), b.values.numpy())
        np.testing.assert_array_equal(_np(a.indices), b.indices.numpy())
        assert type(a).__name__ == "kthvalue" and a._fields == ("values", "indices")
    num_f = np.array([-7.5, 7.5, -6.0, 5.0, 0.5])
    num_i = np.array([-7, 7, -6, 5, 0])
    for num, den in ((num_f, np.array([2.0, -2.0, 4.0, 3.0, -0.25])), (num_i, np.array([2, -2, 4, 3, 5]))):
        for mode in (None, "trunc", "floor"):
            a, b = _both(lambda L, n, d, m=mode: L.div(n, d, rounding_mode=m), num, den)
            assert _np(a).dtype == b.numpy().dtype
            np.testing.assert_array_equal(_np(a), b.numpy())
        a, b = _both(lambda L, n, d: n.clone().div_(d, rounding_mode="floor"), num, den)
        np.testing.assert_array_equal(_np(a), b.numpy())
    rows = np.array([[1, 2], [3, 4], [1, 2], [0, 9]])
    for dim in (0, 1):
        a, b = _both(lambda L, r, d=dim: L.unique(r, dim=d, return_inverse=True, return_counts=True), rows)
        for p, q in zip(a, b):
            np.testing.assert_array_equal(_np(p), q.numpy())


def test_erfinv_against_torch_and_gradcheck():
    """erfinv equals torch's to float32 rounding (exact at the ends), inverts erf in float64, and its
    derivative sqrt(pi)/2 exp(erfinv^2) passes first and second order checks."""
    y = np.concatenate([RNG.uniform(-0.999999, 0.999999, 2000), [0.0, 1.0, -1.0, 1.5, -0.9999999]])
    ours = _np(pylucid.erfinv(pylucid.tensor(y.astype(np.float32))))
    yy = _np(pylucid.erfinv(pylucid.tensor(y[:2000])))
    np.testing.assert_allclose(_np(pylucid.erf(pylucid.tensor(yy))), y[:2000], rtol=1e-15, atol=1e-15)
    torch = pytest.importorskip("torch")
    ref = torch.erfinv(torch.tensor(y.astype(np.float32))).numpy()
    np.testing.assert_allclose(ours, ref, rtol=3e-7, atol=1e-7, equal_nan=True)
    x = _t(RNG.uniform(-0.9, 0.9, (3, 2)), True)
    assert gradcheck(pylucid.erfinv, [x]) and gradgradcheck(pylucid.erfinv, [x])


def test_fill_diagonal_and_inplace_table_against_torch():
    """fill_diagonal_ (square, wide, tall with and without wrap, 3-d cube) and a sample of the
    generated in-place methods against torch."""
    torch = _torch()
    for shape, wrap in (((4, 4), False), ((3, 5), False), ((7, 3), False), ((7, 3), True), ((3, 3, 3), False)):
        a, b = _both(lambda L, z, w=wrap: z.fill_diagonal_(2.5, wrap=w), np.zeros(shape))
        np.testing.assert_array_equal(_np(a), b.numpy())
    x = RNG.standard_normal((3, 4)) * 3
    for name, args in (("floor_", ()), ("ceil_", ()), ("round_", ()), ("trunc_", ()), ("clamp_min_", (0.5,)),
                       ("clamp_max_", (-0.5,)), ("log1p_", ()), ("expm1_", ()), ("erf_", ()), ("reciprocal_", ()),
                       ("remainder_", (1.5,)), ("fmod_", (1.5,)), ("cumsum_", (1,)), ("tril_", ()), ("lt_", (0.0,)),
                       ("multiply_", (2.0,)), ("logical_not_", ())):
        src = np.abs(x) if name == "log1p_" else x
        a, b = _both(lambda L, v, n=name, ar=args: getattr(v, n)(*ar), src)
        np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-12, err_msg=name)


def test_inplace_methods_are_recorded():
    """A generated in-place method on a non-leaf is differentiated as its out-of-place op."""
    a = _t(RNG.standard_normal(5), True)
    b = a * 2
    b.expm1_()
    b.sum().backward()
    np.testing.assert_allclose(_np(a.grad), 2 * np.exp(2 * _np(a)), rtol=1e-12)
    c = _t(RNG.standard_normal((3, 4)), True)
    d = c * 1
    d.index_add_(1, pylucid.tensor([0, 0]), c[:, :2] ** 2)
    d.sum().backward()
    expect = np.ones((3, 4))
    expect[:, :2] += 2 * _np(c)[:, :2]
    np.testing.assert_allclose(_np(c.grad), expect, rtol=1e-12)
    leaf = _t([1.0, 2.0], True)
    with pytest.raises(RuntimeError):
        leaf.floor_()


def test_errors():
    """Bad dtypes, dims, shapes, indices and modes raise typed errors naming the op."""
    x = pylucid.zeros(3, 4)
    with pytest.raises(TypeError, match="index_add"):
        x.index_add(0, pylucid.tensor([0.0]), pylucid.zeros(1, 4))
    with pytest.raises(IndexError, match="index_add"):
        x.index_add(0, pylucid.tensor([3]), pylucid.zeros(1, 4))
    with pytest.raises(ValueError, match="index_add"):
        x.index_add(0, pylucid.tensor([1]), pylucid.zeros(2, 4))
    with pytest.raises(IndexError, match="index_fill"):
        x.index_fill(2, pylucid.tensor([0]), 1.0)
    with pytest.raises(IndexError, match="scatter"):
        x.scatter(1, pylucid.tensor([[4]]), 1.0)
    with pytest.raises(ValueError, match="scatter_reduce"):
        x.scatter_reduce(1, pylucid.tensor([[0]]), pylucid.ones(1, 1), "median")
    with pytest.raises(ValueError, match="kthvalue"):
        x.kthvalue(5)
    with pytest.raises(IndexError, match="take"):
        pylucid.take(x, pylucid.tensor([12]))
    with pytest.raises(ValueError, match="rounding_mode"):
        pylucid.div(x, 2, rounding_mode="ceil")
    with pytest.raises(ValueError, match="fill_diagonal_"):
        pylucid.zeros(2, 3, 4).fill_diagonal_(1.0)
    with pytest.raises(TypeError, match="erfinv"):
        pylucid.erfinv([0.5])
    assert x.tolist() == [[0.0] * 4] * 3  # inputs left intact


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce(reduce, include_self):
    """Guards against index_reduce (PyTorch's slice-wise scatter_reduce) being missing, reducing
    along the wrong dim, or losing a gradient; checked against numpy and against torch."""
    x = RNG.standard_normal((4, 3))
    src = RNG.standard_normal((4, 5))
    idx = np.array([0, 2, 0, 0, 2])  # column 1 gets nothing
    r = _t(x).index_reduce(1, _t(idx), _t(src), reduce, include_self=include_self)
    fn = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    ref = x.copy()
    for j in range(3):
        cols = [src[:, k] for k in range(5) if idx[k] == j] + ([x[:, j]] if include_self else [])
        if len(cols) > (1 if include_self else 0):
            ref[:, j] = fn(np.stack(cols), axis=0)
    np.testing.assert_allclose(_np(r), ref, rtol=1e-12)
    a, b = _t(x, True), _t(src, True)
    assert gradcheck(lambda u, v: u.index_reduce(1, _t(idx), v, reduce, include_self=include_self), [a, b])
    y = _t(x.copy())
    y.index_reduce_(1, _t(idx), _t(src), reduce, include_self=include_self)
    np.testing.assert_allclose(_np(y), ref, rtol=1e-12)
    torch = _torch()
    t = torch.tensor(x).index_reduce(1, torch.tensor(idx), torch.tensor(src), reduce, include_self=include_self)
    np.testing.assert_allclose(_np(r), t.numpy(), rtol=1e-12)


def test_index_reduce_errors():
    """Guards against a bad reduce name or an index/source length mismatch passing silently."""
    with pytest.raises(ValueError, match="index_reduce: reduce"):
        pylucid.zeros(3).index_reduce(0, pylucid.tensor([0]), pylucid.ones(1), "sum")
    with pytest.raises(ValueError, match="Number of indices"):
        pylucid.zeros(3).index_reduce(0, pylucid.tensor([0, 1]), pylucid.ones(3), "prod")
