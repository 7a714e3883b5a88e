"""Normalisation functions: ``rms_norm`` (with partial RMSNorm), ``group_rms_norm``, ``layer_norm``.

Each is one fused C++ op with a closed-form backward node (``RMSNormBackward``,
``GroupRMSNormBackward``, ``LayerNormBackward``). Arguments are validated in C++; these wrappers
only turn an int ``normalized_shape`` into a tuple and a list of group ids into a tensor.

Reference: Biao Zhang and Rico Sennrich, "Root Mean Square Layer Normalization", NeurIPS 2019,
arXiv:1910.07467.
"""
import operator

from .. import _C
from .._C import Tensor

__all__ = ["group_rms_norm", "layer_norm", "rms_norm"]


def _shape(normalized_shape):
    if isinstance(normalized_shape, (tuple, list)):
        return tuple(normalized_shape)
    if hasattr(normalized_shape, "__index__"):
        return (operator.index(normalized_shape),)
    return normalized_shape  # the C++ side names the op and the bad type


def _group_ids(channel_groups):
    if isinstance(channel_groups, Tensor):
        return channel_groups
    from .._tensor import tensor

    return tensor(channel_groups)


def rms_norm(input, normalized_shape, weight=None, eps=1e-6, partial_ratio=0.0) -> Tensor:
    r"""Root mean square normalisation over the trailing ``normalized_shape`` dims.

    Each slice ``x`` of the last ``len(normalized_shape)`` dims (flattened to ``N`` features) is
    divided by its root mean square and multiplied by the per-feature gain ``weight``:

    .. math::

        \mathrm{rms}(x) = \sqrt{\tfrac{1}{k}\textstyle\sum_{j<k} x_j^2 + \epsilon}, \qquad
        y_i = \frac{x_i}{\mathrm{rms}(x)}\, g_i

    Unlike LayerNorm nothing is centred and there is no bias. With ``partial_ratio`` ``p`` in
    ``(0, 1]`` the statistic comes from the first ``k = max(1, ceil(N * p))`` features only
    (partial RMSNorm, pRMSNorm, section 5 of the paper; 0.0625 is its recommended ratio) while
    every feature is scaled; ``p = 0`` means ``k = N``. The gradient is exact, including the
    path through the statistic for the first ``k`` features. Partial RMSNorm is an option of
    the same op: the graph records one ``RMSNormBackward`` whose ``k`` attribute says how many
    features fed the RMS.

    The op is fused: the input is read once and the output written once per row; statistics
    accumulate in float32 for float16/bfloat16/float32 inputs and in float64 for float64.
    Under :class:`pylucid.autocast` it runs in float32 and returns float32 (ForceFP32); outside
    it the result has the promoted dtype of ``input`` and ``weight``.

    Args:
        input: Tensor of shape ``(*, *normalized_shape)``, floating.
        normalized_shape: int or tuple of positive ints, equal to the trailing dims of ``input``.
        weight: gain of shape ``normalized_shape``, or None (no gain).
        eps: added to the mean square before the square root; must be >= 0. ``None`` takes
            PyTorch's choice, the machine epsilon of ``input``'s dtype (``finfo(dtype).eps``).
        partial_ratio: fraction of features the RMS is estimated from, in ``[0, 1]``.

    Returns:
        A Tensor of ``input``'s shape; its ``grad_fn`` is a
        :class:`pylucid.autograd.RMSNormBackward` when a gradient is recorded.

    Raises:
        ShapeMismatch: ``normalized_shape`` does not match the trailing dims of ``input``, has
            more dims than it, or holds a size < 1; ``weight``'s shape differs from it;
            ``eps < 0``; ``partial_ratio`` outside ``[0, 1]`` or NaN.
        DtypeMismatch: a non-floating ``input`` or ``weight``.

    >>> import pylucid
    >>> from pylucid.nn import functional as F
    >>> x = pylucid.tensor([[3.0, 4.0], [1.0, -1.0]])
    >>> [[round(v, 4) for v in row] for row in F.rms_norm(x, 2).tolist()]
    [[0.8485, 1.1314], [1.0, -1.0]]
    >>> y = F.rms_norm(x, (2,), weight=pylucid.tensor([1.0, 2.0]), partial_ratio=0.5)
    >>> [[round(v, 4) for v in row] for row in y.tolist()]
    [[1.0, 2.6667], [1.0, -2.0]]
    """
    if eps is None:  # PyTorch's eps=None: the machine epsilon of the input's dtype
        eps = _finfo_eps(input)
    return _C._rms_norm(input, _shape(normalized_shape), weight, eps, partial_ratio)


