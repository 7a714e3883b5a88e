"""unique, bincount, histc and searchsorted: against numpy and torch, NaN handling, typed errors
(none of them records a gradient)."""
import numpy as np
import pytest

import pylucid


def test_unique_flags_and_nan():
    """Guards against NaNs merged into one value and the inverse not in the input's shape."""
    x = pylucid.tensor([[3.0, 1.0], [2.0, 1.0], [float("nan"), float("nan")]])
    v, inv, cnt = pylucid.unique(x, return_inverse=True, return_counts=True)
    assert v.tolist()[:3] == [1.0, 2.0, 3.0] and np.isnan(v.tolist()[3:]).all() and v.shape == (5,)
    assert inv.tolist() == [[2, 0], [1, 0], [3, 4]]
    assert cnt.tolist() == [2, 1, 1, 1, 1]
    a = np.array([5, 3, 5, 1, 3, 3])
    v, c = pylucid.tensor(a).unique(return_counts=True)
    ev, ec = np.unique(a, return_counts=True)
    assert v.tolist() == ev.tolist() and c.tolist() == ec.tolist()
    v, i = pylucid.unique(pylucid.tensor(a), sorted=True, return_inverse=True)
    assert v[i].tolist() == a.tolist()
    assert isinstance(pylucid.unique(pylucid.tensor(a)), pylucid.Tensor)
    assert pylucid.unique(pylucid.tensor([], dtype=pylucid.int64)).shape == (0,)
    assert pylucid.unique(pylucid.tensor(a), dim=0).tolist() == [1, 3, 5]
    with pytest.raises(IndexError, match="unique"):
        pylucid.unique(pylucid.tensor(a), dim=1)


def test_bincount():
    """Guards against minlength ignored, weights' dtype rule, and negative values indexing memory."""
    x = pylucid.tensor([0, 1, 1, 3])
    assert pylucid.bincount(x).tolist() == [1, 2, 0, 1]
    assert x.bincount(minlength=6).tolist() == [1, 2, 0, 1, 0, 0]
    w = pylucid.tensor([1.0, 2.0, 3.0, 4.0])
    r = pylucid.bincount(x, weights=w)
    assert r.dtype == pylucid.float32 and r.tolist() == [1.0, 5.0, 0.0, 4.0]
    assert pylucid.bincount(x, weights=pylucid.tensor([1, 2, 3, 4])).dtype == pylucid.float64
    assert pylucid.bincount(pylucid.tensor([], dtype=pylucid.int64), minlength=3).tolist() == [0, 0, 0]
    for bad in ([-1], [[1]]):
        with pytest.raises(pylucid.LucidError, match="bincount"):
            pylucid.bincount(pylucid.tensor(bad))
    with pytest.raises(pylucid.DtypeMismatch, match="bincount"):
        pylucid.bincount(pylucid.tensor([1.0]))
    with pytest.raises(pylucid.ShapeMismatch, match="bincount"):
        pylucid.bincount(x, weights=pylucid.ones(3))


def test_histc_against_numpy_and_torch():
    """Guards against the maximum dropped from the last bin and out-of-range values counted."""
    assert pylucid.histc(pylucid.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3).tolist() == [0.0, 2.0, 1.0, 0.0]
    assert pylucid.histc(pylucid.tensor([1.0, 2.0, 1.0]), bins=4).tolist() == [2.0, 0.0, 0.0, 1.0]
    a = np.random.default_rng(0).standard_normal(1000)
    h = pylucid.tensor(a).histc(bins=10, min=-2, max=2)
    np.testing.assert_array_equal(np.asarray(h), np.histogram(a, bins=10, range=(-2, 2))[0])
    assert h.dtype == pylucid.float64
    with pytest.raises(pylucid.DtypeMismatch, match="histc"):
        pylucid.histc(pylucid.tensor([1, 2]))
    with pytest.raises(pylucid.LucidError, match="histc"):
        pylucid.histc(pylucid.tensor([1.0]), bins=0)
    with pytest.raises(pylucid.LucidError, match="histc"):
        pylucid.histc(pylucid.tensor([1.0]), min=2, max=1)
    torch = pytest.importorskip("torch")
    f = a.astype(np.float32)
    np.testing.assert_array_equal(np.asarray(pylucid.histc(pylucid.tensor(f), bins=7)),
                                  torch.histc(torch.tensor(f), bins=7).numpy())


def test_searchsorted():
    """Guards against left/right swapped, batched sequences searched in the wrong row, and scalars refused."""
    seq = pylucid.tensor([1, 3, 5, 7])
    v = pylucid.tensor([[3, 6], [9, 0]])
    assert pylucid.searchsorted(seq, v).tolist() == [[1, 3], [4, 0]]
    assert pylucid.searchsorted(seq, v, right=True).tolist() == [[2, 3], [4, 0]]
    assert pylucid.searchsorted(seq, 3, side="right").item() == 2
    batched = pylucid.tensor([[1, 3, 5, 7], [2, 4, 6, 8]])
    assert pylucid.searchsorted(batched, v, side="right").tolist() == [[2, 3], [4, 0]]
    assert pylucid.searchsorted(pylucid.tensor([1.0, 3.0]), pylucid.tensor([2])).tolist() == [1]
    unsorted = pylucid.tensor([5.0, 1.0, 3.0])
    assert pylucid.searchsorted(unsorted, pylucid.tensor([2.0]), sorter=unsorted.argsort()).tolist() == [1]
    a = np.sort(np.random.default_rng(1).standard_normal(50))
    q = np.random.default_rng(2).standard_normal(30)
    for side in ("left", "right"):
        np.testing.assert_array_equal(np.asarray(pylucid.searchsorted(pylucid.tensor(a), pylucid.tensor(q), side=side)),
                                      np.searchsorted(a, q, side=side))
    with pytest.raises(pylucid.ShapeMismatch, match="searchsorted"):
        pylucid.searchsorted(batched, pylucid.tensor([[1], [2], [3]]))
    with pytest.raises(pylucid.LucidError, match="searchsorted"):
        pylucid.searchsorted(seq, v, side="middle")
    with pytest.raises(pylucid.DtypeMismatch, match="searchsorted"):
        pylucid.searchsorted(seq, v, out_int32=True)
    assert seq.tolist() == [1, 3, 5, 7]


def test_no_gradient_recorded():
    """Guards against counting ops attaching a node to a float input that requires grad."""
    x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    assert not pylucid.histc(x, bins=2).requires_grad
    assert not pylucid.unique(x).requires_grad
    assert not pylucid.searchsorted(x.detach(), x).requires_grad
