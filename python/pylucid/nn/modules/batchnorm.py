"""Batch, group and instance normalisation layers with PyTorch's arguments, defaults,
``state_dict`` keys (``weight``, ``bias``, ``running_mean``, ``running_var``,
``num_batches_tracked``) and ``repr``: ``BatchNorm1d/2d/3d``, ``GroupNorm``,
``InstanceNorm1d/2d/3d``."""
from ... import _C
from .. import _functional_batchnorm as F
from ..module import Module
from ..parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d"]


def _dtype(dtype):
    return _C.dtype.float32 if dtype is None else dtype


def _check_device(device, layer):
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise _C.LucidError(f"{layer}: pylucid runs on the CPU only, got device {device!r}")


def _count(name, v, layer, minimum=1):
    if isinstance(v, bool) or not isinstance(v, int):
        raise _C.DtypeMismatch(f"{layer}: {name} must be an int, got {type(v).__name__}")
    if v < minimum:
        raise _C.ShapeMismatch(f"{layer}: {name} must be at least {minimum}, got {v}")
    return v


class _NormBase(Module):
    """Parameters and running-statistics buffers shared by BatchNorm and InstanceNorm."""

    def __init__(self, num_features, eps, momentum, affine, track_running_stats, device, dtype, bias):
        super().__init__()
        layer = type(self).__name__
        _check_device(device, layer)
        self.num_features = _count("num_features", num_features, layer)
        if not eps >= 0:
            raise _C.ShapeMismatch(f"{layer}: eps must be >= 0, got {eps}")
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        dt = _dtype(dtype)
        shape = (num_features,)
        if affine:
            self.weight = Parameter(_C._full(shape, 1.0, dt))
            if bias:
                self.bias = Parameter(_C._full(shape, 0.0, dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C._full(shape, 0.0, dt))
            self.register_buffer("running_var", _C._full(shape, 1.0, dt))
            self.register_buffer("num_batches_tracked", _C._full((), 0, _C.dtype.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        """Reset ``running_mean`` to 0, ``running_var`` to 1 and ``num_batches_tracked`` to 0."""
        if self.track_running_stats:
            self.running_mean.fill_(0.0)
            self.running_var.fill_(1.0)
            self.num_batches_tracked.fill_(0)

    def reset_parameters(self):
        """Reset the running statistics, ``weight`` to 1 and ``bias`` to 0."""
        self.reset_running_stats()
        if self.affine:
            from ...autograd.grad_mode import no_grad

            with no_grad():
                self.weight.fill_(1.0)
                if self.bias is not None:
                    self.bias.fill_(0.0)

    def _check_input(self, input):
        layer = type(self).__name__
        if not isinstance(input, _C.Tensor):
            raise _C.DtypeMismatch(f"{layer}: expected a Tensor input, got {type(input).__name__}")
        if input.dim() not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise _C.ShapeMismatch(f"{layer}: expected {want} input, got {input.dim()}D input of shape "
                                   f"{tuple(input.shape)}")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    _dims: tuple = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias)

    def forward(self, input):
        """Normalise ``input`` with batch statistics (training) or the running ones (eval)."""
        self._check_input(input)
        layer = type(self).__name__
        if input.shape[1] != self.num_features:
            raise _C.ShapeMismatch(f"{layer}: expected input with {self.num_features} channels (dim 1), got "
                                   f"input of shape {tuple(input.shape)}")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum=None: a cumulative moving average, the k-th batch weighs 1/k
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    r"""Batch normalisation over a ``(N, C)`` or ``(N, C, L)`` input (PyTorch's ``BatchNorm1d``).

    .. math::

        y = \frac{x - \mathrm{E}[x]}{\sqrt{\mathrm{Var}[x] + \epsilon}} \cdot \gamma + \beta

    In training the statistics are the batch's (per channel, over ``N`` and ``L``; biased
    variance) and the running ones are updated with ``momentum`` (None: a cumulative average,
    using ``num_batches_tracked``) and the unbiased variance; in eval the running ones are used.
    One fused op (``BatchNormBackward``).

    Args:
        num_features: ``C``.
        eps: added to the variance. Default 1e-5.
        momentum: weight of the new batch statistic in the running average, or None. Default 0.1.
        affine: learnable ``weight`` (ones) and ``bias`` (zeros). Default True.
        track_running_stats: keep ``running_mean``, ``running_var`` and ``num_batches_tracked``;
            without them batch statistics are used in eval too. Default True.
        bias: with ``affine``, whether to learn the bias (keyword only). Default True.

    >>> import pylucid
    >>> bn = pylucid.nn.BatchNorm1d(2)
    >>> sorted(bn.state_dict())
    ['bias', 'num_batches_tracked', 'running_mean', 'running_var', 'weight']
    >>> y = bn(pylucid.tensor([[1.0, 2.0], [3.0, 6.0]]))
    >>> [round(v, 4) for v in bn.running_mean.tolist()], int(bn.num_batches_tracked)
    ([0.2, 0.4], 1)
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over a ``(N, C, H, W)`` input (PyTorch's ``BatchNorm2d``); arguments
    and behaviour as :class:`BatchNorm1d`, statistics per channel over ``N``, ``H`` and ``W``.

    >>> import pylucid
    >>> pylucid.nn.BatchNorm2d(3)(pylucid.randn(2, 3, 4, 4)).shape
    pylucid.Size([2, 3, 4, 4])
    """

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over a ``(N, C, D, H, W)`` input (PyTorch's ``BatchNorm3d``); as
    :class:`BatchNorm1d`.

    >>> import pylucid
    >>> pylucid.nn.BatchNorm3d(3)(pylucid.randn(2, 3, 2, 2, 2)).shape
    pylucid.Size([2, 3, 2, 2, 2])
    """

    _dims = (5,)


class _InstanceNorm(_NormBase):
    _dims: tuple = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias)

    def forward(self, input):
        """Normalise each (sample, channel) of ``input`` over its spatial positions."""
        self._check_input(input)
        layer = type(self).__name__
        unbatched = input.dim() == self._dims[0]
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features and self.affine:
            raise _C.ShapeMismatch(f"{layer}: expected input with {self.num_features} channels, got input of "
                                   f"shape {tuple(input.shape)}")
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    r"""Instance normalisation over ``(N, C, L)`` or unbatched ``(C, L)`` input (PyTorch's
    ``InstanceNorm1d``): each (sample, channel) is normalised over ``L``.

    Defaults as PyTorch: ``affine=False``, ``track_running_stats=False``. Without running
    statistics this is one fused ``group_norm`` node with one group per channel.

    >>> import pylucid
    >>> m = pylucid.nn.InstanceNorm1d(2)
    >>> [round(v, 4) for v in m(pylucid.tensor([[[1.0, 3.0], [0.0, 4.0]]])).tolist()[0][1]]
    [-1.0, 1.0]
    """

    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over ``(N, C, H, W)`` or unbatched ``(C, H, W)`` input (PyTorch's
    ``InstanceNorm2d``); as :class:`InstanceNorm1d`.

    >>> import pylucid
    >>> pylucid.nn.InstanceNorm2d(3)
    InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)`` input; as
    :class:`InstanceNorm1d`.

    >>> import pylucid
    >>> pylucid.nn.InstanceNorm3d(2)(pylucid.randn(1, 2, 2, 2, 2)).shape
    pylucid.Size([1, 2, 2, 2, 2])
    """

    _dims = (4, 5)


class GroupNorm(Module):
    r"""Group normalisation (PyTorch's ``GroupNorm``): the ``num_channels`` channels form
    ``num_groups`` consecutive groups, each normalised per sample over its channels and all
    spatial positions; then a per-channel affine map.

    Args:
        num_groups: number of groups; must divide ``num_channels``.
        num_channels: ``C``.
        eps: added to the variance. Default 1e-5.
        affine: learnable per-channel ``weight`` (ones) and ``bias`` (zeros). Default True.
        bias: with ``affine``, whether to learn the bias (keyword only). Default True.

    >>> import pylucid
    >>> gn = pylucid.nn.GroupNorm(2, 4)
    >>> gn
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> gn(pylucid.randn(3, 4, 5)).shape
    pylucid.Size([3, 4, 5])
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        layer = type(self).__name__
        _check_device(device, layer)
        _count("num_groups", num_groups, layer)
        _count("num_channels", num_channels, layer)
        if num_channels % num_groups != 0:
            raise _C.ShapeMismatch(f"{layer}: num_channels ({num_channels}) must be divisible by num_groups "
                                   f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dt = _dtype(dtype)
        if affine:
            self.weight = Parameter(_C._full((num_channels,), 1.0, dt))
            if bias:
                self.bias = Parameter(_C._full((num_channels,), 0.0, dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        """Normalise ``input`` ``(N, C, *)`` per sample and group."""
        if isinstance(input, _C.Tensor) and input.dim() >= 2 and input.shape[1] != self.num_channels:
            raise _C.ShapeMismatch(f"GroupNorm: expected input with {self.num_channels} channels (dim 1), got "
                                   f"input of shape {tuple(input.shape)}")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")
