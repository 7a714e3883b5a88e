"""Views and layout ops: reshape/view, permute/transpose, squeeze/unsqueeze, expand, flatten,
narrow/select/split/chunk, contiguous/clone/to: forward vs numpy, gradients, storage sharing,
zero-size dims and error messages."""
import numpy as np
import pytest

import pylucid
from helpers import check_op, rand_array

F64 = pylucid.float64


def leaf(a):
    return pylucid.tensor(a, dtype=F64, requires_grad=True)


# ---- forward + gradcheck + non-contiguous + accumulation (check_op) -------------------------

@pytest.mark.parametrize("fn,ref,shape", [
    (lambda x: x.reshape(4, 3), lambda a: a.reshape(4, 3), (3, 4)),
    (lambda x: x.reshape((-1,)), lambda a: a.reshape(-1), (3, 4)),
    (lambda x: pylucid.reshape(x, (2, -1, 3)), lambda a: a.reshape(2, -1, 3), (3, 4)),
    (lambda x: x.reshape(()), lambda a: a.reshape(()), (1, 1)),
    (lambda x: x.flatten(), lambda a: a.reshape(-1), (2, 3, 2)),
    (lambda x: x.flatten(1), lambda a: a.reshape(2, -1), (2, 3, 2)),
    (lambda x: pylucid.flatten(x, 0, 1), lambda a: a.reshape(6, 2), (2, 3, 2)),
    (lambda x: x.unflatten(1, (2, -1)), lambda a: a.reshape(3, 2, 2), (3, 4)),
    (lambda x: x.squeeze(), lambda a: a.squeeze(), (1, 3, 1, 2)),
    (lambda x: x.squeeze(0), lambda a: a.squeeze(0), (1, 3, 1, 2)),
    (lambda x: x.squeeze((0, 2)), lambda a: a.squeeze((0, 2)), (1, 3, 1, 2)),
    (lambda x: x.squeeze(1), lambda a: a, (1, 3, 1, 2)),  # not size 1: unchanged, as PyTorch
    (lambda x: x.unsqueeze(0), lambda a: a[None], (3, 4)),
    (lambda x: x.unsqueeze(-1), lambda a: a[..., None], (3, 4)),
    (lambda x: pylucid.unsqueeze(x, 1), lambda a: a[:, None], (3, 4)),
    (lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1), (2, 3, 4)),
    (lambda x: x.permute((1, 2, 0)), lambda a: a.transpose(1, 2, 0), (2, 3, 4)),
    (lambda x: pylucid.permute(x, (0, 2, 1)), lambda a: a.transpose(0, 2, 1), (2, 3, 4)),
    (lambda x: x.transpose(0, -1), lambda a: np.swapaxes(a, 0, -1), (2, 3, 4)),
    (lambda x: x.swapaxes(0, 1), lambda a: np.swapaxes(a, 0, 1), (2, 3, 4)),
    (lambda x: x.T, lambda a: a.T, (2, 3, 4)),
    (lambda x: x.mT, lambda a: np.swapaxes(a, -1, -2), (2, 3, 4)),
    (lambda x: x.t(), lambda a: a.T, (3, 4)),
    (lambda x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1), (2, 3, 4)),
    (lambda x: pylucid.movedim(x, (0, 1), (2, 0)), lambda a: np.moveaxis(a, (0, 1), (2, 0)), (2, 3, 4)),
    (lambda x: x.expand(2, 3, 4), lambda a: np.broadcast_to(a, (2, 3, 4)), (3, 1)),
    (lambda x: x.expand(-1, 5), lambda a: np.broadcast_to(a, (3, 5)), (3, 1)),
    (lambda x: pylucid.broadcast_to(x, (4, 3, 2)), lambda a: np.broadcast_to(a, (4, 3, 2)), (3, 2)),
    (lambda x: x.narrow(1, 1, 2), lambda a: a[:, 1:3], (3, 4)),
    (lambda x: x.narrow(0, -2, 2), lambda a: a[-2:], (3, 4)),
    (lambda x: x.select(1, -1), lambda a: a[:, -1], (3, 4)),
    (lambda x: pylucid.select(x, 0, 2), lambda a: a[2], (3, 4)),
    (lambda x: x.contiguous(), lambda a: a, (3, 4)),
    (lambda x: x.clone(), lambda a: a, (3, 4)),
    (lambda x: pylucid.clone(x), lambda a: a, (3, 4)),
])
def test_view_ops_forward_and_grad(fn, ref, shape):
    """Guards against a view's backward mapping the gradient to the wrong input elements."""
    check_op(fn, ref, [shape])


