"""sort, argsort, topk and diagonal: forward against numpy (and torch), named-tuple returns,
NaN order, stability, float64 gradcheck and gradgradcheck, typed errors."""
import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4), 1)])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_forward_gradcheck(shape, dim, descending):
    """Guards against the gradient landing on the sorted positions instead of the original ones."""
    def ref(a):
        s = np.sort(a, axis=dim)
        return np.flip(s, axis=dim) if descending else s
    check_op(lambda x: pylucid.sort(x, dim, descending).values, ref, [shape])
    a = rand_array(shape)
    idx = pylucid.argsort(pylucid.tensor(a), dim=dim, descending=descending)
    expected = np.argsort(-a if descending else a, axis=dim, kind="stable")
    np.testing.assert_array_equal(np.asarray(idx), expected)


@pytest.mark.parametrize("shape,k,dim", [((10,), 3, 0), ((4, 9), 2, -1), ((4, 9), 4, 0), ((2, 40, 3), 1, 1),
                                         ((3, 200), 5, 1)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_forward_gradcheck(shape, k, dim, largest):
    """Guards against topk returning unsorted or wrong elements (heap and selection paths both)."""
    def ref(a):
        s = np.sort(a, axis=dim)
        s = np.flip(s, axis=dim) if largest else s
        return np.take(s, np.arange(k), axis=dim)
    check_op(lambda x: pylucid.topk(x, k, dim=dim, largest=largest)[0], ref, [shape])


def test_named_tuples_methods_and_indices():
    """Guards against plain tuples (scripts read .values/.indices) and missing Tensor methods."""
    x = pylucid.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    r = x.sort(dim=1, descending=True)
    assert r.values.tolist() == [[3.0, 2.0, 1.0], [5.0, 4.0, 0.0]] and r.indices.tolist() == [[0, 2, 1], [1, 2, 0]]
    v, i = x.topk(2)
    assert v.tolist() == [[3.0, 2.0], [5.0, 4.0]] and i.tolist() == [[0, 2], [1, 2]]
    assert type(r).__name__ == "sort" and type(x.topk(1)).__name__ == "topk"
    assert x.argsort(dim=0).tolist() == [[1, 0, 0], [0, 1, 1]]
    assert pylucid.sort(x, stable=True).indices.tolist() == [[1, 2, 0], [0, 2, 1]]
    assert x.topk(2, largest=False, sorted=True).values.tolist() == [[1.0, 2.0], [0.0, 4.0]]
    assert pylucid.topk(pylucid.tensor([1, 7, 3]), 1).values.tolist() == [7]


def test_nan_order_and_stability():
    """Guards against NaN compared as an ordinary number (it ranks above every number) and
    stable=True not keeping equal values in input order."""
    x = pylucid.tensor([1.0, float("nan"), -1.0, float("nan"), 1.0])
    v, i = x.sort(stable=True)
    assert v.tolist()[:3] == [-1.0, 1.0, 1.0] and np.isnan(v.tolist()[3:]).all()
    assert i.tolist() == [2, 0, 4, 1, 3]
    assert x.sort(descending=True, stable=True).indices.tolist() == [1, 3, 0, 4, 2]
    assert x.topk(1).indices.tolist() == [1]
    # PyTorch's topk selects with nth_element: of the two equal 1.0s it keeps the later one here.
    assert x.topk(2, largest=False).indices.tolist() == [2, 4]
    t = pylucid.tensor([3.0, 1.0] * 20)
    assert t.sort(stable=True).indices.tolist() == list(range(1, 40, 2)) + list(range(0, 40, 2))
    assert t.argsort(descending=True, stable=True).tolist() == list(range(0, 40, 2)) + list(range(1, 40, 2))


def test_gradient_accumulates_through_indices():
    """Guards against topk's gradient written to the wrong row when dim is not the last."""
    a = rand_array((5, 3))
    x = pylucid.tensor(a, requires_grad=True)
    v, i = x.topk(2, dim=0)
    (v * pylucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=pylucid.float64)).sum().backward()
    expected = np.zeros_like(a)
    order = np.argsort(-a, axis=0)[:2]
    for r, w in enumerate([[1, 2, 3], [4, 5, 6]]):
        for c in range(3):
            expected[order[r, c], c] = w[c]
    np.testing.assert_array_equal(np.asarray(x.grad), expected)
    assert v.grad_fn.name() == "TopkBackward"


def test_errors_leave_inputs_intact():
    """Guards against k out of range reading past the row, and a bad dim accepted."""
    x = pylucid.tensor([[1.0, 2.0, 3.0]])
    for k in (4, -1):
        with pytest.raises(ValueError, match="topk"):
            x.topk(k)
        with pytest.raises(pylucid.LucidError, match="topk"):
            pylucid.topk(x, k)
    with pytest.raises(TypeError):
        x.topk(1.5)
    with pytest.raises(IndexError, match="sort"):
        x.sort(dim=2)
    assert x.tolist() == [[1.0, 2.0, 3.0]]
    assert x.topk(0).values.shape == (1, 0)


def test_diagonal_view_and_gradient():
    """Guards against the offset applied to the wrong dim and a gradient off the diagonal."""
    a = rand_array((4, 5))
    for off in (-2, 0, 1, 3, 7):
        np.testing.assert_array_equal(np.asarray(pylucid.tensor(a).diagonal(off)), np.diagonal(a, off))
    check_op(lambda x: x.diagonal(1), lambda a: np.diagonal(a, 1).copy(), [(4, 5)])
    check_op(lambda x: pylucid.diagonal(x, -1, 0, 2), lambda a: np.diagonal(a, -1, 0, 2).copy(), [(3, 2, 4)])
    with pytest.raises(pylucid.LucidError, match="diagonal"):
        pylucid.tensor([1.0]).diagonal()


def test_sort_topk_against_torch():
    """Guards against drifting from PyTorch's values and index conventions on float32 rows."""
    torch = pytest.importorskip("torch")
    a = rand_array((16, 1000)).astype(np.float32)
    ours, theirs = pylucid.tensor(a).topk(50), torch.tensor(a).topk(50)
    np.testing.assert_array_equal(np.asarray(ours.values), theirs.values.numpy())
    np.testing.assert_array_equal(np.asarray(ours.indices), theirs.indices.numpy())
    ours, theirs = pylucid.tensor(a).sort(dim=0, descending=True), torch.tensor(a).sort(dim=0, descending=True)
    np.testing.assert_array_equal(np.asarray(ours.values), theirs.values.numpy())
    np.testing.assert_array_equal(np.asarray(ours.indices), theirs.indices.numpy())


@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
def test_long_float_rows_sort_stably_with_nan_and_signed_zero(dt):
    """Guards the radix path for float rows of >= 256 keys: stable ties in both directions, -0.0
    equal to +0.0, every NaN equal and largest (last ascending, first descending), infinities;
    without stable=True the same values come out (ties in PyTorch's order, tested below)."""
    rng = np.random.default_rng(3)
    a = np.round(rng.standard_normal((3, 700)) * 2) / 2
    a[:, rng.integers(0, 700, size=9)] = np.nan
    a[:, rng.integers(0, 700, size=9)] = -0.0
    a[:, :4] = [np.inf, -np.inf, -np.nan, 0.0]
    x = pylucid.tensor(a, dtype=getattr(pylucid, dt))
    ref = np.asarray(x.float().numpy(), dtype=np.float64)
    for descending in (False, True):
        values, indices = x.sort(dim=-1, descending=descending, stable=True)
        np.testing.assert_array_equal(x.sort(dim=-1, descending=descending).values.float().numpy(),
                                      values.float().numpy())
        for r in range(3):
            row = ref[r]
            key = np.where(np.isnan(row), np.inf, row)  # NaN largest, ties by index (stable)
            nan_last = np.isnan(row).astype(int)
            expected = np.lexsort((np.arange(700), -key, -nan_last) if descending else (np.arange(700), key, nan_last))
            assert indices[r].tolist() == expected.tolist()
            np.testing.assert_array_equal(values[r].float().numpy(), row[expected].astype(np.float32))
        assert x.argsort(dim=0, descending=descending, stable=True).tolist() == \
            x.sort(dim=0, descending=descending, stable=True)[1].tolist()
        assert x.argsort(dim=0, descending=descending).tolist() == x.sort(dim=0, descending=descending)[1].tolist()


@pytest.mark.parametrize("n", [6, 16, 17, 60, 255, 700])
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64"])
def test_order_of_ties_matches_torch(n, dt):
    """Guards against equal values coming out in a different order than PyTorch's unstable CPU
    sort and topk (std::sort, nth_element, partial_sort), which changes argsort-based ranks and
    which of two equal candidates topk keeps; rows with and without ties, NaN ties, the radix
    path (>= 256 float keys) and topk's partial-sort (k * 64 <= n) and selection paths."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(n)
    a = rng.integers(0, 5, size=(3, n)).astype(np.float64)
    a[1] = rng.standard_normal(n)  # no ties
    if dt != "int64":
        a[2, rng.integers(0, n, size=max(2, n // 8))] = np.nan
    ours, theirs = pylucid.tensor(a, dtype=getattr(pylucid, dt)), torch.tensor(a, dtype=getattr(torch, dt))
    for descending in (False, True):
        for dim in (-1, 0):
            o, t = ours.sort(dim=dim, descending=descending), theirs.sort(dim=dim, descending=descending)
            assert o.indices.tolist() == t.indices.tolist()
            np.testing.assert_array_equal(o.values.double().numpy(), t.values.double().numpy())
            assert ours.argsort(dim=dim, descending=descending).tolist() == \
                theirs.argsort(dim=dim, descending=descending).tolist()
    for k in sorted({1, 2, max(1, n // 64), n // 3 + 1, n}):
        for largest in (True, False):
            for sorted_ in (True, False):
                o, t = ours.topk(k, largest=largest, sorted=sorted_), theirs.topk(k, largest=largest, sorted=sorted_)
                assert o.indices.tolist() == t.indices.tolist(), (k, largest, sorted_)
                np.testing.assert_array_equal(o.values.double().numpy(), t.values.double().numpy())


def test_sort_is_stable_where_torch_is_stable():
    """Guards against the two inputs PyTorch always sorts stably (a long 1-d int64 ascending, by
    its radix sort; a dim of stride 0) coming out in introsort's order."""
    t = pylucid.tensor([2, 0, 1] * 12000)
    assert t.sort().indices[:4].tolist() == [1, 4, 7, 10]
    assert t.sort().indices.tolist() == t.sort(stable=True).indices.tolist()
    e = pylucid.tensor([[1.0], [2.0]]).expand(2, 40)
    assert e.sort(dim=1).indices.tolist() == [list(range(40))] * 2
    assert e.argsort(dim=1, descending=True).tolist() == [list(range(40))] * 2
