"""Normalisation layers: ``RMSNorm`` (and partial RMSNorm), ``GroupRMSNorm``, ``LayerNorm``.

Reference: Biao Zhang and Rico Sennrich, "Root Mean Square Layer Normalization", NeurIPS 2019,
arXiv:1910.07467.
"""
from ... import _C
from ..._device import _check_device
from .. import _functional_norm as F
from ..module import Module
from ..parameter import Parameter

__all__ = ["GroupRMSNorm", "LayerNorm", "RMSNorm"]


def _filled(shape, value, dtype=None):
    """A Parameter of ``shape`` (float32 unless ``dtype``) holding ``value`` everywhere (gains 1, biases 0)."""
    return Parameter(_C._full(tuple(shape), value, _C.dtype.float32 if dtype is None else dtype))


class RMSNorm(Module):
    r"""Root Mean Square Layer Normalization over the last dimension (or the trailing dims).

    .. math::

        y_i = g_i\, \frac{x_i}{\mathrm{RMS}(x)}, \qquad
        \mathrm{RMS}(x) = \sqrt{\tfrac{1}{n}\textstyle\sum_j x_j^2 + \epsilon}

    ``g`` is a learnable per-feature gain, initialised to one; there is no bias, as in the
    paper. RMSNorm drops LayerNorm's re-centring and keeps its re-scaling invariance, at less
    cost per element.

    With ``partial_ratio`` in ``(0, 1]`` this is pRMSNorm (section 5 of the paper): the RMS is
    estimated from the first ``k = max(1, ceil(dim * partial_ratio))`` features only, assuming
    the features of a layer are roughly i.i.d.; every feature is still scaled. The paper
    recommends 6.25%. Partial RMSNorm uses the same op and backward node as RMSNorm (the
    node's ``k`` says how many features fed the RMS).

    Args:
        dim: number of features (the size of the last dimension), or a tuple of trailing dims
            to normalise together.
        eps: added inside the square root for numerical stability. Default 1e-6; ``None`` is
            PyTorch's default, the machine epsilon of the input's dtype.
        partial_ratio: fraction of the features the RMS is estimated from. 0.0 (default)
            uses all of them (plain RMSNorm); a value in (0, 1] activates pRMSNorm.
        elementwise_affine: with False there is no gain (``weight`` is None), as PyTorch's.
        device, dtype: PyTorch's factory keywords for ``weight`` (the CPU only).

    Attributes:
        weight: the learnable gain, a Parameter of shape ``(dim,)`` (or ``dim`` when a tuple),
            initialised to 1.
        eps: the epsilon.
        partial_ratio: the fraction of features used for the RMS.
        normalized_shape: the normalised trailing dims, a tuple.

    The number of features used for the RMS is the property :attr:`k`.

    Raises:
        ShapeMismatch: ``dim`` holds a size <= 0, ``eps < 0`` or NaN, ``partial_ratio`` outside
            ``[0, 1]`` or NaN (at construction); at call time, an input whose trailing dims
            differ from ``dim``.

    Shape:
        Input ``(..., dim)``; output the same shape, normalised by its RMS and scaled by
        ``weight``.

    >>> import pylucid
    >>> norm = pylucid.nn.RMSNorm(4)
    >>> y = norm(pylucid.tensor([[1.0, 2.0, 3.0, 4.0]]))
    >>> [round(v, 4) for v in y.tolist()[0]]
    [0.3651, 0.7303, 1.0954, 1.4606]
    >>> pylucid.nn.RMSNorm(32, partial_ratio=0.0625)
    RMSNorm((32,), eps=1e-06, elementwise_affine=True, partial_ratio=0.0625, k=2)
    """

    def __init__(self, dim, eps=1e-6, partial_ratio=0.0, elementwise_affine=True, *, device=None, dtype=None):
        super().__init__()
        shape = F._shape(dim)
        _C._rms_norm_check(shape, 0.0 if eps is None else eps, partial_ratio)  # validation lives in C++
        _check_device(device, "RMSNorm")
        self.normalized_shape = tuple(shape)
        self.eps = None if eps is None else float(eps)
        self.partial_ratio = float(partial_ratio)
        self.elementwise_affine = bool(elementwise_affine)
        if self.elementwise_affine:
            self.weight = _filled(self.normalized_shape, 1.0, dtype)
        else:
            self.register_parameter("weight", None)

    @property
    def k(self):
        """How many features the RMS is estimated from, ``dim`` (the product of the dims) when
        ``partial_ratio`` is 0, else ``max(1, ceil(dim * partial_ratio))``. Follows
        ``partial_ratio`` if that is changed after construction."""
        return _C._rms_norm_check(self.normalized_shape, 0.0 if self.eps is None else self.eps, self.partial_ratio)

    def forward(self, x):
        """Apply (partial) RMS normalisation to ``x`` of shape ``(..., dim)``.

        Returns a tensor of ``x``'s shape, normalised by its RMS and scaled by ``weight``.
        """
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps, self.partial_ratio)

    def extra_repr(self):
        # PyTorch's form, then the partial variant's fields when it is on.
        s = f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        if self.partial_ratio > 0:
            s += f", partial_ratio={self.partial_ratio}, k={self.k}"
        return s