@pytest.mark.parametrize("pieces,ref", [
    (lambda x: x.split(2, dim=1), lambda a: [a[:, 0:2], a[:, 2:4], a[:, 4:5]]),
    (lambda x: pylucid.split(x, [1, 4], 1), lambda a: [a[:, :1], a[:, 1:]]),
    (lambda x: x.chunk(2, 1), lambda a: [a[:, :3], a[:, 3:]]),
    (lambda x: pylucid.chunk(x, 3, 0), lambda a: [a[0:1], a[1:2], a[2:3]]),
    (lambda x: x.unbind(1), lambda a: [a[:, i] for i in range(5)]),
])
def test_split_family_returns_views_with_grads(pieces, ref):
    """Guards against split/chunk/unbind pieces that do not cover the input, or whose grads
    land in the wrong slice."""
    a = rand_array((3, 5))
    outs = pieces(pylucid.from_numpy(a.copy()))
    assert isinstance(outs, tuple)
    exp = ref(a)
    assert len(outs) == len(exp)
    for o, e in zip(outs, exp):
        np.testing.assert_array_equal(np.asarray(o), e)
    # a weighted sum of all pieces: each piece's grad must land in its own slice
    def fn(x):
        total = None
        for i, p in enumerate(pieces(x)):
            s = (p * (i + 1.0)).sum()
            total = s if total is None else total + s
        return total
    check_op(fn, lambda a: np.array(sum((i + 1.0) * e.sum() for i, e in enumerate(ref(a)))), [(3, 5)])


def test_chunk_count_follows_pytorch():
    """Guards against chunk returning `chunks` pieces when ceil division gives fewer."""
    assert [p.shape for p in pylucid.zeros(6).chunk(4)] == [(2,), (2,), (2,)]
    assert [p.shape for p in pylucid.zeros(5).chunk(3)] == [(2,), (2,), (1,)]
    assert [p.shape for p in pylucid.zeros(0).chunk(3)] == [(0,), (0,), (0,)]


# ---- storage sharing -----------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda x: x.view(12),
    lambda x: x.reshape(2, 6),
    lambda x: x.T,
    lambda x: x.permute(1, 0),
    lambda x: x.unsqueeze(1),
    lambda x: x[None].squeeze(0),
    lambda x: x.narrow(1, 1, 2),
    lambda x: x.select(0, 1),
    lambda x: x.split(2, 1)[1],
    lambda x: x.expand(2, 3, 4),
    lambda x: x.flatten(),
    lambda x: x.unflatten(1, (2, 2)),
])
def test_views_share_storage_and_version(make):
    """Guards against a view that silently copies: writes through the base must be visible in
    the view, and the version counter must be shared so saved-tensor checks see the write."""
    x = pylucid.arange(12.0).reshape(3, 4)
    v = make(x)
    before = np.asarray(v).copy()
    version = v._version
    x.add_(100.0)
    np.testing.assert_array_equal(np.asarray(v), before + 100.0)
    assert v._version == version + 1 == x._version


def test_write_through_view_is_visible_in_base():
    """Guards against setitem on a view writing into a private copy."""
    x = pylucid.zeros(3, 4)
    x.T[1] = 5.0
    np.testing.assert_array_equal(np.asarray(x)[:, 1], [5.0, 5.0, 5.0])
    x.narrow(0, 2, 1).mul_(0.0)
    assert np.asarray(x)[2].tolist() == [0.0] * 4


def test_reshape_copies_only_when_strides_require_it():
    """Guards against reshape copying contiguous input, and against view silently copying
    (or succeeding) on strides that do not allow it."""
    x = pylucid.arange(12.0).reshape(3, 4)
    assert x.reshape(4, 3).data_ptr() == x.data_ptr()
    t = x.T
    r = t.reshape(12)
    assert r.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(np.asarray(r), np.arange(12.0).reshape(3, 4).T.reshape(12))
    with pytest.raises(pylucid.LucidError, match=r"view: .*shape \[4, 3\].*as shape \[12\].*use \.reshape"):
        t.view(12)
    # merging dims that are contiguous among themselves is a view even in a transposed tensor
    y = pylucid.zeros(2, 3, 4).permute(2, 0, 1)  # shape (4, 2, 3), dims 1, 2 contiguous together
    assert y.view(4, 6).data_ptr() == y.data_ptr()
    assert y[:, :, ::2].view(4, 2, 2).shape == (4, 2, 2)  # splitting a strided dim views too


