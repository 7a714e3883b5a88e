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
    with pytest.raises(pylucid.LucidError, match="modified by an in-place operation"):
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
