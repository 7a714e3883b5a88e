"""``ctc_loss``: the connectionist temporal classification loss (Graves et al., 2006), with
PyTorch's signature, reductions and gradient.

Forward: the log-space alpha recursion over the blank-extended targets, vectorised over the batch
and the target positions (one step per time frame). Backward: the beta recursion, and PyTorch's
gradient with respect to ``log_probs``, ``exp(log_probs) - occupancy`` (the occupancy being
``alpha * beta / (p * prob)`` per frame and class): this is the gradient of the loss with respect
to the logits when ``log_probs = log_softmax(logits)``, which is how CTC is used, and it is what
PyTorch returns. Like PyTorch's, the backward is not itself differentiable.
"""
import numpy as np

from .. import _C
from .._C import Tensor

__all__ = ["ctc_loss"]

_NEG = -np.inf


def _logaddexp(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = np.logaddexp(out, x)
    return out


def _lengths(v, n, name):
    if isinstance(v, Tensor):
        if v.dtype.is_floating_point:
            raise _C.DtypeMismatch(f"ctc_loss: {name} must be integers, got {v.dtype}")
        a = v.detach().numpy().reshape(-1).astype(np.int64)
    else:
        try:
            a = np.asarray([int(e) for e in (v if isinstance(v, (list, tuple)) else [v])], dtype=np.int64)
        except (TypeError, ValueError):
            raise _C.DtypeMismatch(f"ctc_loss: {name} must be a tuple of ints or an integer Tensor, got "
                                   f"{type(v).__name__}") from None
    if a.size != n:
        raise _C.ShapeMismatch(f"ctc_loss: {name} must be of size batch_size {n}, got {a.size}")
    return a


def _extended(targets, target_lengths, blank):
    """Per batch item, the blank-extended target l' (length 2 S + 1), padded with blank."""
    N = len(targets)
    Smax = max([len(t) for t in targets] + [0])
    L = 2 * Smax + 1
    ext = np.full((N, L), blank, dtype=np.int64)
    for b, t in enumerate(targets):
        ext[b, 1:2 * len(t):2] = t
    # s - 2 may be skipped when l'_s is a label different from l'_{s-2}.
    skip = np.zeros((N, L), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid = np.arange(L)[None, :] < (2 * target_lengths + 1)[:, None]
    return ext, skip, valid


def _alpha_beta(lp, ext, skip, valid, input_lengths, target_lengths, with_beta):
    T, N, _ = lp.shape
    L = ext.shape[1]
    bidx = np.arange(N)[:, None]
    # emissions[t, b, s] = lp[t, b, l'_s]
    em = lp[:, bidx, ext]
    em = np.where(valid[None], em, _NEG)
    alpha = np.full((T, N, L), _NEG)
    if T:
        alpha[0, :, 0] = em[0, :, 0]
        has_label = target_lengths > 0
        alpha[0, has_label, 1] = em[0, has_label, 1]
    for t in range(1, T):
        prev = alpha[t - 1]
        a1 = np.concatenate([np.full((N, 1), _NEG), prev[:, :-1]], 1)
        a2 = np.concatenate([np.full((N, 2), _NEG), prev[:, :-2]], 1)
        a2 = np.where(skip, a2, _NEG)
        alpha[t] = em[t] + _logaddexp(prev, a1, a2)
    last = np.maximum(input_lengths - 1, 0)
    end = 2 * target_lengths
    a_end = alpha[last, np.arange(N), end]
    a_pre = np.where(target_lengths > 0, alpha[last, np.arange(N), np.maximum(end - 1, 0)], _NEG)
    ll = np.logaddexp(a_end, a_pre)
    ll = np.where(input_lengths > 0, ll, np.where(target_lengths == 0, 0.0, _NEG))
    if not with_beta:
        return -ll, alpha, None, em
    beta = np.full((T, N, L), _NEG)
    skip_next = np.zeros((N, L), dtype=bool)
    skip_next[:, :-2] = skip[:, 2:]
    for t in range(T - 1, -1, -1):
        nxt = beta[t + 1] if t + 1 < T else np.full((N, L), _NEG)
        b1 = np.concatenate([nxt[:, 1:], np.full((N, 1), _NEG)], 1)
        b2 = np.concatenate([nxt[:, 2:], np.full((N, 2), _NEG)], 1)
        b2 = np.where(skip_next, b2, _NEG)
        rec = em[t] + _logaddexp(nxt, b1, b2)
        init = np.full((N, L), _NEG)
        init[np.arange(N), end] = em[t, np.arange(N), end]
        has = target_lengths > 0
        init[np.arange(N)[has], end[has] - 1] = em[t, np.arange(N)[has], end[has] - 1]
        is_last = (t == input_lengths - 1)[:, None]
        inside = (t < input_lengths - 1)[:, None]
        beta[t] = np.where(is_last, init, np.where(inside, rec, _NEG))
    return -ll, alpha, beta, em


def _fn():
    from ..autograd.function import Function

    class CtcLoss(Function):
        _builtin_node = "CtcLoss"

        @staticmethod
        def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
            lp = log_probs.detach().double().numpy()
            ext, skip, valid = _extended(targets, target_lengths, blank)
            nll, alpha, _, _ = _alpha_beta(lp, ext, skip, valid, input_lengths, target_lengths, False)
            ctx.args = (lp, ext, skip, valid, input_lengths, target_lengths, nll, zero_infinity)
            ctx.dtype = log_probs.dtype
            return _C._from_numpy(np.ascontiguousarray(nll)).to(log_probs.dtype)

        @staticmethod
        def backward(ctx, g):
            lp, ext, skip, valid, input_lengths, target_lengths, nll, zero_infinity = ctx.args
            _, alpha, beta, _ = _alpha_beta(lp, ext, skip, valid, input_lengths, target_lengths, True)
            T, N, C = lp.shape
            lab = alpha + beta  # (T, N, L)
            acc = np.full((T, N, C), _NEG)
            for s in range(ext.shape[1]):
                cls = ext[:, s]
                cur = acc[:, np.arange(N), cls]
                acc[:, np.arange(N), cls] = np.logaddexp(cur, lab[:, :, s])
            with np.errstate(invalid="ignore", over="ignore"):
                grad = np.exp(lp) - np.exp(acc + nll[None, :, None] - lp)
            gout = g.detach().double().numpy().reshape(-1)
            grad = grad * gout[None, :, None]
            frames = np.arange(T)[:, None] < input_lengths[None, :]
            grad = np.where(frames[:, :, None], grad, 0.0)
            if zero_infinity:
                grad = np.where(np.isinf(nll)[None, :, None], 0.0, grad)
            return _C._from_numpy(np.ascontiguousarray(grad)).to(ctx.dtype), None, None, None, None, None

    return CtcLoss


_FN: list = []


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """PyTorch's ``F.ctc_loss``: ``log_probs`` ``(T, N, C)`` (or unbatched ``(T, C)``) log-softmax
    outputs; ``targets`` ``(N, S)`` padded or 1-d concatenated labels (none equal to ``blank``);
    ``input_lengths`` and ``target_lengths`` per batch item. ``reduction='mean'`` divides each
    loss by its target length, then averages over the batch."""
    if not isinstance(log_probs, Tensor) or not isinstance(targets, Tensor):
        raise _C.DtypeMismatch(f"ctc_loss: log_probs and targets must be Tensors, got {type(log_probs).__name__} "
                               f"and {type(targets).__name__}")
    if log_probs.dtype not in (_C.dtype.float32, _C.dtype.float64):
        raise _C.DtypeMismatch(f"ctc_loss: log_probs must be float32 or float64, got {log_probs.dtype}")
    if targets.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"ctc_loss: targets must be integers, got {targets.dtype}")
    if reduction not in ("none", "mean", "sum"):
        raise _C.LucidError(f"ctc_loss: {reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if log_probs.dim() not in (2, 3):
        raise _C.ShapeMismatch(f"ctc_loss: log_probs must be 3-D (T, N, C) or 2-D (T, C), got {list(log_probs.shape)}")
    if log_probs.numel() == 0:
        raise _C.LucidError(f"ctc_loss: log_probs tensor must not be empty, got shape {list(log_probs.shape)}")
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    T, N, C = lp.shape
    if not 0 <= blank < C:
        raise _C.IndexOutOfRange(f"ctc_loss: blank must be in label range [0, {C}), got {blank}")
    il = _lengths(input_lengths, N, "input_lengths")
    tl = _lengths(target_lengths, N, "target_lengths")
    if (il < 0).any() or (il > T).any():
        bad = il[(il < 0) | (il > T)][0]
        raise _C.ShapeMismatch(f"ctc_loss: Expected input_lengths to have value at most {T}, but got value {bad}")
    if (tl < 0).any():
        raise _C.ShapeMismatch(f"ctc_loss: target lengths must be non-negative, got {tl}")
    t_np = targets.detach().numpy().astype(np.int64)
    if unbatched:
        t_np = t_np.reshape(1, -1) if t_np.ndim == 1 else t_np
    if t_np.ndim == 2:
        if t_np.shape[0] != N:
            raise _C.ShapeMismatch(f"ctc_loss: targets has batch size {t_np.shape[0]}, log_probs {N}")
        if (tl > t_np.shape[1]).any():
            raise _C.ShapeMismatch(f"ctc_loss: Expected tensor to have size at least {int(tl.max())} at dimension 1, "
                                   f"but got size {t_np.shape[1]} for targets")
        seqs = [t_np[b, :tl[b]] for b in range(N)]
    elif t_np.ndim == 1:
        if tl.sum() > t_np.size:
            raise _C.ShapeMismatch(f"ctc_loss: the target lengths add up to {int(tl.sum())}, but targets has only "
                                   f"{t_np.size} labels")
        offs = np.concatenate([[0], np.cumsum(tl)])
        seqs = [t_np[offs[b]:offs[b + 1]] for b in range(N)]
    else:
        raise _C.ShapeMismatch(f"ctc_loss: targets must be 1-D or 2-D, got {list(targets.shape)}")
    for s in seqs:
        if s.size and ((s < 0).any() or (s >= C).any() or (s == blank).any()):
            raise _C.IndexOutOfRange(f"ctc_loss: target labels must be in [0, {C}) and differ from blank {blank}, "
                                     f"got {s.tolist()}")
    if not _FN:
        _FN.append(_fn())
    loss = _FN[0].apply(lp, seqs, il, tl, int(blank), bool(zero_infinity))
    if zero_infinity:  # as PyTorch: a where after the loss node (whose backward zeroes those rows too)
        loss = _C.where(loss.isinf(), loss.new_zeros(()), loss)
    if reduction == "mean":
        from .._tensor import tensor
        denom = tensor(np.maximum(tl, 1).astype(np.float64)).to(loss.dtype)
        return (loss / denom).mean()
    if reduction == "sum":
        return loss.sum()
    return loss[0] if unbatched else loss