def test_contiguous_returns_self_and_copies_otherwise():
    """Guards against contiguous() allocating for an already contiguous tensor (and recording
    a node), or returning a non-contiguous result."""
    x = leaf(rand_array((3, 4)))
    assert x.contiguous() is x
    c = x.T.contiguous()
    assert c.is_contiguous() and c.data_ptr() != x.data_ptr()
    assert c.grad_fn.name() == "ContiguousBackward"
    k = x.clone()
    assert k.data_ptr() != x.data_ptr() and k.grad_fn.name() == "CloneBackward"


def test_to_casts_and_casts_grad_back():
    """Guards against to(dtype)'s gradient arriving in the target dtype instead of the input's."""
    x = pylucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert x.to(pylucid.float32) is x
    y = x.to(pylucid.float64)
    assert y.dtype == F64 and y.grad_fn.schema.name == "to"
    (y * y).sum().backward()
    assert x.grad.dtype == pylucid.float32
    np.testing.assert_allclose(np.asarray(x.grad), [2.0, 4.0, 6.0])
    i = x.to(pylucid.int64)
    assert i.dtype == pylucid.int64 and not i.requires_grad
    assert x.detach().to(dtype=F64, copy=True).dtype == F64
    assert x.to("cpu") is x
    assert x.type(F64).dtype == F64 and x.type() == "pylucid.FloatTensor"
    assert pylucid.autograd.gradcheck(lambda t: t.to(F64, copy=True) * t, (leaf([0.5, -1.0]),))
    with pytest.raises(pylucid.LucidError, match="cpu"):
        x.to("cuda")


# ---- zero-size and size-1 dims ----------------------------------------------------------------

def test_zero_size_dims():
    """Guards against views of empty tensors failing or mis-inferring -1."""
    x = pylucid.zeros(0, 3)
    assert x.reshape(3, 0).shape == (3, 0)
    assert x.reshape(-1).shape == (0,)
    assert x.reshape(-1, 3, 1).shape == (0, 3, 1)
    assert x.view(3, 0, 5, 0).shape == (3, 0, 5, 0)
    assert x.T.shape == (3, 0)
    assert x.unsqueeze(1).shape == (0, 1, 3)
    assert x.expand(2, 0, 3).shape == (2, 0, 3)
    assert x.narrow(1, 1, 0).shape == (0, 0)
    assert [p.shape for p in x.split(2, 1)] == [(0, 2), (0, 1)]
    assert x.split(1, 0)[0].shape == (0, 3)
    assert x.flatten().shape == (0,)
    with pytest.raises(pylucid.ShapeMismatch, match="ambiguous"):
        x.reshape(-1, 0)
    with pytest.raises(pylucid.ShapeMismatch, match="ambiguous"):
        x.reshape(0, -1, 3)
    g = leaf(np.zeros((0, 3)))
    g.reshape(3, 0).sum().backward()
    assert g.grad.shape == (0, 3)


def test_zero_d_tensors():
    """Guards against 0-d tensors breaking view/reshape/unsqueeze/flatten."""
    s = pylucid.tensor(3.0)
    assert s.reshape(1, 1).shape == (1, 1)
    assert s.view(-1).shape == (1,)
    assert s.unsqueeze(0).shape == (1,)
    assert s.flatten().shape == (1,)
    assert s.squeeze().shape == () and s.squeeze(0).shape == ()
    assert s.T.shape == () and s.t().shape == ()
    assert s.expand(2, 3).shape == (2, 3)


# ---- errors ------------------------------------------------------------------------------

def test_shape_errors_are_clear():
    """Guards against shape errors that crash, or that do not say what was wrong."""
    x = pylucid.zeros(3, 4)
    with pytest.raises(pylucid.ShapeMismatch, match=r"reshape: shape \[5, 3\] is invalid for input of size 12"):
        x.reshape(5, 3)
    with pytest.raises(pylucid.ShapeMismatch, match="only one dimension can be inferred"):
        x.reshape(-1, -1)
    with pytest.raises(pylucid.ShapeMismatch, match="invalid size -2"):
        x.view(-2, -6)
    with pytest.raises(pylucid.ShapeMismatch, match=r"expand: .*size 2 must match the existing size 3 at non-singleton dim 0"):
        x.expand(2, 4)
    with pytest.raises(pylucid.ShapeMismatch, match="fewer dims"):
        x.expand(4)
    with pytest.raises(pylucid.ShapeMismatch, match=r"permute: got 1 dims"):
        x.permute(0)
    with pytest.raises(pylucid.IndexOutOfRange, match="appears more than once"):
        x.permute(1, 1)
    with pytest.raises(pylucid.ShapeMismatch, match=r"unflatten: shape \[5, -1\] is invalid for input of size 4"):
        x.unflatten(1, (5, -1))
    with pytest.raises(pylucid.ShapeMismatch, match=r"split: split sizes \[1, 2\] add up to 3, but dim 1 has size 4"):
        x.split([1, 2], 1)
    with pytest.raises(pylucid.ShapeMismatch, match="t: expects a tensor with <= 2 dims"):
        pylucid.zeros(2, 3, 4).t()
    with pytest.raises(pylucid.ShapeMismatch, match="mT"):
        _ = pylucid.zeros(3).mT
    with pytest.raises(pylucid.LucidError, match="chunks must be positive"):
        x.chunk(0)
    with pytest.raises(pylucid.DtypeMismatch, match="reshape: shape entries must be ints"):
        x.reshape((2.0, 6))


