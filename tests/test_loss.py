"""Losses: cross_entropy (class indices and probabilities, weights, ignore_index, label smoothing),
nll_loss, mse_loss, l1_loss, binary_cross_entropy_with_logits. Forward vs numpy references,
float64 gradcheck, layouts, empty and size-1 batches, autocast dtypes, errors, PyTorch."""

import numpy as np
import pylucid
import pylucid.nn.functional as F
import pytest
from helpers import non_contiguous, rand_array

F64 = pylucid.float64


def _torch():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(
        1
    )  # tiny calls: torch's thread pool only adds wake-up latency on a busy machine
    return torch


RNG = np.random.default_rng(7)


def T(a):
    return pylucid.from_numpy(np.array(a, copy=True))


def leaf(a):
    return T(a).requires_grad_()


def gradcheck(fn, *inputs):
    assert pylucid.autograd.gradcheck(fn, inputs)


# ---- numpy references ------------------------------------------------------------------


def log_softmax_ref(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _reduce(loss, denom, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.float64(loss.sum()) / denom


def class_loss_ref(x, t, w=None, ignore_index=-100, reduction="mean", eps=0.0, log_probs=False):
    """cross_entropy (or nll_loss with log_probs=True) with class-index targets, PyTorch's rules."""
    unbatched = x.ndim == 1
    if unbatched:
        x, t = x[None], np.asarray(t)[None]
    C = x.shape[1]
    logp = np.moveaxis(x if log_probs else log_softmax_ref(x, 1), 1, -1)
    w_ = np.ones(C) if w is None else w
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    wt = w_[tc] * valid
    nll = -np.take_along_axis(logp, tc[..., None], -1)[..., 0] * wt
    loss = nll if log_probs else (1 - eps) * nll + eps / C * (-(logp * w_).sum(-1) * valid)
    return _reduce(loss[0] if unbatched else loss, wt.sum(), reduction)


def prob_ce_ref(x, q, w=None, reduction="mean", eps=0.0):
    cdim = 0 if x.ndim == 1 else 1
    C = x.shape[cdim]
    shape = [1] * x.ndim
    shape[cdim] = C
    w_ = (np.ones(C) if w is None else w).reshape(shape)
    loss = -(log_softmax_ref(x, cdim) * ((1 - eps) * q + eps / C) * w_).sum(cdim)
    return _reduce(loss, loss.size, reduction)


def bce_ref(x, t, w=None, reduction="mean", pw=None):
    ls, l1s = -np.logaddexp(0, -x), -np.logaddexp(0, x)  # log sigmoid(x), log(1 - sigmoid(x))
    loss = -((1.0 if pw is None else pw) * t * ls + (1 - t) * l1s)
    if w is not None:
        loss = loss * w
    return _reduce(loss, loss.size, reduction)


def targets(shape, C, ignore=None):
    t = RNG.integers(0, C, size=shape)
    if ignore is not None and t.size:
        t.flat[0] = ignore
    return t


# ---- cross_entropy / nll_loss: forward and gradients -----------------------------------

CLASS_CASES = [  # input shape, weight?, ignore_index?, reduction, label_smoothing
    ((4, 3), False, None, "mean", 0.0),
    ((4, 3), True, None, "mean", 0.0),
    ((4, 3), True, 1, "mean", 0.2),
    ((4, 3), False, -100, "sum", 0.1),
    ((2, 3, 2), True, -100, "none", 0.0),
    ((2, 3, 2, 2), False, 2, "mean", 0.3),
    ((5,), True, None, "none", 0.25),
    ((5,), False, None, "mean", 0.0),
]


@pytest.mark.parametrize("shape,use_w,ignore,reduction,eps", CLASS_CASES)
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_class_losses_forward_and_gradcheck(loss, shape, use_w, ignore, reduction, eps):
    """Guards against wrong weighting, ignore_index counting, smoothing terms or class-dim layout,
    in the value or in the closed-form gradient."""
    C = shape[0] if len(shape) == 1 else shape[1]
    x = rand_array(shape) * 2
    t = targets(shape[:0] if len(shape) == 1 else (shape[0],) + shape[2:], C, ignore)
    w = RNG.uniform(0.5, 2.0, size=C) if use_w else None
    kw = {"weight": None if w is None else T(w), "reduction": reduction}
    if ignore is not None:
        kw["ignore_index"] = ignore
    if loss == "cross_entropy":
        kw["label_smoothing"] = eps

        def fn(a):
            return F.cross_entropy(a, T(t), **kw)

        ref = class_loss_ref(x, t, w, -100 if ignore is None else ignore, reduction, eps)
    else:

        def fn(a):
            return F.nll_loss(a, T(t), **kw)

        ref = class_loss_ref(x, t, w, -100 if ignore is None else ignore, reduction, log_probs=True)
    np.testing.assert_allclose(np.asarray(fn(T(x))), ref, rtol=1e-12, atol=1e-12)
    gradcheck(fn, leaf(x))


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss])
def test_non_contiguous_logits_and_accumulation(loss):
    """Guards against reading transposed logits as if contiguous, and .grad not accumulating."""
    x = rand_array((5, 4))
    t = targets((5,), 4)
    nc = non_contiguous(x).requires_grad_()
    assert not nc.is_contiguous()
    np.testing.assert_allclose(
        np.asarray(loss(nc, T(t)).detach()), np.asarray(loss(T(x), T(t))), rtol=1e-14
    )
    gradcheck(lambda a: loss(a, T(t)), nc)
    xl = leaf(x)
    loss(xl, T(t)).backward()
    first = np.asarray(xl.grad).copy()
    loss(xl, T(t)).backward()
    np.testing.assert_allclose(np.asarray(xl.grad), 2 * first, rtol=1e-14)


