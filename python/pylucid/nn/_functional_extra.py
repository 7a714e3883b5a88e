"""Less common functional ops, composed from differentiable pylucid ops (so they have gradients
of every order): ``unfold``/``fold`` (im2col and its adjoint, as one ``index_select`` /
``index_add`` over the flattened padded image), ``bilinear``, ``embedding_bag``,
``gaussian_nll_loss``, ``poisson_nll_loss``, ``multilabel_soft_margin_loss``, ``multi_margin_loss``,
``local_response_norm``, ``channel_shuffle`` and ``gumbel_softmax``, with PyTorch's keywords.

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> F.unfold(pylucid.arange(9.0).view(1, 1, 3, 3), kernel_size=2).tolist()
[[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
"""
import math

import numpy as np

from .. import _C
from .._C import Tensor
from .._compat import wrap_public
from .._index_ext import index_add
from ._functional_act_ext import logsigmoid
from ._functional_conv import pad
from ._functional_loss_ext import _check_pair, _legacy_reduction, _reduce
from ._functional_spatial import _written_back
from ._functional_train import embedding, softmax

__all__ = ["alpha_dropout", "feature_alpha_dropout", "multilabel_margin_loss", "bilinear", "channel_shuffle", "embedding_bag", "fold", "gaussian_nll_loss", "gumbel_softmax",
           "local_response_norm", "multi_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss", "unfold"]


def _tensor_input(op, input):
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"{op}: input must be a Tensor, got {type(input).__name__}")
    return input


def _pair(v, name, op):
    v = (v, v) if isinstance(v, int) and not isinstance(v, bool) else tuple(v)
    if len(v) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise _C.DtypeMismatch(f"{op}: {name} must be an int or a pair of ints, got {v!r}")
    return v


def _long(a):
    return _C._from_numpy(np.asarray(a, dtype=np.int64, order="C"))


