"""In-place ops under autograd, as PyTorch records them: `h += x`, `h.mul_(w)`, `out[t] = h`,
`F.relu(h, inplace=True)`, `masked_fill_`, `copy_`, `x.exp_()`: the write moves the tensor's
history onto the op's node; leaves that require grad are refused; a saved value overwritten in
place makes backward raise."""
import numpy as np
import pytest

import pylucid
import pylucid.nn as nn
import pylucid.nn.functional as F
from helpers import rand_array


def _leaf(shape, seed=0, dtype=pylucid.float64):
    rng = np.random.default_rng(seed)
    return pylucid.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=True)


def mixed(a, b):
    h = a * 1.0
    h += b            # add_ on a non-leaf
    h.mul_(a)         # mul_ saves the old value: must use a copy
    h -= 0.5
    h.sin_()          # saves its input: must use a copy
    h[0] = b[0] * 2   # setitem with a value that requires grad
    h.div_(b.exp())
    h.masked_fill_(h > 3, 0.0)
    h = F.relu(h, inplace=True)
    return h


def test_gradcheck_through_inplace_ops():
    """Guards against any in-place op dropping or double counting a gradient path."""
    a, b = _leaf((3, 4), 1), _leaf((3, 4), 2)
    assert pylucid.autograd.gradcheck(mixed, (a, b))
    assert pylucid.autograd.gradgradcheck(mixed, (a, b))


def test_matches_torch():
    """Guards against drifting from PyTorch's values and gradients for the same in-place program."""
    torch = pytest.importorskip("torch")
    a0, b0 = rand_array((3, 4)), rand_array((3, 4))
    a, b = pylucid.tensor(a0, requires_grad=True), pylucid.tensor(b0, requires_grad=True)
    ta, tb = torch.tensor(a0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    out = mixed(a, b)
    h = ta * 1.0
    h += tb
    h.mul_(ta)
    h -= 0.5
    h.sin_()
    h[0] = tb[0] * 2
    h.div_(tb.exp())
    h.masked_fill_(h > 3, 0.0)
    h = torch.nn.functional.relu(h, inplace=True)
    np.testing.assert_allclose(np.asarray(out.detach()), h.detach().numpy(), rtol=1e-12)
    (out * out).sum().backward()
    (h * h).sum().backward()
    np.testing.assert_allclose(np.asarray(a.grad), ta.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(b.grad), tb.grad.numpy(), rtol=1e-10)


def test_setitem_collects_rnn_outputs():
    """Guards against `outputs[t] = h` (RNN tutorials) silently losing h's gradient."""
    w = _leaf((3, 3))
    h = pylucid.ones(2, 3, dtype=pylucid.float64)
    outputs = pylucid.zeros(4, 2, 3, dtype=pylucid.float64)
    for t in range(4):
        h = (h @ w).tanh()
        outputs[t] = h
    assert outputs.requires_grad and outputs.grad_fn is not None
    outputs.sum().backward()
    g_inplace = np.asarray(w.grad).copy()
    w.grad = None
    h = pylucid.ones(2, 3, dtype=pylucid.float64)
    hs = []
    for t in range(4):
        h = (h @ w).tanh()
        hs.append(h)
    pylucid.stack(hs).sum().backward()
    np.testing.assert_allclose(g_inplace, np.asarray(w.grad), rtol=1e-12)


def test_residual_block_with_inplace_relu():
    """Guards against `out += identity; relu(inplace=True)` (ResNet blocks) raising or differing
    from the out-of-place block."""
    pylucid.manual_seed(0)
    lin1, lin2 = nn.Linear(4, 4), nn.Linear(4, 4)
    relu = nn.ReLU(inplace=True)
    x = pylucid.randn(5, 4)

    def block(x, inplace):
        out = relu(lin1(x)) if inplace else F.relu(lin1(x))
        out = lin2(out)
        if inplace:
            out += x
            return relu(out)
        return F.relu(out + x)

    grads = []
    for inplace in (True, False):
        for p in (lin1.weight, lin2.weight):
            p.grad = None
        y = block(x, inplace)
        y.pow(2).sum().backward()
        grads.append([np.asarray(p.grad).copy() for p in (lin1.weight, lin2.weight)])
    for g1, g2 in zip(*grads):
        np.testing.assert_allclose(g1, g2, rtol=1e-6, atol=1e-7)


def test_leaf_refused_and_overwritten_saved_value_raises():
    """Guards against a leaf's value changing under autograd, and a backward computed from a
    value overwritten after it was saved (PyTorch raises there too)."""
    a = _leaf((3,))
    for op in (lambda: a.add_(1), lambda: a.mul_(2), lambda: a.__setitem__(0, 1.0), lambda: a.exp_(),
               lambda: a.fill_(0), lambda: F.relu(a, inplace=True)):
        with pytest.raises(pylucid.LucidError, match="leaf"):
            op()
    assert a.grad_fn is None and a.is_leaf
    y = a.exp()
    y += 1  # ExpBackward saved y itself
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.sum().backward()
    with pylucid.no_grad():
        a.add_(1)  # the optimizer's path: allowed, not recorded
    assert a.is_leaf


def test_copy_into_buffer_and_fill():
    """Guards against copy_ from a tensor that requires grad losing the gradient."""
    src = _leaf((2, 3))
    dst = pylucid.zeros(2, 3, dtype=pylucid.float32)
    dst.copy_(src)
    assert dst.dtype == pylucid.float32 and dst.requires_grad
    (dst * 3).sum().backward()
    assert src.grad.dtype == pylucid.float64 and src.grad.tolist() == [[3.0] * 3] * 2
    h = src * 2
    h.zero_()
    assert h.tolist() == [[0.0] * 3] * 2


def test_no_grad_fast_path_unchanged():
    """Guards against the recorded path running when nothing requires grad."""
    x = pylucid.ones(3)
    y = x
    x += 1
    assert x is y and x.grad_fn is None and not x.requires_grad and x.tolist() == [2.0] * 3
    x[0] = 5.0
    x.exp_()
    assert x.grad_fn is None


# In-place ops through views: the base's history is rewritten (CopySlices) and views taken before
# the write read from the new history, as in PyTorch. Each program is written once and run with
# either library as `lib`.
def _view_program(lib, case, w, u):
    x = w * 1.0
    if case == "column":
        v = x[:, 1]
        v.mul_(2)
        return (x * x).sum() + v.sum()
    if case == "block_add_other":
        x[1:, :2].add_(u[1:])
        return x.exp().sum()
    if case == "transpose_setitem":
        v = x.t()
        v[0] = v[0] * 3
        return (x ** 2).sum()
    if case == "flat_stride":
        x.view(12)[::3].sigmoid_()
        return (x * x).sum()
    if case == "base_without_grad":
        b = lib.zeros(3, 4, dtype=w.dtype)
        b[:, :2].add_(u)
        return (b * b).sum() + (x * b).sum()
    if case == "older_overlapping_view":
        v = x[0]
        v[1:3].mul_(u[0])
        return (x ** 3).sum() + v.sum()
    if case == "augmented_setitem":
        x[:, 0] += 1
        x[1] *= u[1, 0]
        return x.tanh().sum()
    if case == "unsqueezed_relu_":
        x.unsqueeze(0).relu_()
        return (x * 2).sum()
    raise AssertionError(case)


VIEW_CASES = ["column", "block_add_other", "transpose_setitem", "flat_stride", "base_without_grad",
              "older_overlapping_view", "augmented_setitem", "unsqueezed_relu_"]


@pytest.mark.parametrize("case", VIEW_CASES)
def test_inplace_through_view_gradcheck(case):
    """Guards against an in-place op on a view leaving the base's gradient on its old history
    (silently wrong before CopySlices)."""
    w, u = _leaf((3, 4), 3), _leaf((3, 2), 4)
    assert pylucid.autograd.gradcheck(lambda w, u: _view_program(pylucid, case, w, u), (w, u))
    assert pylucid.autograd.gradgradcheck(lambda w, u: _view_program(pylucid, case, w, u), (w, u))


@pytest.mark.parametrize("case", VIEW_CASES)
def test_inplace_through_view_matches_torch(case):
    """Guards against drifting from PyTorch's gradients when writing through views."""
    torch = pytest.importorskip("torch")
    w0, u0 = rand_array((3, 4)), rand_array((3, 2))
    grads = []
    for lib in (pylucid, torch):
        w = lib.tensor(w0, dtype=lib.float64, requires_grad=True)
        u = lib.tensor(u0, dtype=lib.float64, requires_grad=True)
        _view_program(lib, case, w, u).backward()
        grads.append([w.grad.numpy(), None if u.grad is None else u.grad.numpy()])
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12, atol=1e-12)
    if grads[1][1] is None:
        assert grads[0][1] is None
    else:
        np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12, atol=1e-12)


