"""Joining and selection: cat, stack, where, tril/triu, masked_fill (and masked_fill_)."""
import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array

F64 = pylucid.float64
RNG = np.random.default_rng(3)


def leaf(a):
    return pylucid.tensor(a, dtype=F64, requires_grad=True)


def pl_bool(m):
    return pylucid.from_numpy(np.asarray(m, dtype=bool))


# ---- cat / stack ---------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,dim", [
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 1), (2, 4)], 1),
    ([(2, 3, 2), (2, 3, 5)], -1),
    ([(2, 0), (2, 3)], 1),
    ([(3,)], 0),
])
def test_cat_forward_and_grad(shapes, dim):
    """Guards against cat's backward giving an input the wrong slice of the grad."""
    check_op(lambda *ts: pylucid.cat(ts, dim), lambda *a: np.concatenate(a, dim), shapes)


@pytest.mark.parametrize("shape,dim", [((2, 3), 0), ((2, 3), 1), ((2, 3), -1), ((4,), 0), ((), 0)])
def test_stack_forward_and_grad(shape, dim):
    """Guards against stack's backward selecting along the wrong dim."""
    check_op(lambda a, b, c: pylucid.stack([a, b, c], dim), lambda *a: np.stack(a, dim), [shape] * 3)


def test_cat_promotes_and_accepts_legacy_empty():
    """Guards against cat rejecting mixed dtypes or the 1-d empty tensors PyTorch skips."""
    a = pylucid.ones(2, 2, dtype=pylucid.int64)
    b = pylucid.full((1, 2), 0.5, dtype=pylucid.float32)
    c = pylucid.cat([a, b])
    assert c.dtype == pylucid.float32 and c.tolist() == [[1, 1], [1, 1], [0.5, 0.5]]
    assert pylucid.cat([a, pylucid.zeros(0, dtype=pylucid.int64)], 1).shape == (2, 2)
    assert pylucid.cat([pylucid.zeros(0), pylucid.zeros(0)]).shape == (0,)
    assert pylucid.concat([a, a], dim=1).shape == (2, 4)
    assert pylucid.concatenate([a, a], axis=0).shape == (4, 2)
    h = pylucid.cat([pylucid.ones(2, dtype=pylucid.float16), pylucid.ones(1, dtype=pylucid.bfloat16)])
    assert h.dtype == pylucid.float32
    # grads come back in each input's own dtype, and a skipped empty input gets an empty grad
    x = pylucid.ones(2, 2, requires_grad=True)
    y = pylucid.ones(1, 2, dtype=F64, requires_grad=True)
    e = pylucid.zeros(0, requires_grad=True)
    pylucid.cat([x, e, y]).sum().backward()
    assert x.grad.dtype == pylucid.float32 and y.grad.dtype == F64
    assert e.grad.shape == (0,)


def test_cat_and_stack_non_contiguous_and_storage():
    """Guards against cat/stack reading non-contiguous inputs as if contiguous, or aliasing
    the output to an input."""
    a = rand_array((3, 4))
    t = pylucid.from_numpy(a.copy()).T
    np.testing.assert_array_equal(np.asarray(pylucid.cat([t, t[:, ::2]], 1)), np.concatenate([a.T, a.T[:, ::2]], 1))
    s = pylucid.stack([t, t], 1)
    np.testing.assert_array_equal(np.asarray(s), np.stack([a.T, a.T], 1))
    assert s.data_ptr() != t.data_ptr()


def test_cat_stack_errors():
    """Guards against cat/stack of mismatched shapes producing garbage instead of a clear error."""
    with pytest.raises(pylucid.ShapeMismatch, match=r"cat: sizes of tensors must match except in dim 0, got shape \[2, 3\] and shape \[2, 4\] \(at position 1\)"):
        pylucid.cat([pylucid.zeros(2, 3), pylucid.zeros(2, 4)])
    with pytest.raises(pylucid.ShapeMismatch, match="same number of dims"):
        pylucid.cat([pylucid.zeros(2, 3), pylucid.zeros(2, 3, 1)])
    with pytest.raises(pylucid.ShapeMismatch, match="0-d tensor"):
        pylucid.cat([pylucid.tensor(1.0)])
    with pytest.raises(ValueError, match="non-empty"):  # PyTorch's ValueError
        pylucid.cat([])
    with pytest.raises(pylucid.IndexOutOfRange, match="cat: dim 2 out of range"):
        pylucid.cat([pylucid.zeros(2, 3)], 2)
    with pytest.raises(pylucid.DtypeMismatch, match="sequence of Tensors, got int at position 1"):
        pylucid.cat([pylucid.zeros(2), 3])
    with pytest.raises(pylucid.ShapeMismatch, match=r"stack: .*got \[2, 3\] at entry 0 and \[3, 2\] at entry 1"):
        pylucid.stack([pylucid.zeros(2, 3), pylucid.zeros(3, 2)])
    with pytest.raises(pylucid.IndexOutOfRange, match="stack: dim 3 out of range"):
        pylucid.stack([pylucid.zeros(2, 3)], 3)


# ---- where ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sc,sa,sb", [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (4,)), ((4,), (2, 3, 1), ()),
                                      ((0, 4), (4,), (1, 4))])
def test_where_forward_and_grad(sc, sa, sb):
    """Guards against where's grads not being routed by the condition or not summed back over
    broadcast dims."""
    cond = RNG.uniform(size=sc) > 0.4
    check_op(lambda a, b: pylucid.where(pl_bool(cond), a, b), lambda a, b: np.where(cond, a, b), [sa, sb])


