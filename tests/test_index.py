"""Indexing: t[...] with ints, slices, None, Ellipsis (views), index tensors / lists / arrays and
bool masks (gathers), __setitem__, index_select, gather, scatter_add, nonzero, iteration."""
import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array

F64 = pylucid.float64
A = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)


def leaf(a):
    return pylucid.tensor(a, dtype=F64, requires_grad=True)


def idx(v):
    return pylucid.tensor(v, dtype=pylucid.int64)


BASIC = [
    lambda t: t[1],
    lambda t: t[-1, -2],
    lambda t: t[:, 1:3],
    lambda t: t[:, ::2, 1::3],
    lambda t: t[..., 2],
    lambda t: t[1, ..., 1:4:2],
    lambda t: t[None, :, None],
    lambda t: t[:, None, 0, ..., None],
    lambda t: t[...],
    lambda t: t[0, 0, 0, 0],
    lambda t: t[:, -100:100],
    lambda t: t[:, 3:1],
]


@pytest.mark.parametrize("k", range(len(BASIC)))
def test_basic_indexing_is_a_view_matching_numpy(k):
    """Guards against basic indexing copying, or computing a wrong offset/stride."""
    f = BASIC[k]
    x = pylucid.from_numpy(A.copy())
    r = f(x)
    np.testing.assert_array_equal(np.asarray(r), f(A))
    if r.numel():
        assert r.storage_offset() + 0 >= 0 and r._version == x._version
        x.add_(1.0)
        np.testing.assert_array_equal(np.asarray(r), f(A) + 1.0)


@pytest.mark.parametrize("k", [0, 2, 3, 5, 7, 9, 11])
def test_basic_indexing_grad(k):
    """Guards against the grad of a basic index landing outside the selected elements."""
    f = BASIC[k]
    check_op(f, f, [(2, 3, 4, 5)])


ADVANCED = [  # (pylucid, numpy reference); I builds an int64 index tensor
    (lambda t, I: t[I([1, 0, 1])], lambda a: a[[1, 0, 1]]),
    (lambda t, I: t[:, I([2, 0])], lambda a: a[:, [2, 0]]),
    (lambda t, I: t[..., I([4, -1, 0])], lambda a: a[..., [4, -1, 0]]),
    (lambda t, I: t[:, I([[2, 0], [1, 1]]), 1:3], lambda a: a[:, [[2, 0], [1, 1]], 1:3]),
    (lambda t, I: t[I([0, 1]), I([1, 2])], lambda a: a[[0, 1], [1, 2]]),
    (lambda t, I: t[:, I([0, 2]), I([[1], [3]])], lambda a: a[:, [0, 2], [[1], [3]]]),
    # indices separated by a slice / None / Ellipsis: the index dims come first
    (lambda t, I: t[I([0, 1]), :, I([1, 2])], lambda a: a[[0, 1], :, [1, 2]]),
    (lambda t, I: t[I([0, 1]), None, I([1, 2])], lambda a: a[[0, 1], None, [1, 2]]),
    (lambda t, I: t[I([[0, 1]]), ..., I([[0], [4]])], lambda a: a[[[0, 1]], ..., [[0], [4]]]),
    # ints select first (PyTorch's rule), then the remaining indices follow numpy's
    (lambda t, I: t[1, I([0, 2]), 1:], lambda a: a[1][[0, 2], 1:]),
    (lambda t, I: t[I([1]), 1, I([2, 3])], lambda a: a[:, 1][[1], [2, 3]]),
    (lambda t, I: t[I(1), :, I([1, 2])], lambda a: a[1][:, [1, 2]]),
]


@pytest.mark.parametrize("k", range(len(ADVANCED)))
def test_advanced_indexing_matches_numpy_and_grad(k):
    """Guards against wrong output placement of index dims, or grads that do not accumulate
    over repeated indices."""
    f, ref = ADVANCED[k]
    np.testing.assert_array_equal(np.asarray(f(pylucid.from_numpy(A.copy()), idx)), ref(A))
    check_op(lambda t: f(t, idx), ref, [(2, 3, 4, 5)])