@pytest.mark.parametrize("call", [
    lambda x: x.transpose(0, 2),
    lambda x: x.unsqueeze(3),
    lambda x: x.squeeze(-3),
    lambda x: x.flatten(0, 5),
    lambda x: x.select(2, 0),
    lambda x: x.narrow(-3, 0, 1),
    lambda x: x.split(1, 4),
    lambda x: x.movedim(0, 2),
])
def test_dim_out_of_range_is_index_error(call):
    """Guards against out-of-range dims being wrapped silently or crashing."""
    with pytest.raises(pylucid.IndexOutOfRange, match="out of range"):
        call(pylucid.zeros(3, 4))
    with pytest.raises(IndexError):
        call(pylucid.zeros(3, 4))


def test_index_errors_name_op_index_and_size():
    """Guards against select/narrow reading outside the dim instead of raising."""
    x = pylucid.zeros(3, 4)
    with pytest.raises(pylucid.IndexOutOfRange, match=r"select: index 4 is out of range for dim 1 with size 4"):
        x.select(1, 4)
    with pytest.raises(pylucid.IndexOutOfRange, match=r"narrow: start \(2\) \+ length \(3\) exceeds dim 0 of size 3"):
        x.narrow(0, 2, 3)
    with pytest.raises(pylucid.IndexOutOfRange, match="narrow: start 5 out of range"):
        x.narrow(1, 5, 0)


def test_methods_accept_varargs_and_tuples():
    """Guards against methods accepting only one of t.reshape(2, 3) / t.reshape((2, 3))."""
    x = pylucid.arange(6)
    assert x.reshape(2, 3).shape == x.reshape((2, 3)).shape == x.reshape([2, 3]).shape == (2, 3)
    assert x.view(3, 2).shape == x.view((3, 2)).shape == (3, 2)
    y = x.reshape(1, 2, 3)
    assert y.permute(2, 1, 0).shape == y.permute((2, 1, 0)).shape == (3, 2, 1)
    assert y.expand(4, 1, 2, 3).shape == y.expand((4, -1, -1, -1)).shape == (4, 1, 2, 3)
    assert y.expand_as(pylucid.zeros(5, 2, 3)).shape == (5, 2, 3)
    assert x.view_as(y).shape == x.reshape_as(y).shape == (1, 2, 3)


def test_grad_fn_names_and_schemas():
    """Guards against a view op recording the wrong node, or a schema not being registered."""
    x = leaf(rand_array((2, 3)))
    assert x.reshape(3, 2).grad_fn.name() == "ReshapeBackward"
    assert x.view(6).grad_fn.name() == "ViewBackward"
    assert x.T.grad_fn.name() == "PermuteBackward"
    assert x.transpose(0, 1).grad_fn.name() == "TransposeBackward"
    assert x.expand(4, 2, 3).grad_fn.name() == "ExpandBackward"
    assert x[0].grad_fn.name() == "SelectBackward" and x[1:].grad_fn.name() == "SliceBackward"
    for name in ["view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose",
                 "movedim", "expand", "narrow", "select", "split", "chunk", "unbind", "getitem",
                 "contiguous", "clone", "to"]:
        s = pylucid.ops.schema(name)
        assert s.produces_grad and s.amp_policy == pylucid.ops.AmpPolicy.KeepInput
    with pylucid.no_grad():
        assert x.reshape(3, 2).grad_fn is None


def test_expand_grad_sums_over_broadcast_dims():
    """Guards against expand's backward copying one slice instead of summing all of them."""
    x = leaf([[1.0], [2.0]])
    x.expand(3, 2, 4).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [[12.0], [12.0]])


def test_half_dtypes_keep_dtype_through_views():
    """Guards against views or their grads changing a half tensor's dtype."""
    for dt in (pylucid.float16, pylucid.bfloat16):
        x = pylucid.ones(2, 3, dtype=dt, requires_grad=True)
        y = x.T.reshape(6)[1:]
        assert y.dtype == dt
        y.sum().backward()
        assert x.grad.dtype == dt
        assert np.asarray(x.grad.float()).sum() == 5.0