def test_non_contiguous_targets_and_grad_out():
    """Guards against strided targets or a broadcast (stride-0) incoming gradient being misread."""
    x = rand_array((4, 3, 2))
    tt = T(targets((2, 4), 3)).transpose(0, 1)  # (4, 2), not contiguous
    assert not tt.is_contiguous()
    t = np.asarray(tt)
    y = F.cross_entropy(leaf(x), tt, reduction="none")
    np.testing.assert_allclose(
        np.asarray(y.detach()), class_loss_ref(x, t, reduction="none"), rtol=1e-12
    )
    gradcheck(lambda a: F.cross_entropy(a, tt, reduction="none").sum(), leaf(x))


@pytest.mark.parametrize(
    "shape,use_w,reduction,eps",
    [
        ((3, 4), False, "mean", 0.0),
        ((3, 4), True, "sum", 0.2),
        ((2, 3, 2), True, "none", 0.1),
        ((4,), False, "mean", 0.3),
    ],
)
def test_probability_targets(shape, use_w, reduction, eps):
    """Guards against the soft-label path ignoring weights or smoothing, or giving the target no gradient."""
    C = shape[0] if len(shape) == 1 else shape[1]
    x = rand_array(shape)
    q = RNG.uniform(0, 1, size=shape)
    q /= q.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
    w = RNG.uniform(0.5, 2.0, size=C) if use_w else None
    kw = {"weight": None if w is None else T(w), "reduction": reduction, "label_smoothing": eps}
    np.testing.assert_allclose(
        np.asarray(F.cross_entropy(T(x), T(q), **kw)),
        prob_ce_ref(x, q, w, reduction, eps),
        rtol=1e-12,
        atol=1e-12,
    )
    gradcheck(lambda a, b: F.cross_entropy(a, b, **kw), leaf(x), leaf(q))


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss])
def test_empty_and_size_one_batches(loss):
    """Guards against a crash on an empty batch, a mean over it that is not NaN (PyTorch), or a
    batch of one differing from the unbatched form."""
    x = pylucid.zeros(0, 3, dtype=F64, requires_grad=True)
    t = pylucid.zeros(0, dtype=pylucid.int64)
    assert np.isnan(loss(x, t).item())
    assert loss(x, t, reduction="sum").item() == 0.0
    assert loss(x, t, reduction="none").shape == (0,)
    loss(x, t, reduction="sum").backward()
    assert x.grad.shape == (0, 3)
    a = rand_array((3,))
    one = loss(T(a[None]), T([2]), reduction="none")
    assert one.shape == (1,)
    np.testing.assert_allclose(one.item(), loss(T(a), T(2)).item(), rtol=1e-14)
    assert loss(T(a), T(2), reduction="none").shape == ()