def test_int_next_to_index_follows_pytorch():
    """Guards against mixing numpy's and PyTorch's placement rules for ints beside index arrays."""
    x = pylucid.from_numpy(A.copy())
    assert x[0, :, [1, 2]].shape == (3, 2, 5)  # numpy would give (2, 3, 5)
    assert A[0, :, [1, 2]].shape == (2, 3, 5)
    assert x[:, 0, [1, 2]].shape == (2, 2, 5)
    np.testing.assert_array_equal(np.asarray(x[0, :, [1, 2]]), A[0][:, [1, 2]])


def test_repeated_indices_accumulate_grad():
    """Guards against scatter (overwrite) instead of scatter-add in the gather's backward."""
    x = leaf([1.0, 2.0, 3.0])
    x[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [3.0, 0.0, 1.0])
    x[idx([[2, 2], [1, 2]])].sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [3.0, 1.0, 4.0])


def test_index_from_lists_and_numpy_arrays():
    """Guards against lists / numpy int32 arrays / bool lists being rejected or misread."""
    x = pylucid.from_numpy(A.copy())
    np.testing.assert_array_equal(np.asarray(x[[1, 0]]), A[[1, 0]])
    np.testing.assert_array_equal(np.asarray(x[:, np.array([2, 0], dtype=np.int32)]), A[:, [2, 0]])
    np.testing.assert_array_equal(np.asarray(x[[True, False]]), A[[True, False]])
    np.testing.assert_array_equal(np.asarray(x[np.int64(1), np.array(2)]), A[1, 2])
    assert x[[]].shape == (0, 3, 4, 5)
    assert x[:, []].shape == (2, 0, 4, 5)


def test_bool_mask_indexing():
    """Guards against masks read in the wrong order, or a mask over several dims misplaced."""
    a = rand_array((3, 4, 2))
    x = pylucid.from_numpy(a.copy())
    m = a[..., 0] > 0
    np.testing.assert_array_equal(np.asarray(x[pylucid.from_numpy(m)]), a[m])
    m1 = a[0, :, 0] > 0
    np.testing.assert_array_equal(np.asarray(x[:, pylucid.from_numpy(m1)]), a[:, m1])
    np.testing.assert_array_equal(np.asarray(x[x > 0]), a[a > 0])
    assert x[True].shape == (1, 3, 4, 2) and x[False].shape == (0, 3, 4, 2)
    # non-contiguous mask
    mt = pylucid.from_numpy(np.ascontiguousarray(m.T)).T
    np.testing.assert_array_equal(np.asarray(x[mt]), a[m])
    check_op(lambda t: t[pylucid.from_numpy(m)], lambda b: b[m], [(3, 4, 2)])
    empty = np.zeros((3, 4), dtype=bool)
    assert x[pylucid.from_numpy(empty)].shape == (0, 2)


def test_zero_size_indexing():
    """Guards against empty index tensors or empty dims reading out of bounds."""
    x = pylucid.zeros(0, 3)
    assert x[:, 1].shape == (0,)
    assert x[[]].shape == (0, 3)
    assert x[:, [0, 2]].shape == (0, 2)
    g = leaf(np.zeros((2, 0)))
    g[[1, 1]].sum().backward()
    assert g.grad.shape == (2, 0)
    with pytest.raises(pylucid.IndexOutOfRange, match="out of range for dim 0 with size 0"):
        x[[0]]


def test_non_contiguous_source():
    """Guards against a gather that assumes the indexed tensor is contiguous."""
    base = rand_array((5, 4))
    x = pylucid.from_numpy(base.copy()).T[:, ::2]  # shape (4, 3), strided both ways
    ref = base.T[:, ::2]
    np.testing.assert_array_equal(np.asarray(x[[3, 0], 1:]), ref[[3, 0], 1:])
    np.testing.assert_array_equal(np.asarray(x[:, [2, 2, 0]]), ref[:, [2, 2, 0]])


