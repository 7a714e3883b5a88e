"""Less common functional layers and losses, composed from differentiable pylucid ops:
``local_response_norm``, ``alpha_dropout``/``feature_alpha_dropout`` (SELU-preserving dropout),
``channel_shuffle``, ``multi_margin_loss``, ``multilabel_margin_loss`` and
``multilabel_soft_margin_loss``, each with PyTorch's formula, keywords and reductions.

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> F.channel_shuffle(pylucid.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
[0.0, 2.0, 1.0, 3.0]
"""
import math

import numpy as np

from .. import _C
from .._C import Tensor
from ._functional_loss_ext import _check_pair, _legacy_reduction, _reduce

__all__ = ["alpha_dropout", "channel_shuffle", "feature_alpha_dropout", "local_response_norm", "multi_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss"]


def _tensor_input(op, input):
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"{op}: input must be a Tensor, got {type(input).__name__}")
    return input


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0) -> Tensor:
    """Normalises each element by its neighbours across channels (dim 1):
    ``x / (k + alpha / size * sum of x^2 over a window of `size` channels) ** beta``; the window
    reaches ``size // 2`` channels back and ``(size - 1) // 2`` forward, zero-padded."""
    if _tensor_input("local_response_norm", input).ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    before, after = size // 2, (size - 1) // 2
    pad = [sq.new_zeros(sq.shape[0], n, *sq.shape[2:]) for n in (before, after)]
    padded = _C.cat([pad[0], sq, pad[1]], 1)
    window = padded.narrow(1, 0, c)
    for i in range(1, size):
        window = window + padded.narrow(1, i, c)
    return input / (window * (alpha / size) + k) ** beta


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _alpha_dropout(op, input, p, training, mask_shape):
    from .._random import bernoulli  # noqa: PLC0415
    _tensor_input(op, input)
    if not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input * 0.0
    # Dropped units take SELU's negative saturation value -alpha * scale; a and b then restore
    # zero mean and unit variance (Klambauer et al., 2017), as PyTorch's.
    alpha = _SELU_ALPHA * _SELU_SCALE
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    keep = bernoulli(_C._full(tuple(mask_shape), 1.0 - p, input.dtype))
    b = (keep - 1.0) * (alpha * a) + alpha * a * p
    return input * (keep * a) + b


def alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor:
    """Dropout for SELU networks: dropped elements are set to SELU's negative saturation and the
    result is scaled and shifted so that mean and variance are kept."""
    return _alpha_dropout("alpha_dropout", input, p, training, _tensor_input("alpha_dropout", input).shape)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor:
    """:func:`alpha_dropout` of whole channels: one draw per (sample, channel) of an (N, C, ...) input."""
    _tensor_input("feature_alpha_dropout", input)
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    return _alpha_dropout("feature_alpha_dropout", input, p, training, shape)


def channel_shuffle(input, groups) -> Tensor:
    """Splits the channels (dim 1) of an (N, C, *) input into ``groups`` groups and interleaves
    them: (N, g, C/g, *) -> (N, C/g, g, *)."""
    if _tensor_input("channel_shuffle", input).ndim < 3:
        raise _C.LucidError(f"channel_shuffle: expected input with at least 3 dims, got {input.ndim}")
    if groups <= 0:
        raise _C.LucidError(f"channel_shuffle: number of groups to divide channels in must be positive, got {groups}")
    n, c = input.shape[:2]
    if c % groups:
        raise _C.LucidError(f"channel_shuffle: number of channels ({c}) must be divisible by groups ({groups})")
    rest = input.shape[2:]
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


def _class_target(op, input, target):
    _check_pair(op, input, target, same_shape=False)
    batch_ok = input.ndim == 1 or target.shape[0] == input.shape[0]
    if input.ndim not in (1, 2) or target.ndim != input.ndim - 1 or not batch_ok:
        raise _C.ShapeMismatch(f"{op}: expected input (N, C) or (C,) and target (N,) or (), got "
                               f"{list(input.shape)} and {list(target.shape)}")
    return input.reshape(-1, input.shape[-1]), target.reshape(-1, 1)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean") -> Tensor:
    """The multi-class hinge loss: for each sample, ``sum over i != y of
    w[y] * max(0, margin - x[y] + x[i]) ** p / C`` (``p`` is 1 or 2)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x, y = _class_target("multi_margin_loss", input, target)
    c = x.shape[1]
    if y.numel() and (bool((y < 0).any()) or bool((y >= c).any())):
        raise _C.IndexOutOfRange(f"multi_margin_loss: target out of range for {c} classes")
    h = (margin - x.gather(1, y) + x).clamp(min=0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[y.reshape(-1)].unsqueeze(1)
    from .._tensor import arange  # noqa: PLC0415
    not_y = arange(c).unsqueeze(0) != y  # the i == y term is left out
    loss = (h * not_y.to(h.dtype)).sum(1) / c
    return _reduce("multi_margin_loss", loss if input.ndim == 2 else loss.reshape(()), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """The multi-label hinge loss. ``target`` (same shape as input) lists each sample's classes
    and ends at the first -1; the loss is ``sum over target classes j and other classes i of
    max(0, 1 - (x[j] - x[i])) / C``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("multilabel_margin_loss", input, target)
    if input.ndim not in (1, 2):
        raise _C.ShapeMismatch(f"multilabel_margin_loss: expected 1-d or 2-d input, got {input.ndim}-d")
    x = input.reshape(-1, input.shape[-1])
    c = x.shape[1]
    t = target.detach().reshape(-1, c).numpy()
    counts = np.zeros(t.shape, dtype=np.float64)  # how often each class is listed before the first -1
    for r, row in enumerate(t):
        for v in row:
            if v < 0:
                break
            if v >= c:
                raise _C.IndexOutOfRange(f"multilabel_margin_loss: target {v} out of range for {c} classes")
            counts[r, v] += 1
    mask = counts[:, :, None] * (counts[:, None, :] == 0)  # [n, j, i]: j listed, i not
    from .._tensor import tensor  # noqa: PLC0415
    h = (1.0 - x.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)
    loss = (h * tensor(mask, dtype=x.dtype)).sum((1, 2)) / c
    return _reduce("multilabel_margin_loss", loss if input.ndim == 2 else loss.reshape(()), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean") -> Tensor:
    """The multi-label one-versus-all logistic loss, averaged over the C classes (the last dim):
    ``-mean_c(w * (y log sigmoid(x) + (1 - y) log sigmoid(-x)))``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_pair("multilabel_soft_margin_loss", input, target)
    from ._functional_act_ext import logsigmoid  # noqa: PLC0415
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1]
    return _reduce("multilabel_soft_margin_loss", loss, reduction)
