"""More of PyTorch's functional losses, composed from differentiable pylucid ops:
``smooth_l1_loss``, ``huber_loss``, ``binary_cross_entropy``, ``kl_div``,
``margin_ranking_loss``, ``cosine_embedding_loss``, ``soft_margin_loss``,
``hinge_embedding_loss``, ``triplet_margin_loss``. Each follows PyTorch's formula, its
keywords (including the legacy ``size_average``/``reduce``) and its reductions.

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> F.smooth_l1_loss(pylucid.tensor([0.5, 3.0]), pylucid.tensor([0.0, 0.0])).item()
1.3125
"""
from .. import _C
from .._C import Tensor
from ..autograd.grad_mode import no_grad
from ._functional_train import _broadcast_target, _legacy_reduction

__all__ = [
    "binary_cross_entropy", "cosine_embedding_loss", "hinge_embedding_loss", "huber_loss", "kl_div",
    "margin_ranking_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss",
]




def _reduce(op, loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise _C.LucidError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _check_pair(op, input, target, same_shape=True):
    for name, t in (("input", input), ("target", target)):
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{op}: expected a floating input, got {input.dtype}")
    if same_shape and tuple(input.shape) != tuple(target.shape):
        raise _C.ShapeMismatch(f"{op}: target shape {list(target.shape)} does not match input shape "
                               f"{list(input.shape)}")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``);
    ``beta == 0`` is the L1 loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("smooth_l1_loss", input, target, same_shape=False)
    input, target = _broadcast_target(input, target)
    if beta < 0:
        raise _C.LucidError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = (input - target).abs()
    if beta == 0:
        return _reduce("smooth_l1_loss", d, reduction)
    loss = _C.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce("smooth_l1_loss", loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None) -> Tensor:
    """``0.5 d^2`` where ``|d| <= delta``, else ``delta (|d| - 0.5 delta)``."""
    _check_pair("huber_loss", input, target, same_shape=False)
    input, target = _broadcast_target(input, target)
    if delta <= 0:
        raise _C.LucidError(f"huber_loss: delta must be positive, got {delta}")
    d = (input - target).abs()
    loss = _C.where(d <= delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce("huber_loss", loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x`` in ``[0, 1]``, each log clamped
    below at -100 (PyTorch's choice, so that ``x = 0`` or ``1`` gives a finite loss); times
    ``weight`` (broadcast) when given.

    >>> import pylucid
    >>> round(binary_cross_entropy(pylucid.tensor([0.5]), pylucid.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("binary_cross_entropy", input, target)
    with no_grad():
        lo, hi = input.min().item() if input.numel() else 0.0, input.max().item() if input.numel() else 0.0
    if input.numel() and not (0.0 <= lo and hi <= 1.0):
        raise _C.LucidError("binary_cross_entropy: all elements of input should be between 0 and 1, got values "
                            f"in [{lo}, {hi}]")
    log_x = _C.log(input).clamp_min(-100)
    log_1mx = _C.log(1 - input).clamp_min(-100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce("binary_cross_entropy", loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False) -> Tensor:
    """Kullback-Leibler divergence with ``input`` as log-probabilities:
    ``target * log(target) - target * input`` (0 where ``target == 0``), or with ``log_target=True``
    ``exp(target) * (target - input)``. ``reduction='batchmean'`` divides the sum by
    ``input.size(0)`` (the mathematically correct KL); ``'mean'`` averages over every element,
    as PyTorch does (with a warning there).

    >>> import pylucid
    >>> p = pylucid.tensor([[0.5, 0.5]])
    >>> kl_div(p.log(), p, reduction="batchmean").item()
    0.0
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("kl_div", input, target, same_shape=False)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise _C.LucidError(f"kl_div: reduction must be 'none', 'batchmean', 'sum' or 'mean', got {reduction!r}")
    if log_target:
        loss = _C.exp(target) * (target - input)
    else:  # PyTorch's form and rounding: xlogy(t, t) - t x (0 where t == 0, NaN where t < 0)
        from ..special import xlogy
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce("kl_div", loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)`` with ``target`` in ``{1, -1}``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("margin_ranking_loss", input1, input2, same_shape=False)
    _check_pair("margin_ranking_loss", input1, target, same_shape=False)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise _C.ShapeMismatch(f"margin_ranking_loss: all input tensors should have the same number of dims, got "
                               f"{list(input1.shape)}, {list(input2.shape)} and {list(target.shape)}")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce("margin_ranking_loss", loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1``; ``cos`` along dim 1 (dim 0 for unbatched 1-d inputs), with PyTorch's
    ``1e-12`` added to each squared magnitude."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("cosine_embedding_loss", input1, input2)
    if not isinstance(target, Tensor):
        raise _C.DtypeMismatch(f"cosine_embedding_loss: target must be a Tensor, got {type(target).__name__}")
    if input1.ndim not in (1, 2) or target.ndim != input1.ndim - 1:
        raise _C.ShapeMismatch(f"cosine_embedding_loss: expected 1-d or 2-d inputs with a target of one dim "
                               f"less, got inputs {list(input1.shape)} and target {list(target.shape)}")
    dim = input1.ndim - 1
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zero = cos * 0
    loss = _C.where(target == 1, 1 - cos, zero) + _C.where(target == -1, (cos - margin).clamp_min(0), zero)
    return _reduce("cosine_embedding_loss", loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """``log(1 + exp(-target * input))`` (two-class logistic loss, ``target`` in ``{1, -1}``)."""
    from ._functional_act_ext import softplus

    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("soft_margin_loss", input, target, same_shape=False)  # broadcasts, without a warning
    return _reduce("soft_margin_loss", softplus(-target * input), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """``x`` where ``target == 1``, ``max(0, margin - x)`` where ``target == -1``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("hinge_embedding_loss", input, target, same_shape=False)
    zero = input * 0
    margin_clamp = (margin - input).clamp_min(0)
    loss = _C.where(target == 1, zero, margin_clamp) + _C.where(target == -1, zero, input)
    return _reduce("hinge_embedding_loss", loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the :func:`pairwise_distance`."""
    from ._functional_act_ext import pairwise_distance

    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("triplet_margin_loss", anchor, positive, same_shape=False)
    _check_pair("triplet_margin_loss", anchor, negative, same_shape=False)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce("triplet_margin_loss", (margin + d_pos - d_neg).clamp_min(0), reduction)