def test_index_errors():
    """Guards against out-of-range indices touching memory, and unclear messages."""
    x = pylucid.zeros(3, 4)
    with pytest.raises(pylucid.IndexOutOfRange, match=r"index: index 4 is out of range for dim 1 with size 4"):
        x[0, 4]
    with pytest.raises(IndexError, match=r"index: index -4 is out of range for dim 0 with size 3"):
        x[-4]
    with pytest.raises(pylucid.IndexOutOfRange, match=r"index: index 7 is out of range for dim 1 with size 4"):
        x[:, [0, 7]]
    with pytest.raises(pylucid.IndexOutOfRange, match=r"index -5 is out of range for dim 0 with size 3"):
        x[idx([[0], [-5]])]
    with pytest.raises(pylucid.IndexOutOfRange, match="too many indices for a tensor of dimension 2"):
        x[0, 0, 0]
    with pytest.raises(pylucid.IndexOutOfRange, match="single ellipsis"):
        x[..., ...]
    # The builtin types PyTorch raises: ValueError for a negative step, IndexError for a
    # float or other non-index key.
    with pytest.raises(ValueError, match="step must be positive"):
        x[::-1]
    with pytest.raises(IndexError, match="int64 or bool, got float32"):
        x[pylucid.tensor([0.0])]
    with pytest.raises(IndexError, match="ints or bools, got float64"):
        x[[0.5]]
    with pytest.raises(IndexError, match="got str"):
        x["a"]
    with pytest.raises(IndexError, match="got float"):
        x[0.5]
    with pytest.raises(pylucid.LucidError):  # still pylucid's own errors
        x[0.5]
    with pytest.raises(pylucid.IndexOutOfRange, match=r"shape of the mask \[3\] does not match the shape \[4\]"):
        x[:, pylucid.ones(3, dtype=pylucid.bool)]
    with pytest.raises(pylucid.ShapeMismatch, match=r"shapes \[2\] and \[3\] cannot be broadcast"):
        x[[0, 1], [0, 1, 2]]


# ---- __setitem__ ------------------------------------------------------------------------

def test_setitem_basic_and_advanced():
    """Guards against setitem writing to a copy, not broadcasting, or not bumping the version."""
    a = np.zeros((3, 4))
    x = pylucid.from_numpy(a.copy())
    v0 = x._version
    x[0] = 1.0
    a[0] = 1.0
    x[:, 1:3] = pylucid.tensor([5.0, 6.0], dtype=F64)
    a[:, 1:3] = [5.0, 6.0]
    x[[2, 1], [0, 3]] = pylucid.tensor([7.0, 8.0], dtype=F64)
    a[[2, 1], [0, 3]] = [7.0, 8.0]
    x[x > 6.5] = -1.0
    a[a > 6.5] = -1.0
    x[..., 0] = [9, 10, 11]
    a[..., 0] = [9, 10, 11]
    x[:, [3]] = pylucid.tensor([[1.0], [2.0], [3.0]], dtype=F64)
    a[:, [3]] = [[1.0], [2.0], [3.0]]
    np.testing.assert_array_equal(np.asarray(x), a)
    assert x._version == v0 + 6
    i = pylucid.zeros(3, dtype=pylucid.int64)
    i[1] = 2.7  # truncates into an int tensor, as PyTorch's copy
    assert i.tolist() == [0, 2, 0]


def test_setitem_through_non_contiguous_view():
    """Guards against setitem ignoring the target's strides."""
    a = np.zeros((4, 3))
    x = pylucid.from_numpy(a.copy())
    t = x.T
    t[1, [0, 2]] = 5.0
    t[:, 3] = pylucid.tensor([1.0, 2.0, 3.0], dtype=F64)
    a.T[1, [0, 2]] = 5.0
    a.T[:, 3] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(np.asarray(x), a)


def test_setitem_overlapping_source():
    """Guards against a source that aliases the target being read after it was overwritten."""
    x = pylucid.arange(6.0)
    x[1:] = x[:-1]
    assert x.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]