_EPS: dict = {}  # dtype -> finfo(dtype).eps, filled on first use (finfo costs microseconds per call)


def _finfo_eps(input):
    dtype = input.dtype if isinstance(input, Tensor) else None
    eps = _EPS.get(dtype)
    if eps is None:
        from .._compat_extra import _FLOATS, finfo
        if dtype not in _FLOATS:
            return 0.0  # the op itself reports the bad input
        eps = _EPS[dtype] = finfo(dtype).eps
    return eps


def group_rms_norm(input, channel_groups, weight=None, eps=1e-6) -> Tensor:
    r"""RMS normalisation within groups of channels.

    ``channel_groups[c]`` is the group id of channel ``c``; ids are ``0..G-1`` in any order
    (sorted, interleaved, groups of different sizes, single-channel groups). For an input of
    shape ``(B, C)`` or ``(B, C, 1)``, with :math:`n_g` the number of channels in group
    :math:`g`:

    .. math::

        \mathrm{rms}_{b,g} = \sqrt{\tfrac{1}{n_g}\textstyle\sum_{c \in g} x_{b,c}^2 + \epsilon},
        \qquad y_{b,c} = \frac{x_{b,c}}{\mathrm{rms}_{b,g(c)}}\, \gamma_{g(c)}

    On feature maps ``(B, C, *spatial)`` the statistic of a (sample, group) covers the group's
    channels at all spatial positions (``n_g * prod(spatial)`` values), which for ``(B, C, 1)``
    is the formula above. One fused op with a closed-form backward (``GroupRMSNormBackward``);
    ForceFP32 under autocast, like :func:`rms_norm`.

    Every id in ``0..max(channel_groups)`` must own at least one channel: an unused id would
    be a group with no channels whose gain never trains, so it is reported as an error.

    Args:
        input: Tensor of shape ``(B, C)`` or ``(B, C, *spatial)``, floating.
        channel_groups: the C group ids, a 1-D list, numpy array or int64 Tensor of ints >= 0.
        weight: one gain per group, shape ``(G,)``, or None.
        eps: added to each group's mean square; must be >= 0.

    Returns:
        A Tensor of ``input``'s shape.

    Raises:
        ShapeMismatch: ``input`` has fewer than 2 dims; ``channel_groups`` is empty,
            not 1-D, not integer, holds a negative id, leaves an id in ``0..G-1`` unused, or
            its length differs from ``C``; ``weight`` is not ``(G,)``; ``eps < 0``.
        DtypeMismatch: a non-floating ``input`` or ``weight``.

    >>> import pylucid
    >>> from pylucid.nn import functional as F
    >>> x = pylucid.tensor([[3.0, 1.0, 4.0, 1.0]])
    >>> [round(v, 4) for v in F.group_rms_norm(x, [0, 1, 0, 1]).tolist()[0]]
    [0.8485, 1.0, 1.1314, 1.0]
    """
    return _C._group_rms_norm(input, _group_ids(channel_groups), weight, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    r"""Layer normalisation over the trailing ``normalized_shape`` dims (PyTorch's ``layer_norm``).

    .. math::

        \mu = \tfrac{1}{N}\textstyle\sum_j x_j, \qquad
        \sigma^2 = \tfrac{1}{N}\textstyle\sum_j (x_j - \mu)^2, \qquad
        y_i = \frac{x_i - \mu}{\sqrt{\sigma^2 + \epsilon}}\, w_i + b_i

    Here to compare with :func:`rms_norm`, which drops the centring (the RMSNorm paper's
    baseline). One fused op (``LayerNormBackward``, saving the mean and reciprocal std);
    ForceFP32 under autocast.

    Args:
        input: Tensor of shape ``(*, *normalized_shape)``, floating.
        normalized_shape: int or tuple of positive ints, the trailing dims of ``input``.
        weight: scale of shape ``normalized_shape`` or None.
        bias: shift of shape ``normalized_shape`` or None.
        eps: added to the variance; must be >= 0.

    Returns:
        A Tensor of ``input``'s shape.

    Raises:
        ShapeMismatch: as :func:`rms_norm`, for ``weight`` and ``bias``.
        DtypeMismatch: a non-floating input, weight or bias.

    >>> import pylucid
    >>> from pylucid.nn import functional as F
    >>> [round(v, 4) for v in F.layer_norm(pylucid.tensor([1.0, 2.0, 3.0]), 3).tolist()]
    [-1.2247, 0.0, 1.2247]
    """
    return _C._layer_norm(input, _shape(normalized_shape), weight, bias, eps)
