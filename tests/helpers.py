"""The one test helper: ``check_op`` runs an op through the checks every op owes.

    check_op(pylucid_fn, numpy_fn, shapes)

1. forward: pylucid_fn(*tensors) equals numpy_fn(*arrays) (float64, tight tolerance);
2. float64 gradcheck against central finite differences;
3. the same on non-contiguous inputs (each input built transposed and transposed back);
4. two backward calls accumulate into .grad (the second .grad is twice the first);
5. float64 gradgradcheck: the op's backward is itself differentiable (create_graph=True), so
   no op can join the table without double backward; and the gradients recorded under
   create_graph=True equal the first-order (fused) ones (``check_double_backward``).
"""
import numpy as np

import pylucid

RNG = np.random.default_rng(0)


def rand_array(shape, low=-1.0, high=1.0, positive=False):
    a = np.asarray(RNG.uniform(low, high, size=shape), dtype=np.float64)
    if positive:
        a = np.asarray(np.abs(a) + 0.5)
    return a


def non_contiguous(arr):
    """A float64 tensor equal to ``arr`` whose memory layout is not contiguous (ndim >= 2),
    or is a strided slice (ndim 1)."""
    if arr.ndim >= 2:
        base = np.ascontiguousarray(np.swapaxes(arr, -1, -2))
        t = pylucid.from_numpy(base)
        return t.transpose(-1, -2)
    if arr.ndim == 1:
        base = np.zeros(arr.shape[0] * 2)
        base[::2] = arr
        return pylucid.from_numpy(base)[::2]
    return pylucid.from_numpy(arr.copy())


def as_leaf(t):
    t.requires_grad_(True)
    return t


def check_double_backward(fn, leaves, atol=1e-10, rtol=1e-8):
    """gradgradcheck of ``fn`` at ``leaves`` (float64, requiring grad), and the gradients that
    create_graph=True records (a node's apply_graph) equal to the first-order ones (its fused
    apply), for one random output gradient per floating output."""
    assert pylucid.autograd.gradgradcheck(fn, leaves)
    outs = fn(*leaves)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    outs = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    gos = [pylucid.from_numpy(RNG.standard_normal(tuple(o.shape))) for o in outs]
    diff = [t for t in leaves if isinstance(t, pylucid.Tensor) and t.requires_grad]
    plain = pylucid.autograd.grad(outs, diff, gos, retain_graph=True, allow_unused=True)
    recorded = pylucid.autograd.grad(outs, diff, gos, create_graph=True, allow_unused=True)
    for a, b in zip(plain, recorded):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.asarray(b.detach()), np.asarray(a), atol=atol, rtol=rtol)


def check_op(fn, ref, shapes, positive=False, atol=1e-10, rtol=1e-8, check_noncontig=True,
             grad=True, double_backward=True):
    arrays = [rand_array(s, positive=positive) for s in shapes]
    # forward
    ts = [pylucid.from_numpy(a.copy()) for a in arrays]
    out = fn(*ts)
    expected = ref(*arrays)
    np.testing.assert_allclose(np.asarray(out), expected, atol=atol, rtol=rtol)
    if not grad:
        return
    # gradcheck, contiguous and not
    layouts = [False, True] if check_noncontig else [False]
    for nc in layouts:
        if nc and not any(a.ndim >= 1 for a in arrays):
            continue
        leaves = [as_leaf(non_contiguous(a) if nc else pylucid.from_numpy(a.copy())) for a in arrays]
        assert pylucid.autograd.gradcheck(fn, leaves)
        if not nc and double_backward:
            check_double_backward(fn, leaves)
    # accumulation over two backward calls
    leaves = [as_leaf(pylucid.from_numpy(a.copy())) for a in arrays]
    fn(*leaves).sum().backward()
    first = [np.asarray(t.grad).copy() for t in leaves]
    fn(*leaves).sum().backward()
    for t, g in zip(leaves, first):
        np.testing.assert_allclose(np.asarray(t.grad), 2 * g, rtol=1e-12, atol=1e-12)