def test_setitem_rules_and_errors():
    """Guards against setitem on a tensor that requires grad, values that would lose their
    grad, bad shapes and out-of-range indices."""
    w = pylucid.zeros(3, requires_grad=True)
    with pytest.raises(pylucid.LucidError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        w[0] = 1.0
    with pylucid.no_grad():
        w[0] = 1.0
    assert w.tolist() == [1.0, 0.0, 0.0]
    y = pylucid.zeros(3)
    y[0] = w[1] * 3  # recorded, as PyTorch records it: y now carries the gradient to w
    assert y.requires_grad and y.grad_fn.name() == "IndexPutBackward"
    y.sum().backward()
    assert w.grad.tolist() == [0.0, 3.0, 0.0]
    x = pylucid.zeros(3)
    with pytest.raises(pylucid.ShapeMismatch, match=r"value of shape \[2\] cannot be broadcast to the indexed shape \[3\]"):
        x[:] = pylucid.ones(2)
    with pytest.raises(pylucid.ShapeMismatch, match=r"indexed shape \[2\]"):
        x[[0, 1]] = pylucid.ones(3)
    with pytest.raises(pylucid.IndexOutOfRange, match="setitem: index 3"):
        x[[0, 3]] = 1.0
    assert x.tolist() == [0.0, 0.0, 0.0]  # nothing written by the failed calls


# ---- index_select / gather / scatter_add / nonzero --------------------------------------------

def test_index_select():
    """Guards against index_select picking along the wrong dim or dropping repeated grads."""
    i = np.array([2, 0, 2])
    check_op(lambda t: t.index_select(1, idx(i)), lambda a: a[:, i], [(2, 3, 4)])
    check_op(lambda t: pylucid.index_select(t, -1, idx(i)), lambda a: a[..., i], [(2, 3, 4)])
    x = pylucid.arange(6.0).reshape(2, 3)
    assert x.index_select(0, idx(1)).tolist() == [[3.0, 4.0, 5.0]]
    assert x.index_select(1, idx([1, 2])).grad_fn is None
    assert leaf(rand_array((2, 3))).index_select(0, idx([1])).grad_fn.name() == "IndexSelectBackward"
    with pytest.raises(pylucid.ShapeMismatch, match="index must be 0-d or 1-d"):
        x.index_select(0, idx([[0]]))
    with pytest.raises(pylucid.IndexOutOfRange, match="index_select: index 3 is out of range for dim 1 with size 3"):
        x.index_select(1, idx([3]))


def test_gather():
    """Guards against gather reading the wrong element or its backward not accumulating."""
    i = np.array([[0, 2, 2], [1, 1, 0]])
    check_op(lambda t: t.gather(1, idx(i)), lambda a: np.take_along_axis(a, i, 1), [(2, 4)])
    i0 = np.array([[1, 0, 1, 1]])
    check_op(lambda t: pylucid.gather(t, 0, idx(i0)), lambda a: np.take_along_axis(a, i0, 0), [(2, 4)])
    x = pylucid.zeros(2, 3)
    with pytest.raises(pylucid.IndexOutOfRange, match="gather: index 3 is out of range for dim 1 with size 3"):
        x.gather(1, idx([[3]]))
    with pytest.raises(pylucid.ShapeMismatch, match="as many dims"):
        x.gather(1, idx([0]))
    with pytest.raises(pylucid.ShapeMismatch, match=r"larger than the input of shape \[2, 3\] at dim 0"):
        x.gather(1, idx([[0], [0], [0]]))
    with pytest.raises(pylucid.DtypeMismatch, match="int64"):
        x.gather(1, pylucid.zeros(2, 1))


def test_scatter_add():
    """Guards against scatter_add overwriting duplicates, or its grads not routing to src."""
    i = np.array([[0, 2, 0], [1, 1, 1]])

    def ref(a, s):
        out = a.copy()
        for r in range(i.shape[0]):
            for c in range(i.shape[1]):
                out[r, i[r, c]] += s[r, c]
        return out

    check_op(lambda a, s: a.scatter_add(1, idx(i), s), ref, [(2, 4), (2, 3)])
    # src larger than index: the extra src elements get zero grad
    s = leaf(np.ones((3, 4)))
    pylucid.scatter_add(pylucid.zeros(2, 4, dtype=F64), 1, idx(i), s).sum().backward()
    expect = np.zeros((3, 4))
    expect[:2, :3] = 1.0
    np.testing.assert_array_equal(np.asarray(s.grad), expect)
    y = pylucid.zeros(3)
    y.scatter_add_(0, idx([0, 0, 2]), pylucid.ones(3))
    assert y.tolist() == [2.0, 0.0, 1.0]
    with pytest.raises(pylucid.DtypeMismatch, match="must match"):
        y.scatter_add_(0, idx([0]), pylucid.ones(1, dtype=F64))


def test_nonzero_and_where_single_arg():
    """Guards against nonzero coordinates in the wrong order."""
    a = np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    x = pylucid.from_numpy(a)
    np.testing.assert_array_equal(np.asarray(x.nonzero()), np.argwhere(a))
    for got, want in zip(pylucid.where(x != 0), np.nonzero(a)):
        np.testing.assert_array_equal(np.asarray(got), want)
    assert pylucid.nonzero(pylucid.zeros(0, 2)).shape == (0, 2)
    assert len(x.nonzero(as_tuple=True)) == 2


def test_iteration_over_dim0():
    """Guards against iteration copying rows (they are views) or looping past the end."""
    x = pylucid.arange(6.0).reshape(3, 2)
    rows = list(x)
    assert len(rows) == 3 and rows[2].tolist() == [4.0, 5.0]
    x.add_(1.0)
    assert rows[0].tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="0-d"):
        iter(pylucid.tensor(1.0))