def test_all_targets_ignored():
    """Guards against a mean with nothing counted returning 0 instead of NaN, or a non-zero gradient."""
    x = leaf(rand_array((2, 3)))
    t = T([-100, -100])
    y = F.cross_entropy(x, t, label_smoothing=0.1)
    assert np.isnan(y.item())
    y.backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.zeros((2, 3)))


def test_cross_entropy_is_stable_for_huge_logits():
    """Guards against exp overflow in the fused log-softmax."""
    x = T([[1000.0, -1000.0], [0.0, 800.0]])
    y = F.cross_entropy(x, T([0, 0]), reduction="none")
    np.testing.assert_allclose(np.asarray(y), [0.0, 800.0])


# ---- mse / l1 / bce ----------------------------------------------------------------------

POINTWISE = [
    (F.mse_loss, lambda x, t: (x - t) ** 2),
    (F.l1_loss, lambda x, t: np.abs(x - t)),
]


@pytest.mark.parametrize("fn,elem", POINTWISE)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(3, 4), (5,), ()])
def test_pointwise_losses(fn, elem, reduction, shape):
    """Guards against a wrong gradient for either operand (the target gets -dx) in any reduction."""
    x, t = rand_array(shape), rand_array(shape)
    np.testing.assert_allclose(
        np.asarray(fn(T(x), T(t), reduction=reduction)),
        _reduce(elem(x, t), max(x.size, 1), reduction),
        rtol=1e-12,
        atol=1e-14,
    )
    gradcheck(lambda a, b: fn(a, b, reduction=reduction), leaf(x), leaf(t))


@pytest.mark.parametrize("fn", [F.mse_loss, F.l1_loss, F.binary_cross_entropy_with_logits])
def test_pointwise_non_contiguous_empty_and_accumulation(fn):
    """Guards against strided operands being misread, an empty mean that is not NaN, and .grad not accumulating."""
    x, t = rand_array((4, 3)), RNG.uniform(0, 1, size=(4, 3))
    xn, tn = non_contiguous(x).requires_grad_(), non_contiguous(t)
    np.testing.assert_allclose(
        np.asarray(fn(xn, tn).detach()), np.asarray(fn(T(x), T(t))), rtol=1e-14
    )
    gradcheck(lambda a: fn(a, tn), xn)
    e = pylucid.zeros(0, 2, dtype=F64, requires_grad=True)
    assert np.isnan(fn(e, pylucid.zeros(0, 2, dtype=F64)).item())
    xl = leaf(x)
    fn(xl, T(t)).backward()
    first = np.asarray(xl.grad).copy()
    fn(xl, T(t)).backward()
    np.testing.assert_allclose(np.asarray(xl.grad), 2 * first, rtol=1e-14)


def test_l1_gradient_at_zero_is_zero():
    """Guards against d|x - t| at x == t being +-1 instead of PyTorch's 0."""
    x = leaf([1.0, 2.0])
    F.l1_loss(x, T([1.0, 0.0]), reduction="sum").backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [0.0, 1.0])