def test_where_scalars_and_dtypes():
    """Guards against Python numbers in where widening the tensor's dtype (PyTorch keeps it)."""
    c = pl_bool([True, False, True])
    x = pylucid.tensor([1.0, 2.0, 3.0])
    assert pylucid.where(c, x, 0.0).dtype == pylucid.float32
    assert pylucid.where(c, x, 0.0).tolist() == [1.0, 0.0, 3.0]
    assert pylucid.where(c, -1, x).tolist() == [-1.0, 2.0, -1.0]
    assert pylucid.where(c, 1.0, 0.0).dtype == pylucid.float32
    assert pylucid.where(c, 1, 0).dtype == pylucid.int64
    assert x.where(c, pylucid.tensor(9.0, dtype=F64)).dtype == pylucid.float32  # 0-d does not promote
    assert pylucid.where(c, x, pylucid.zeros(3, dtype=F64)).dtype == F64
    g = leaf([1.0, 2.0, 3.0])
    pylucid.where(c, g, 5.0).sum().backward()
    assert g.grad.tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(pylucid.DtypeMismatch, match="where: condition must be a bool tensor, got float32"):
        pylucid.where(x, x, x)
    with pytest.raises(pylucid.ShapeMismatch, match="where: shapes"):
        pylucid.where(c, x, pylucid.zeros(2))


# ---- tril / triu ---------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, -1, 5, -5])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (2, 5, 3), (0, 3)])
def test_tril_triu(k, shape):
    """Guards against an off-by-one in the diagonal offset or a mask over the wrong dims."""
    check_op(lambda x: x.tril(k), lambda a: np.tril(a, k), [shape])
    check_op(lambda x: pylucid.triu(x, diagonal=k), lambda a: np.triu(a, k), [shape])


def test_tril_errors_and_dtypes():
    """Guards against tril on a 1-d tensor reading past it, and int/bool tensors failing."""
    with pytest.raises(pylucid.ShapeMismatch, match=r"tril: input must have at least 2 dims, got shape \[3\]"):
        pylucid.zeros(3).tril()
    assert pylucid.ones(2, 2, dtype=pylucid.int64).triu().tolist() == [[1, 1], [0, 1]]
    assert pylucid.ones(2, 2, dtype=pylucid.bool).tril().tolist() == [[True, False], [True, True]]
    assert pylucid.ops.schema("tril").produces_grad


# ---- masked_fill ---------------------------------------------------------------------------------

@pytest.mark.parametrize("sx,sm", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (2, 3, 4)), ((0, 4), (4,))])
def test_masked_fill_forward_and_grad(sx, sm):
    """Guards against masked_fill leaking grad into filled positions, or not broadcasting."""
    mask = RNG.uniform(size=sm) > 0.5
    check_op(lambda x: x.masked_fill(pl_bool(mask), -2.5), lambda a: np.where(mask, -2.5, a), [sx])


def test_masked_fill_value_tensor_gets_grad():
    """Guards against a 0-d value tensor that requires grad being treated as a constant."""
    mask = np.array([[True, False], [True, True]])
    check_op(lambda x, v: pylucid.masked_fill(x, pl_bool(mask), v), lambda a, v: np.where(mask, v, a), [(2, 2), ()])
    x = pylucid.ones(2, 2)
    with pytest.raises(pylucid.ShapeMismatch, match=r"value must be a number or a 0-d tensor, got a tensor of shape \[2\]"):
        x.masked_fill(pl_bool(mask), pylucid.ones(2))
    with pytest.raises(pylucid.DtypeMismatch, match="mask must be a bool tensor, got float32"):
        x.masked_fill(x, 0.0)
    assert pylucid.ones(2, dtype=pylucid.int64).masked_fill(pl_bool([True, False]), 7).tolist() == [7, 1]


def test_masked_fill_inplace():
    """Guards against masked_fill_ not writing in place, not bumping the version, or modifying
    a tensor autograd still needs."""
    x = pylucid.zeros(2, 3)
    v = x._version
    view = x[1]
    out = x.masked_fill_(pl_bool([True, False, True]), 4.0)
    assert out is x and x._version == v + 1
    assert view.tolist() == [4.0, 0.0, 4.0]
    x.T.masked_fill_(pl_bool([[True, False]]), 1.0)  # through a non-contiguous view
    assert x.tolist() == [[1.0, 1.0, 1.0], [4.0, 0.0, 4.0]]
    b = pylucid.tensor([True, False, True])
    b.masked_fill_(b, False)  # mask aliases the target
    assert b.tolist() == [False, False, False]
    w = pylucid.zeros(3, requires_grad=True)
    with pytest.raises(pylucid.LucidError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        w.masked_fill_(pl_bool([True, False, True]), 1.0)
    with pytest.raises(pylucid.ShapeMismatch, match=r"mask of shape \[2, 3\] cannot be broadcast to the tensor of shape \[3\]"):
        pylucid.zeros(3).masked_fill_(pylucid.ones(2, 3, dtype=pylucid.bool), 1.0)


def test_saved_mask_modified_in_place_is_detected():
    """Guards against a backward silently using a mask that was changed after the forward."""
    x = leaf([1.0, 2.0])
    m = pl_bool([True, False])
    y = x.masked_fill(m, 0.0)
    m.masked_fill_(pl_bool([True, True]), False)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.sum().backward()


def test_attention_style_mask_end_to_end():
    """Guards against the common causal-mask pattern (triu mask + masked_fill) failing."""
    scores = leaf(rand_array((2, 4, 4)))
    causal = pylucid.ones(4, 4, dtype=pylucid.bool).triu(1)
    out = scores.masked_fill(causal, -1e9)
    arr = np.asarray(out.detach())
    assert (arr[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == -1e9).all()
    out.sum().backward()
    np.testing.assert_array_equal(np.asarray(scores.grad)[0], np.tril(np.ones((4, 4))))