def test_two_backward_calls_through_index_accumulate():
    """Guards against the index node freeing its offsets while retain_graph keeps it alive."""
    x = leaf(rand_array((3, 2)))
    y = x[[0, 2, 0]].sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [[4.0, 4.0], [0.0, 0.0], [2.0, 2.0]])
    with pytest.raises(pylucid.LucidError, match="second time"):
        y.backward()


def test_half_grads_accumulate_in_float():
    """Guards against repeated indices rounding in float16 at every step of the scatter-add."""
    x = pylucid.zeros(1, dtype=pylucid.float16, requires_grad=True)
    n = 3000
    g = pylucid.full((n,), 1.0, dtype=pylucid.float16)
    x[pylucid.zeros(n, dtype=pylucid.int64)].backward(g)
    assert x.grad.dtype == pylucid.float16
    assert float(x.grad.float().item()) == 3000.0  # float16 steps of 1 stop at 2048


def test_advanced_indexing_matches_torch():
    """Guards against placement or value differences from PyTorch's advanced indexing."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(1).standard_normal((4, 5, 6, 3))
    x, tx = pylucid.from_numpy(a.copy()), torch.from_numpy(a.copy())
    cases = [
        lambda t, I, B: t[I([3, 0, 3])],
        lambda t, I, B: t[:, I([[1, 4], [0, 0]]), 2:5],
        lambda t, I, B: t[I([0, 1]), :, I([5, 2])],
        lambda t, I, B: t[0, :, I([1, 2])],
        lambda t, I, B: t[..., I([2, 0]), 1],
        lambda t, I, B: t[I([[0], [3]]), I([1, 2, 4]), None],
        lambda t, I, B: t[None, I([1]), ..., I([0, 2])],
        lambda t, I, B: t[B(a[..., 0] > 0)],
        lambda t, I, B: t[1, B(a[1, :, :, 0] > 0), 1:],
        lambda t, I, B: t[I([-1, 1]), 2:, I([[0, 1]]), I([2])],
    ]

    def pl_i(v):
        return pylucid.tensor(v, dtype=pylucid.int64)

    def pl_b(m):
        return pylucid.from_numpy(m)

    for k, f in enumerate(cases):
        got = f(x, pl_i, pl_b)
        want = f(tx, torch.tensor, torch.from_numpy)
        assert got.shape == tuple(want.shape), k
        np.testing.assert_array_equal(np.asarray(got), want.numpy())
        # gradients: duplicates accumulate the same way
        xl = pylucid.from_numpy(a.copy()).requires_grad_()
        tl = torch.from_numpy(a.copy()).requires_grad_()
        w = np.random.default_rng(k).standard_normal(tuple(want.shape))
        (f(xl, pl_i, pl_b) * pylucid.from_numpy(w)).sum().backward()
        (f(tl, torch.tensor, torch.from_numpy) * torch.from_numpy(w)).sum().backward()
        np.testing.assert_allclose(np.asarray(xl.grad), tl.grad.numpy(), rtol=1e-12, atol=1e-12)