def _patch_index(size, kernel_size, dilation, padding, stride, op):
    """The flat positions, in the padded ``size`` image, that im2col reads: ``(kh*kw*L,)``, kernel
    offset major, block position minor; with the number of blocks per dim."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_pair(v, n, op) for v, n in (
        (kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"), (stride, "stride")))
    if min(kh, kw, dh, dw, sh, sw) <= 0 or min(ph, pw) < 0:
        raise _C.ShapeMismatch(f"{op}: kernel_size, dilation and stride must be positive and padding non-negative")
    H, W = size[0] + 2 * ph, size[1] + 2 * pw
    oh, ow = (H - dh * (kh - 1) - 1) // sh + 1, (W - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise _C.ShapeMismatch(f"{op}: the kernel ({kh}, {kw}) with dilation ({dh}, {dw}) does not fit the padded "
                               f"input of size ({H}, {W})")
    rows = (np.arange(kh)[:, None] * dh)[:, :, None, None] + (np.arange(oh) * sh)[None, None, :, None]
    cols = (np.arange(kw)[None, :] * dw)[:, :, None, None] + (np.arange(ow) * sw)[None, None, None, :]
    return _long((rows * W + cols).reshape(-1)), (oh, ow), (ph, pw), (H, W), kh * kw


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: the sliding ``kernel_size`` blocks of a ``(N, C, H, W)`` (or ``(C, H, W)``) input
    as columns, ``(N, C * kh * kw, L)``; differentiable."""
    if not isinstance(input, Tensor) or input.dim() not in (3, 4):
        raise _C.ShapeMismatch("unfold: expected a 3-d or 4-d input tensor (N, C, H, W)")
    x = input if input.dim() == 4 else input.unsqueeze(0)
    N, C, h, w = x.shape
    idx, (oh, ow), (ph, pw), (H, W), k = _patch_index((h, w), kernel_size, dilation, padding, stride, "unfold")
    if ph or pw:
        x = pad(x, (pw, pw, ph, ph))
    cols = x.reshape(N, C, H * W).index_select(2, idx).reshape(N, C * k, oh * ow)
    return cols if input.dim() == 4 else cols.squeeze(0)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, the adjoint of :func:`unfold`: sums the columns ``(N, C * kh * kw, L)`` back into a
    ``(N, C, *output_size)`` image (overlapping blocks add up); differentiable."""
    if not isinstance(input, Tensor) or input.dim() not in (2, 3):
        raise _C.ShapeMismatch("fold: expected a 2-d or 3-d input tensor (N, C * kh * kw, L)")
    cols = input if input.dim() == 3 else input.unsqueeze(0)
    h, w = _pair(output_size, "output_size", "fold")
    idx, (oh, ow), (ph, pw), (H, W), k = _patch_index((h, w), kernel_size, dilation, padding, stride, "fold")
    N, CK, L = cols.shape
    if CK % k or L != oh * ow:
        raise _C.ShapeMismatch(f"fold: expected input of shape (N, C * {k}, {oh * ow}) for output_size {(h, w)}, "
                               f"got {tuple(input.shape)}")
    C = CK // k
    out = _C._full((N, C, H * W), 0.0, cols.dtype)
    out = index_add(out, 2, idx, cols.reshape(N, C, k * L)).reshape(N, C, H, W)
    if ph or pw:
        out = out[:, :, ph:ph + h, pw:pw + w]
    return out if input.dim() == 3 else out.squeeze(0)


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1^T W_k x2 + b_k`` over the last dims: ``weight`` is ``(out, in1, in2)``."""
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise _C.ShapeMismatch(f"bilinear: weight {tuple(weight.shape)} does not match inputs "
                               f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise _C.ShapeMismatch(f"bilinear: input1 {tuple(input1.shape)} and input2 {tuple(input2.shape)} must "
                               "have the same leading dims")
    out_f, in1, in2 = weight.shape
    t = input1 @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)          # (..., out * in2)
    y = (t.reshape(*input1.shape[:-1], out_f, in2) * input2.unsqueeze(-2)).sum(-1)
    return y + bias if bias is not None else y


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embedding rows: ``input`` 2-d (one bag per row) or 1-d with
    ``offsets`` (where each bag starts); ``per_sample_weights`` scale the rows (``mode="sum"``).
    Entries equal to ``padding_idx`` are left out; an empty bag gives zeros."""
    if mode not in ("sum", "mean", "max"):
        raise _C.ShapeMismatch(f"embedding_bag: mode has to be one of sum, mean or max, got {mode!r}")
    if not isinstance(input, Tensor) or input.dtype != _C.dtype.int64:
        raise _C.DtypeMismatch("embedding_bag: input must be an int64 tensor")
    if per_sample_weights is not None and mode != "sum":
        raise _C.LucidError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only supported "
                            f"for mode='sum' (got mode='{mode}')")
    if input.dim() == 2:
        if offsets is not None:
            raise _C.ShapeMismatch("embedding_bag: if input is 2D, then offsets has to be None")
        B, n = input.shape
        starts = np.arange(B) * n
        flat = input.reshape(-1)
    elif input.dim() == 1:
        if offsets is None or not isinstance(offsets, Tensor) or offsets.dim() != 1:
            raise _C.ShapeMismatch("embedding_bag: offsets has to be a 1D Tensor when input is 1D")
        starts = offsets.numpy().astype(np.int64)
        if include_last_offset:
            starts = starts[:-1]
        B = len(starts)
        flat = input
        if B and (starts[0] != 0 or (np.diff(starts) < 0).any() or starts[-1] > input.numel()):
            raise _C.ShapeMismatch("embedding_bag: offsets must start at 0, be non-decreasing and within the input")
    else:
        raise _C.ShapeMismatch(f"embedding_bag: input has to be 1D or 2D Tensor, got {input.dim()}D")
    n = flat.numel()
    bag_of = np.zeros(n, dtype=np.int64)
    if B:
        bag_of = np.searchsorted(starts, np.arange(n), side="right") - 1
    keep = np.ones(n, dtype=bool)
    if padding_idx is not None:
        keep = flat.numpy() != (padding_idx % weight.shape[0])
    if max_norm is not None:
        raise _C.LucidError("embedding_bag: max_norm is not supported (renormalise the weight yourself)")
    rows = embedding(flat, weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1).to(rows.dtype)
    if not keep.all():
        sel = _long(np.nonzero(keep)[0])
        rows, bag_of = rows.index_select(0, sel), bag_of[keep]
    D = weight.shape[1]
    zeros = _C._full((B, D), 0.0, rows.dtype)
    seg = _long(bag_of)
    if mode == "max":
        out = zeros.scatter_reduce(0, seg.view(-1, 1).expand(len(bag_of), D), rows, "amax", include_self=False)
        return out
    out = index_add(zeros, 0, seg, rows)
    if mode == "mean":
        counts = np.bincount(bag_of, minlength=B).astype(np.float64)
        out = out / _C._from_numpy(np.maximum(counts, 1.0)).to(rows.dtype).view(-1, 1)
    return out


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of ``target`` under N(``input``, ``var``):
    ``0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps))`` (+ ``0.5 log(2 pi)`` when
    ``full``); ``var`` may have one value per sample (last dim 1 or missing). The clamp passes the
    gradient through unchanged, as PyTorch's."""
    if not isinstance(var, Tensor):
        raise _C.DtypeMismatch(f"gaussian_nll_loss: var must be a Tensor, got {type(var).__name__}")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise _C.ShapeMismatch(f"gaussian_nll_loss: var of shape {tuple(var.shape)} is incorrect for input "
                                   f"{tuple(input.shape)}")
    if reduction not in ("none", "mean", "sum"):
        raise _C.ShapeMismatch(f"gaussian_nll_loss: {reduction} is not a valid value for reduction")
    if bool((var < 0).any()):
        raise _C.ShapeMismatch("gaussian_nll_loss: var has negative entry/entries")
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce("gaussian_nll_loss", loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of counts ``target`` under Poisson(rate): ``exp(input) - target *
    input`` with ``log_input``, else ``input - target * log(input + eps)``; ``full`` adds the
    Stirling term ``target log target - target + 0.5 log(2 pi target)`` where ``target > 1``."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        t = target.detach()
        safe = t.clamp(min=1.0)
        stirling = (safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()).masked_fill(t <= 1, 0.0)
        loss = loss + stirling
    return _reduce("poisson_nll_loss", loss, reduction)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with
    ``g = -log(Exponential(1))`` drawn as PyTorch draws it; with ``hard`` the one-hot of its argmax,
    carrying the soft sample's gradient (straight-through)."""
    if not isinstance(logits, Tensor):
        raise _C.DtypeMismatch(f"gumbel_softmax: logits must be a Tensor, got {type(logits).__name__}")
    gumbels = -_C._full(tuple(logits.shape), 0.0, logits.dtype).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _C._full(tuple(logits.shape), 0.0, logits.dtype).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-label one-versus-all loss: the mean over classes of
    ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))`` (times ``weight``), reduced over samples."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _reduce("multilabel_soft_margin_loss", loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: for each sample, ``sum over i != y of max(0, margin - x[y] + x[i])^p``
    (times ``weight[y]``) divided by the number of classes."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise _C.ShapeMismatch("multi_margin_loss: only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise _C.ShapeMismatch("multi_margin_loss: weight must be one-dimensional")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    y = target.reshape(-1, 1)
    if x.dim() != 2 or y.shape[0] != x.shape[0]:
        raise _C.ShapeMismatch(f"multi_margin_loss: expected input (N, C) and target (N,), got "
                               f"{tuple(input.shape)} and {tuple(target.shape)}")
    m = (margin - x.gather(1, y) + x).clamp(min=0)
    m = m if p == 1 else m * m
    if weight is not None:
        m = m * weight.index_select(0, y.reshape(-1)).unsqueeze(1)
    m = m.scatter(1, y, 0.0)
    loss = m.sum(1) / x.shape[1]
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return _reduce("multi_margin_loss", loss, reduction)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalises each channel by ``(k + alpha * mean of squares over size neighbouring
    channels) ** beta`` (input ``(N, C, *)``, at least 3-d); differentiable."""
    if input.dim() < 3:
        raise _C.ShapeMismatch(f"local_response_norm: expected 3D or higher dimensionality input (got "
                               f"{input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    rest = tuple(sq.shape[2:])
    N = sq.shape[0]
    parts = [_C._full((N, size // 2) + rest, 0.0, sq.dtype), sq, _C._full((N, (size - 1) // 2) + rest, 0.0, sq.dtype)]
    div = _C.cat(parts, 1).unfold(1, size, 1).sum(-1) / size
    return input / (div * alpha + k) ** beta


def channel_shuffle(input, groups):
    """Channels ``(N, C, *)`` regrouped: ``C = g * k`` channels read as ``(g, k)`` and transposed."""
    N, C = input.shape[0], input.shape[1]
    if C % groups:
        raise _C.ShapeMismatch(f"channel_shuffle: number of channels ({C}) must be divisible by groups ({groups})")
    rest = tuple(input.shape[2:])
    return input.reshape((N, groups, C // groups) + rest).transpose(1, 2).reshape((N, C) + rest)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _alpha_dropout(op, input, p, training, mask_shape):
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
    # PyTorch draws the mask with noise.bernoulli_(1 - p) (a float p: 53-bit uniforms), not
    # bernoulli(tensor of p) (uniforms in the tensor's dtype), which differs for float32.
    keep = _C._full(tuple(mask_shape), 0.0, input.dtype).bernoulli_(1.0 - p)
    b = (keep - 1.0) * (alpha * a) + alpha * a * p
    return input * (keep * a) + b


def alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor:
    """Dropout for SELU networks: dropped elements are set to SELU's negative saturation and the
    result is scaled and shifted so that mean and variance are kept."""
    out = _alpha_dropout("alpha_dropout", input, p, training, _tensor_input("alpha_dropout", input).shape)
    return _written_back(input, out, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False) -> Tensor:
    """:func:`alpha_dropout` of whole channels: one draw per (sample, channel) of an (N, C, ...) input."""
    _tensor_input("feature_alpha_dropout", input)
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    return _written_back(input, _alpha_dropout("feature_alpha_dropout", input, p, training, shape), inplace)


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


wrap_public(globals(), __all__)