@pytest.mark.parametrize(
    "use_w,use_pw,reduction",
    [(False, False, "mean"), (True, False, "sum"), (False, True, "none"), (True, True, "mean")],
)
def test_bce_with_logits(use_w, use_pw, reduction):
    """Guards against wrong gradients for input, target, weight (broadcast over rows) and
    pos_weight (one per class, last dim)."""
    x, t = rand_array((3, 4)) * 3, RNG.uniform(0, 1, size=(3, 4))
    w = RNG.uniform(0.5, 2, size=(3, 1)) if use_w else None
    pw = RNG.uniform(0.5, 3, size=(4,)) if use_pw else None
    expect = bce_ref(x, t, w, reduction, pw)
    got = F.binary_cross_entropy_with_logits(
        T(x), T(t), None if w is None else T(w), reduction=reduction, pos_weight=None if pw is None else T(pw)
    )
    np.testing.assert_allclose(np.asarray(got), expect, rtol=1e-12, atol=1e-14)
    args = [leaf(x), leaf(t)] + ([leaf(w)] if use_w else []) + ([leaf(pw)] if use_pw else [])

    def fn(a, b, *rest):
        rest = list(rest)
        ww = rest.pop(0) if use_w else None
        pp = rest.pop(0) if use_pw else None
        return F.binary_cross_entropy_with_logits(
            a, b, weight=ww, reduction=reduction, pos_weight=pp
        )

    gradcheck(fn, *args)


def test_bce_with_logits_is_stable_for_huge_logits():
    """Guards against log(sigmoid(x)) overflowing to inf / NaN for |x| large."""
    x = leaf([100.0, -100.0, 100.0, -100.0])
    y = F.binary_cross_entropy_with_logits(x, T([0.0, 1.0, 1.0, 0.0]), reduction="none")
    np.testing.assert_allclose(np.asarray(y.detach()), [100.0, 100.0, 0.0, 0.0], atol=1e-40)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [1.0, -1.0, 0.0, 0.0], atol=1e-40)


# ---- dtypes ------------------------------------------------------------------------------


def _call(name, x):
    if name in ("cross_entropy", "nll_loss"):
        return getattr(F, name)(x, T(np.arange(x.shape[0]) % x.shape[1]))
    return getattr(F, name)(x, pylucid.zeros(*x.shape, dtype=x.dtype))


LOSSES = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy_with_logits"]


@pytest.mark.parametrize("name", LOSSES)
def test_autocast_forces_float32_and_grads_keep_input_dtype(name):
    """Guards against losses computed in bfloat16 under autocast, or gradients returned as float32."""
    assert pylucid.ops.schema(name).amp_policy == pylucid._C.AmpPolicy.ForceFP32
    x = pylucid.randn(4, 3).to(pylucid.bfloat16).requires_grad_()
    with pylucid.autocast(dtype=pylucid.bfloat16):
        y = _call(name, x)
        d = _call(name, pylucid.randn(4, 3, dtype=F64))
    assert y.dtype == pylucid.float32 and d.dtype == F64
    y.backward()
    assert x.grad.dtype == pylucid.bfloat16 and x.grad.shape == (4, 3)


@pytest.mark.parametrize("name", LOSSES)
def test_half_input_outside_autocast_keeps_dtype(name):
    """Guards against half inputs being promoted (or accumulated in half) outside autocast."""
    x = pylucid.randn(8, 5).to(pylucid.float16)
    y16 = _call(name, x)
    assert y16.dtype == pylucid.float16
    np.testing.assert_allclose(y16.float().item(), _call(name, x.float()).item(), rtol=5e-3)


# ---- node and errors ---------------------------------------------------------------------


def test_cross_entropy_node_state_and_release():
    """Guards against the node keeping the logsumexp after backward (a leak) or losing its options."""
    x = leaf(rand_array((3, 4)))
    y = F.cross_entropy(x, T([0, 1, 3]), ignore_index=1, label_smoothing=0.1, reduction="sum")
    n = y.grad_fn
    assert isinstance(n, pylucid._C.CrossEntropyBackward) and n.name() == "CrossEntropyBackward"
    assert (n.reduction, n.ignore_index, n.label_smoothing) == ("sum", 1, 0.1)
    assert n.saved_lse.shape == (3,)
    assert n.schema == pylucid._C.CrossEntropyBackward.schema_v1
    y.backward()
    assert n.saved_lse is None
    with pytest.raises(pylucid.LucidError, match="second time"):
        y.backward()
    assert F.nll_loss(x, T([0, 1, 2])).grad_fn.name() == "NllLossBackward"
    assert F.mse_loss(x, x.detach()).grad_fn.name() == "MseLossBackward"
    assert F.l1_loss(x, x.detach()).grad_fn.name() == "L1LossBackward"
    assert (
        F.binary_cross_entropy_with_logits(x, x.detach()).grad_fn.name()
        == "BinaryCrossEntropyWithLogitsBackward"
    )


