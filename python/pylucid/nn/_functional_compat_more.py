"""More of ``torch.nn.functional``: the in-place activation spellings (``leaky_relu_``,
``elu_``, ``hardtanh_``, ...), ``pdist``, power-average pooling (``lp_pool1d``/``lp_pool2d``),
max-unpooling (``max_unpool1d``/``max_unpool2d``, the inverse of ``max_pool*d(...,
return_indices=True)``) and ``triplet_margin_with_distance_loss``."""
import math

from .. import _C
from .._C import Tensor
from ._functional_act_ext import celu, elu, hardtanh, leaky_relu, pairwise_distance, selu, threshold
from ._functional_activation import relu
from ._functional_pool import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d

def _t(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor for {name}, got {type(x).__name__}")
    return x


def _real(v, op, name):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _C.DtypeMismatch(f"{op}: {name} must be a number, got {type(v).__name__}")
    return float(v)


__all__ = ["relu_", "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_", "threshold_", "pdist", "lp_pool1d",
           "lp_pool2d", "max_unpool1d", "max_unpool2d", "triplet_margin_with_distance_loss"]


def relu_(input) -> Tensor:
    """In-place ``relu``."""
    return relu(input, inplace=True)


def leaky_relu_(input, negative_slope=0.01) -> Tensor:
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu_(input, alpha=1.0) -> Tensor:
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def selu_(input) -> Tensor:
    """In-place ``selu``."""
    return selu(input, inplace=True)


def celu_(input, alpha=1.0) -> Tensor:
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0) -> Tensor:
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold_value, value) -> Tensor:
    """In-place ``threshold``."""
    return threshold(input, threshold_value, value, inplace=True)


def pdist(input, p=2) -> Tensor:
    """The p-norm distances between every pair of rows of the 2-D ``input`` (``N x M``): the upper
    triangle of ``cdist(input, input)`` (without the diagonal), row by row, ``N(N-1)/2`` values."""
    from .._math_extra import triu_indices
    from ..linalg import vector_norm
    if _t(input, "pdist").dim() != 2:
        raise _C.ShapeMismatch(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"pdist: expected a floating tensor, got {input.dtype!r}")
    p = _real(p, "pdist", "p")
    if p < 0:
        raise _C.LucidError(f"pdist only supports non-negative p values, got {p}")
    n = input.shape[0]
    i, j = triu_indices(n, n, 1)
    return vector_norm(input[i] - input[j], p, dim=1)


def _pair(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """Power-average pooling: ``(sum over the window of x ** p) ** (1 / p)``, as PyTorch computes
    it (through ``avg_pool2d``; ``p = inf`` is max pooling of ``|x|``)."""
    _t(input, "lp_pool2d")
    norm_type = _real(norm_type, "lp_pool2d", "norm_type")
    kw, kh = _pair(kernel_size, 2)
    if norm_type == math.inf:
        return max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kw * kh).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False) -> Tensor:
    """1-D power-average pooling (see :func:`lp_pool2d`)."""
    _t(input, "lp_pool1d")
    norm_type = _real(norm_type, "lp_pool1d", "norm_type")
    if norm_type == math.inf:
        return max_pool1d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool1d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


def _unpool(input, indices, kernel_size, stride, padding, output_size, n, op):
    _t(input, op)
    if _t(indices, op, "indices").dtype != _C.dtype.int64:
        raise _C.DtypeMismatch(f"{op}: indices must be int64, got {indices.dtype!r}")
    if input.dim() < n + 1:
        raise _C.ShapeMismatch(f"{op}: expected an input with at least {n + 1} dims, got {input.dim()}")
    if indices.shape != input.shape:
        raise _C.ShapeMismatch(f"{op}: expected indices of the input's shape {list(input.shape)}, got "
                               f"{list(indices.shape)}")
    k = _pair(kernel_size, n)
    s = _pair(stride if stride is not None else kernel_size, n)
    p = _pair(padding, n)
    for name, v in (("kernel_size", k), ("stride", s), ("padding", p)):
        if len(v) != n or any(isinstance(e, bool) or not isinstance(e, int) for e in v):
            raise _C.DtypeMismatch(f"{op}: {name} must be an int or {n} ints, got {v!r}")
    spatial = tuple((input.shape[-n + d] - 1) * s[d] - 2 * p[d] + k[d] for d in range(n))
    if output_size is not None:
        if not isinstance(output_size, (tuple, list)) or len(output_size) < n or \
                any(isinstance(e, bool) or not isinstance(e, int) for e in output_size):
            raise _C.DtypeMismatch(f"{op}: output_size must be a sequence of ints, got {output_size!r}")
        spatial = tuple(output_size)[-n:]
    if any(v <= 0 for v in spatial):
        raise _C.ShapeMismatch(f"{op}: the output size {spatial} must be positive")
    lead = tuple(input.shape[:-n])
    planes = input.reshape(*lead, -1)
    idx = indices.reshape(*lead, -1)
    size = math.prod(spatial)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise _C.IndexOutOfRange(f"{op}: found an invalid max index {int(idx.max())} (output volumes are of size "
                                 f"{'x'.join(map(str, spatial))})")
    out = _C._full(lead + (size,), 0.0, input.dtype).scatter(-1, idx, planes)
    return out.reshape(*lead, *spatial)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool2d(..., return_indices=True)``: each value is put back at
    its index in a zero plane of size ``(H_in - 1) * stride - 2 * padding + kernel_size`` (or
    ``output_size``); differentiable in ``input``."""
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    """The partial inverse of ``max_pool1d(..., return_indices=True)`` (see :func:`max_unpool2d`)."""
    return _unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with any distance ``d`` (default
    :func:`pairwise_distance`); with ``swap``, ``d(a, n)`` is replaced by ``min(d(a, n), d(p, n))``."""
    from ._functional_loss_ext import _reduce
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _t(t, "triplet_margin_with_distance_loss", name)
    if distance_function is not None and not callable(distance_function):
        raise _C.DtypeMismatch("triplet_margin_with_distance_loss: distance_function must be callable")
    margin = _real(margin, "triplet_margin_with_distance_loss", "margin")
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _C.minimum(d_neg, dist(positive, negative))
    return _reduce("triplet_margin_with_distance_loss", (margin + d_pos - d_neg).clamp_min(0), reduction)
