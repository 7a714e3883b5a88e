"""Lazy layers: ``LazyLinear``, ``LazyConv1d``, ``LazyConv2d``, whose input size (``in_features``
or ``in_channels``) is read from the first input. Until then the parameters are empty
placeholders and the layer prints with a size of 0; the first forward fills the same
Parameter objects in place (so an optimizer built before it keeps working), initialised as the
eager layer would be at that moment (the same random draws as PyTorch's lazy layers), and the
module becomes a plain ``Linear`` / ``Conv1d`` / ``Conv2d``."""
from typing import Any

from ... import _C
from ..._tensor import empty
from ...autograd.grad_mode import no_grad
from ...random import fork_rng
from ..module import Module
from ..parameter import Parameter
from .conv import Conv1d, Conv2d
from .linear import Linear

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d"]


class _LazyMixin(Module):
    """Placeholders now, the eager layer's parameters on the first forward."""

    cls_to_become: type
    weight: Any

    def _eager(self, x) -> Any:
        raise NotImplementedError

    def _make_lazy(self, dtype):
        for name in ("weight", "bias"):
            if self._parameters.get(name) is not None:
                self._parameters[name] = Parameter(empty(0, dtype=dtype))
        self._lazy_hook = self.register_forward_pre_hook(type(self)._materialize)

    def has_uninitialized_params(self):
        """True until the first forward has given the parameters their shapes."""
        return self.weight.numel() == 0 and "_lazy_hook" in self.__dict__

    def _materialize(self, args):
        if not args or not isinstance(args[0], _C.Tensor):
            raise _C.DtypeMismatch(f"{type(self).__name__}: expected a Tensor input")
        eager = self._eager(args[0])
        with no_grad():
            for name in ("weight", "bias"):
                p = self._parameters.get(name)
                if p is not None:
                    p.data = eager._parameters[name].detach()
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
    _eager_cls: Any
    _dims: int

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        args = dict(out_channels=out_channels, kernel_size=kernel_size, stride=stride, padding=padding,
                    dilation=dilation, groups=groups, bias=bias, padding_mode=padding_mode, device=device, dtype=dtype)
        with fork_rng():
            self._eager_cls.__init__(self, groups, **args)
        self._lazy_args = args
        self.in_channels = 0
        self._make_lazy(dtype)

    def _eager(self, x):
        batched = x.dim() == self._dims + 2
        if x.dim() not in (self._dims + 1, self._dims + 2):
            raise _C.ShapeMismatch(f"{type(self).__name__}: expected a {self._dims + 1}-D or {self._dims + 2}-D input, "
                                   f"got {x.dim()}-D")
        return self._eager_cls(x.shape[1 if batched else 0], **self._lazy_args)


class LazyConv1d(_LazyConv, Conv1d):
    """``Conv1d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv1d
    _eager_cls = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """``Conv2d`` with ``in_channels`` inferred from the first input."""

    cls_to_become = Conv2d
    _eager_cls = Conv2d