def test_target_modified_in_place_is_caught():
    """Guards against a backward silently using class indices changed after the forward."""
    x = leaf(rand_array((2, 3)))
    t = T([0, 1])
    y = F.cross_entropy(x, t)
    t.add_(1)
    with pytest.raises(pylucid.LucidError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_class_loss_errors(loss):
    """Guards against bad targets, weights or options crashing or computing garbage instead of a
    typed error naming the op."""
    fn = getattr(F, loss)
    x = pylucid.randn(2, 3, dtype=F64)
    with pytest.raises(
        pylucid.IndexOutOfRange, match=f"{loss}: target 3 is out of bounds for 3 classes"
    ):
        fn(x, T([0, 3]), reduction="none")
    with pytest.raises(
        pylucid.IndexOutOfRange, match=f"{loss}: target -1 is out of bounds for 3 classes"
    ):
        fn(x, T([-1, 0]))
    with pytest.raises(
        pylucid.ShapeMismatch,
        match=f"{loss}: target shape \\[3\\] does not match input shape \\[2, 3\\]",
    ):
        fn(x, T([0, 1, 2]))
    with pytest.raises(
        pylucid.DtypeMismatch, match="target must hold int64 class indices, got bool"
    ):
        fn(x, T([True, False]))
    with pytest.raises(pylucid.ShapeMismatch, match="weight must have shape \\[3\\]"):
        fn(x, T([0, 1]), weight=pylucid.ones(2, dtype=F64))
    with pytest.raises(
        pylucid.LucidError, match="gradient with respect to weight is not supported"
    ):
        fn(x, T([0, 1]), weight=pylucid.ones(3, dtype=F64, requires_grad=True))
    with pytest.raises(
        pylucid.LucidError, match=f"{loss}: reduction must be 'mean', 'sum' or 'none', got 'avg'"
    ):
        fn(x, T([0, 1]), reduction="avg")
    with pytest.raises(pylucid.ShapeMismatch, match="class dim"):
        fn(pylucid.tensor(1.0), T(0))
    with pytest.raises(pylucid.DtypeMismatch, match="input must be a floating tensor, got int64"):
        fn(T([[1, 2]]), T([0]))
    with pytest.raises(TypeError):
        fn(x, None)


def test_cross_entropy_option_errors():
    """Guards against out-of-range smoothing or ignore_index with soft labels being accepted."""
    x = pylucid.randn(2, 3)
    with pytest.raises(pylucid.LucidError, match="label_smoothing must be in \\[0, 1\\], got 1.5"):
        F.cross_entropy(x, T([0, 1]), label_smoothing=1.5)
    with pytest.raises(
        pylucid.LucidError, match="ignore_index \\(0\\) is not supported with probability targets"
    ):
        F.cross_entropy(x, pylucid.ones(2, 3), ignore_index=0)
    with pytest.raises(
        pylucid.ShapeMismatch, match="probability target must have the input's shape"
    ):
        F.cross_entropy(x, pylucid.ones(2, 4))


def test_pointwise_loss_errors():
    """Guards against a mismatched target (the classic (N,) vs (N, 1) bug) passing silently: it
    broadcasts as in PyTorch, but with PyTorch's warning; and against integer inputs."""
    for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        with pytest.warns(UserWarning, match="different to the input size"):
            out = fn(pylucid.ones(3), pylucid.ones(3, 1), reduction="none")
        assert out.shape == (3, 3)
    for fn in (F.mse_loss, F.l1_loss):
        with pytest.raises(pylucid.DtypeMismatch, match="expected floating input and target"):
            fn(T([1, 2]), T([1, 2]))
    bce = F.binary_cross_entropy_with_logits
    with pytest.raises(
        pylucid.ShapeMismatch, match="target shape \\[3\\] must equal input shape \\[3, 1\\]"
    ):
        bce(pylucid.ones(3, 1), pylucid.ones(3))
    with pytest.raises(
        pylucid.ShapeMismatch, match="pos_weight of shape \\[2\\] cannot be broadcast"
    ):
        bce(pylucid.ones(3, 4), pylucid.ones(3, 4), pos_weight=pylucid.ones(2))
    with pytest.raises(
        pylucid.ShapeMismatch, match="weight of shape \\[2, 3, 4\\] cannot be broadcast"
    ):
        bce(pylucid.ones(3, 4), pylucid.ones(3, 4), weight=pylucid.ones(2, 3, 4))


# ---- PyTorch -----------------------------------------------------------------------------


def _torch_pair(torch, a):
    return leaf(a), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 2), (4,)])