class GroupRMSNorm(Module):
    r"""RMS normalisation within each group of channels.

    Channels are assigned to groups by ``channel_groups``; the RMS is taken per (row, group)
    over that group's channels, without centring, which keeps it stable for small batches:

    .. math::

        \mathrm{rms}_{b,g} = \sqrt{\tfrac{1}{n_g}\textstyle\sum_{c \in g} x_{b,c}^2 + \epsilon},
        \qquad y_{b,c} = \gamma_{g(c)}\, \frac{x_{b,c}}{\mathrm{rms}_{b,g(c)}}

    Args:
        channel_groups: the group id of each channel, a list, numpy array or int64 Tensor; e.g.
            ``[0, 0, 1, 1, 2, 2]`` makes 3 groups of 2 channels. Ids are ``0..G-1`` in any order
            and groups may differ in size; every id up to the largest must be used.
        eps: added to each group's mean square. Default 1e-6.
        affine: if True (default), a learnable gain per group (no bias, since nothing is
            centred).

    Attributes:
        channel_groups: buffer, the ids as an int64 tensor of shape ``(C,)``.
        n_channels: buffer, the number of channels in each group, int64 of shape ``(G,)``.
        gamma: Parameter of shape ``(G,)`` initialised to 1, or None when ``affine`` is False.
        eps: the epsilon.

    Raises:
        ShapeMismatch: bad ``channel_groups`` (empty, not 1-D, not integers, a negative id, an
            unused id) or ``eps < 0`` at construction; at call time an input with fewer than 2
            dims or whose dim 1 is not C = ``len(channel_groups)``.

    Shape:
        Input ``(B, C)``, ``(B, C, 1)`` or a feature map ``(B, C, *spatial)`` (statistics per
        sample and group over the group's channels at all spatial positions); output the same
        shape.

    >>> import pylucid
    >>> g = pylucid.nn.GroupRMSNorm([0, 1, 0, 1, 1])
    >>> g.n_channels.tolist(), g.gamma.shape
    ([2, 3], pylucid.Size([2]))
    >>> g(pylucid.ones(3, 5, 1)).shape
    pylucid.Size([3, 5, 1])
    """

    def __init__(self, channel_groups, eps=1e-6, affine=True):
        super().__init__()
        ids, counts = _C._group_rms_norm_groups(F._group_ids(channel_groups), eps)
        self.register_buffer("channel_groups", ids)
        self.register_buffer("n_channels", counts)
        self.eps = float(eps)
        if affine:
            self.gamma = _filled((counts.shape[0],), 1.0)
        else:
            self.register_parameter("gamma", None)

    def forward(self, x):
        """Normalise ``x`` of shape ``(B, C)`` or ``(B, C, *spatial)`` by the RMS of each channel group."""
        return F.group_rms_norm(x, self.channel_groups, self.gamma, self.eps)

    def extra_repr(self):
        return (f"channels={self.channel_groups.shape[0]}, groups={self.n_channels.shape[0]}, "
                f"eps={self.eps}, affine={self.gamma is not None}")


class LayerNorm(Module):
    r"""Layer normalisation over the trailing ``normalized_shape`` dims (PyTorch's ``LayerNorm``).

    .. math::

        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot w + b

    with the biased variance. Kept beside :class:`RMSNorm` so the two can be compared, as the
    RMSNorm paper does.

    Args:
        normalized_shape: int or tuple, the trailing dims to normalise.
        eps: added to the variance. Default 1e-5.
        elementwise_affine: learnable ``weight`` (ones) and ``bias`` (zeros) of shape
            ``normalized_shape``. Default True.
        bias: with ``elementwise_affine``, whether to learn the bias. Default True.

    Attributes:
        weight: Parameter or None.
        bias: Parameter or None.
        normalized_shape: a tuple.
        eps: the epsilon.

    >>> import pylucid
    >>> ln = pylucid.nn.LayerNorm(3)
    >>> [round(v, 4) for v in ln(pylucid.tensor([[1.0, 2.0, 3.0]])).tolist()[0]]
    [-1.2247, 0.0, 1.2247]
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        _check_device(device, "LayerNorm")
        shape = F._shape(normalized_shape)
        _C._layer_norm_check(shape, eps)
        self.normalized_shape = tuple(shape)
        self.eps = float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        if elementwise_affine:
            self.weight = _filled(self.normalized_shape, 1.0, dtype)
            if bias:
                self.bias = _filled(self.normalized_shape, 0.0, dtype)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x):
        """Normalise ``x`` over its trailing ``normalized_shape`` dims."""
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
