"""Lazy layers: ``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d`` and
``LazyBatchNorm1d/2d/3d``, whose input size (``in_features``, ``in_channels`` or
``num_features``) is read from the first input. Until then the parameters and running
statistics are empty placeholders and the layer prints with a size of 0; the first forward
fills the same Parameter objects in place (so an optimizer built before it keeps working),
initialised as the eager layer would be at that moment (the same random draws as PyTorch's lazy
layers), and the module becomes the plain layer (``Linear``, ``Conv2d``, ``BatchNorm2d``, ...)."""
from typing import Any

from ... import _C
from ..._tensor import empty
from ...autograd.grad_mode import no_grad
from ...random import fork_rng
from ..module import Module
from ..parameter import Parameter
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyLinear"]

_LAZY_BUFFERS = ("running_mean", "running_var")


class _LazyMixin(Module):
    """Placeholders now, the eager layer's parameters on the first forward."""

    cls_to_become: Any  # the eager class (Linear, Conv2d, ...) the module turns into
    weight: Any

    def _eager(self, x) -> Any:
        raise NotImplementedError

    def _make_lazy(self, dtype):
        for name in ("weight", "bias"):
            if self._parameters.get(name) is not None:
                self._parameters[name] = Parameter(empty(0, dtype=dtype))
        for name in _LAZY_BUFFERS:
            if self._buffers.get(name) is not None:
                self._buffers[name] = empty(0, dtype=dtype)
        self._lazy_hook = self.register_forward_pre_hook(type(self)._materialize)

    def has_uninitialized_params(self):
        """True until the first forward has given the parameters (and running statistics) their shapes."""
        if "_lazy_hook" not in self.__dict__:
            return False
        held = [self._parameters.get(n) for n in ("weight", "bias")] + [self._buffers.get(n) for n in _LAZY_BUFFERS]
        return any(t is not None and t.numel() == 0 for t in held)

    def _materialize(self, args):
        if not args or not isinstance(args[0], _C.Tensor):
            raise _C.DtypeMismatch(f"{type(self).__name__}: expected a Tensor input")
        eager = self._eager(args[0])
        with no_grad():
            for name in ("weight", "bias"):
                p = self._parameters.get(name)
                if p is not None:
                    p.data = eager._parameters[name].detach()
            for name in _LAZY_BUFFERS:
                if self._buffers.get(name) is not None:
                    self._buffers[name] = eager._buffers[name]
        for k, v in eager.__dict__.items():
            if k not in ("_parameters", "_buffers", "_modules") and not k.startswith("_"):
                self.__dict__[k] = v
        self._lazy_hook.remove()
        del self.__dict__["_lazy_hook"]
        self.__class__ = self.cls_to_become


class LazyLinear(_LazyMixin, Linear):
    """``Linear`` with ``in_features`` inferred from the last dim of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        with fork_rng():
            Linear.__init__(self, 1, out_features, bias=bias, device=device, dtype=dtype)
        self.in_features = 0
        self._lazy_dtype = dtype
        self._make_lazy(dtype)

    def _eager(self, x):
        if x.dim() == 0:
            raise _C.ShapeMismatch("LazyLinear: the input needs at least one dim")
        return Linear(x.shape[-1], self.out_features, bias=self.bias is not None, dtype=self._lazy_dtype)


class _LazyConv(_LazyMixin):
    _dims: int

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        self._lazy_init(dict(out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=padding,
                             dilation=dilation, groups=groups, bias=bias, padding_mode=padding_mode, device=device,
                             dtype=dtype))

    def _lazy_init(self, args):
        # the eager layer with in_channels = groups (the smallest valid), its random draws discarded
        with fork_rng():
            self.cls_to_become.__init__(self, args["groups"], **args)
        self._lazy_args = args
        self.in_channels = 0
        self._make_lazy(args["dtype"])

    def _eager(self, x):
        batched = x.dim() == self._dims + 2
        if x.dim() not in (self._dims + 1, self._dims + 2):
            raise _C.ShapeMismatch(f"{type(self).__name__}: expected a {self._dims + 1}-D or {self._dims + 2}-D input, "
                                   f"got {x.dim()}-D")
        return self.cls_to_become(x.shape[1 if batched else 0], **self._lazy_args)


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """``Conv3d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv3d


class _LazyConvTranspose(_LazyConv):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        self._lazy_init({"out_channels": out_channels, "kernel_size": kernel_size, "stride": stride,
                         "padding": padding, "output_padding": output_padding, "groups": groups, "bias": bias,
                         "dilation": dilation, "padding_mode": padding_mode, "device": device, "dtype": dtype})


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """``ConvTranspose1d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """``ConvTranspose2d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """``ConvTranspose3d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = ConvTranspose3d


class _LazyBatchNorm(_LazyMixin):
    """Batch norm with ``num_features`` read from dim 1 of the first input: ones/zeros for the
    affine parameters and fresh running statistics, as the eager layer starts (no random draws)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        args = {"eps": eps, "momentum": momentum, "affine": affine, "track_running_stats": track_running_stats,
                "device": device, "dtype": dtype, "bias": bias}
        self.cls_to_become.__init__(self, 1, **args)
        self._lazy_args = args
        self.num_features = 0
        self._make_lazy(dtype)

    def _eager(self, x):
        if x.dim() < 2:
            raise _C.ShapeMismatch(f"{type(self).__name__}: expected an input with a channel dim (N, C, ...), got "
                                   f"{x.dim()}-D")
        return self.cls_to_become(x.shape[1], **self._lazy_args)


class LazyBatchNorm1d(_LazyBatchNorm, BatchNorm1d):
    """``BatchNorm1d`` with ``num_features`` inferred from the first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNorm, BatchNorm2d):
    """``BatchNorm2d`` with ``num_features`` inferred from the first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyBatchNorm, BatchNorm3d):
    """``BatchNorm3d`` with ``num_features`` inferred from the first input."""

    cls_to_become = BatchNorm3d