@pytest.mark.parametrize("use_w", [False, True])
@pytest.mark.parametrize("ignore", [-100, 1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("eps", [0.0, 0.15])
def test_cross_entropy_and_nll_against_torch(shape, use_w, ignore, reduction, eps):
    """Guards against drift from torch.nn.functional.cross_entropy / nll_loss in any option."""
    torch = _torch()
    TF = torch.nn.functional
    C = shape[0] if len(shape) == 1 else shape[1]
    a = rand_array(shape) * 2
    t = targets(
        () if len(shape) == 1 else (shape[0],) + shape[2:], C, ignore if len(shape) > 1 else None
    )
    w = RNG.uniform(0.5, 2, size=C) if use_w else None
    g = rand_array(t.shape) if reduction == "none" else None
    cases = [
        (F.cross_entropy, TF.cross_entropy, {"label_smoothing": eps}),
        (F.nll_loss, TF.nll_loss, {}),
    ]
    for ours, theirs, kw in cases:
        x, tx = _torch_pair(torch, a)
        y = ours(
            x,
            T(t),
            weight=None if w is None else T(w),
            ignore_index=ignore,
            reduction=reduction,
            **kw,
        )
        ty = theirs(
            tx,
            torch.tensor(t),
            weight=None if w is None else torch.tensor(w),
            ignore_index=ignore,
            reduction=reduction,
            **kw,
        )
        np.testing.assert_allclose(
            np.asarray(y.detach()), ty.detach().numpy(), rtol=1e-12, atol=1e-14
        )
        y.backward(None if g is None else T(g))
        ty.backward(None if g is None else torch.tensor(g))
        np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("use_w", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_cross_entropy_probabilities_against_torch(use_w, reduction, eps):
    """Guards against drift from PyTorch on soft labels, including the target's gradient."""
    torch = _torch()
    a, q = rand_array((3, 4, 2)), RNG.uniform(0, 1, size=(3, 4, 2))
    w = RNG.uniform(0.5, 2, size=4) if use_w else None
    x, tx = _torch_pair(torch, a)
    qq, tq = _torch_pair(torch, q)
    y = F.cross_entropy(
        x, qq, weight=None if w is None else T(w), reduction=reduction, label_smoothing=eps
    )
    ty = torch.nn.functional.cross_entropy(
        tx,
        tq,
        weight=None if w is None else torch.tensor(w),
        reduction=reduction,
        label_smoothing=eps,
    )
    np.testing.assert_allclose(np.asarray(y.detach()), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(np.asarray(qq.grad), tq.grad.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "use_w,use_pw", [(False, False), (True, False), (False, True), (True, True)]
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_against_torch(use_w, use_pw, reduction):
    """Guards against drift from PyTorch's binary_cross_entropy_with_logits (value, input and target grads)."""
    torch = _torch()
    a, q = rand_array((5, 3)) * 4, RNG.uniform(0, 1, size=(5, 3))
    w = RNG.uniform(0.5, 2, size=(5, 1)) if use_w else None
    pw = RNG.uniform(0.5, 3, size=(3,)) if use_pw else None
    x, tx = _torch_pair(torch, a)
    qq, tq = _torch_pair(torch, q)
    y = F.binary_cross_entropy_with_logits(
        x, qq, None if w is None else T(w), reduction=reduction, pos_weight=None if pw is None else T(pw)
    )
    ty = torch.nn.functional.binary_cross_entropy_with_logits(
        tx,
        tq,
        None if w is None else torch.tensor(w),
        reduction=reduction,
        pos_weight=None if pw is None else torch.tensor(pw),
    )
    np.testing.assert_allclose(np.asarray(y.detach()), ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(np.asarray(qq.grad), tq.grad.numpy(), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_mse_l1_against_torch(name):
    """Guards against drift from PyTorch's mse_loss / l1_loss."""
    torch = _torch()
    a, b = rand_array((4, 3)), rand_array((4, 3))
    for reduction in ("mean", "sum", "none"):
        x, tx = _torch_pair(torch, a)
        y = getattr(F, name)(x, T(b), reduction=reduction)
        ty = getattr(torch.nn.functional, name)(tx, torch.tensor(b), reduction=reduction)
        np.testing.assert_allclose(np.asarray(y.detach()), ty.detach().numpy(), rtol=1e-12)
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), tx.grad.numpy(), rtol=1e-12)


def test_training_ops_leave_no_live_objects():
    """Guards against a node that keeps itself alive (saving its own output with its grad_fn, or
    the logsumexp / mask after backward): every training step would leak its graph."""
    import gc

    gc.collect()
    x = pylucid.randn(6, 4, requires_grad=True)
    w = pylucid.randn(5, 4, requires_grad=True)
    t, idx = T([0, 1, 2, 3, 0, 1]), T([4, 0, 4])
    base = pylucid._C._live_counts()

    def step():
        losses = [
            F.cross_entropy(x, t, label_smoothing=0.1),
            F.nll_loss(F.log_softmax(x, -1), t),
            F.mse_loss(F.softmax(x, 0), x.detach()),
            F.l1_loss(F.dropout(x, 0.5), x.detach()),
            F.binary_cross_entropy_with_logits(x, x.detach().sigmoid(), pos_weight=pylucid.ones(4)),
            F.embedding(idx, w).sum(),
        ]
        return losses

    for loss in step():
        loss.backward()
    del loss
    step()  # forward only: the graphs must die with their outputs
    x.grad = w.grad = None
    assert pylucid._C._live_counts() == base


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_large_batches_split_over_threads(reduction):
    """Guards against the threaded position split dropping rows or mis-adding per-thread partial
    sums (cross_entropy with smoothing and weights, and the pointwise losses)."""
    N, C = 3000, 40
    x = RNG.normal(size=(N, C)) * 3
    t = targets((N,), C, ignore=-100)
    w = RNG.uniform(0.5, 2, size=C)
    xl = leaf(x)
    y = F.cross_entropy(xl, T(t), weight=T(w), reduction=reduction, label_smoothing=0.1)
    ref = class_loss_ref(x, t, w, -100, reduction, 0.1)
    np.testing.assert_allclose(np.asarray(y.detach()), ref, rtol=1e-10)
    y.sum().backward()
    p = np.exp(log_softmax_ref(x, 1))
    valid = t != -100
    tc = np.where(valid, t, 0)
    onehot = np.eye(C)[tc]
    scale = (np.ones(N) if reduction == "none" else np.full(N, 1 / (w[tc] * valid).sum())) * valid
    expect = (0.9 * w[tc][:, None] * (p - onehot) + 0.1 / C * (p * w.sum() - w)) * scale[:, None]
    np.testing.assert_allclose(np.asarray(xl.grad), expect, rtol=1e-9, atol=1e-15)
    a, b = RNG.normal(size=(300, 400)), RNG.uniform(size=(300, 400))
    for fn, ref_fn in [
        (F.mse_loss, lambda: _reduce((a - b) ** 2, a.size, reduction)),
        (F.binary_cross_entropy_with_logits, lambda: bce_ref(a, b, reduction=reduction)),
    ]:
        np.testing.assert_allclose(
            np.asarray(fn(T(a), T(b), reduction=reduction)), ref_fn(), rtol=1e-10
        )