def test_view_of_grad_leaf_refused():
    """Guards against writing into a leaf's memory through a view while autograd tracks it
    (PyTorch raises a RuntimeError)."""
    z = pylucid.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf"):
        z[:2].mul_(2)
    with pylucid.no_grad():
        z[:2].mul_(2)  # allowed without grad, as in PyTorch


def test_scalar_product_saves_nothing():
    """Guards against `x * 3` keeping x: a later in-place write into x must leave that
    product's backward valid (PyTorch saves only the operand the other's gradient needs)."""
    w = _leaf((4,), 5)
    x = w * 1.0
    y = x * 3
    x.add_(1)
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full(4, 3.0))


def test_partial_overlap_of_input_and_target_raises_like_torch():
    """Guards against an in-place op or copy_ whose source shares some (not all) memory with its
    target: the vectorised loops would read values already written (PyTorch refuses it)."""
    msg = "some elements of the input tensor and the written-to tensor refer to a single memory location"
    x = pylucid.arange(10.0)
    with pytest.raises(RuntimeError, match=msg):
        x[1:].add_(x[:-1])
    with pytest.raises(RuntimeError, match=msg):
        x[1:].copy_(x[:-1])
    with pytest.raises(RuntimeError, match=msg):
        z = pylucid.ones(3, 4)
        z.add_(z[0:1])
    assert x.tolist() == list(map(float, range(10)))  # nothing was written
    # the same elements, or disjoint ones, are fine (as in PyTorch)
    assert x.add_(x).tolist() == [2.0 * i for i in range(10)]
    y = pylucid.arange(12.0).view(3, 4)
    y[0].copy_(y[1])
    y[1:].mul_(y[0])
    assert y.tolist() == [[4.0, 5.0, 6.0, 7.0], [16.0, 25.0, 36.0, 49.0], [32.0, 45.0, 60.0, 77.0]]
