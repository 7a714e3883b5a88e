"""``Linear``, ``Identity``, ``Flatten`` and ``Unflatten``."""
import math

from ... import _C
from ..._device import _check_device
from ..._tensor import empty
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["Flatten", "Identity", "Linear", "NonDynamicallyQuantizableLinear", "Unflatten"]


class Identity(Module):
    """Returns its input unchanged (a placeholder that accepts and ignores any arguments)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` over the last dim, through the fused ``pylucid.linear``.

    ``weight`` has shape ``(out_features, in_features)`` and is initialised as PyTorch does:
    ``kaiming_uniform_(a=sqrt(5))``, i.e. U(-1/sqrt(in_features), 1/sqrt(in_features)); ``bias``
    (shape ``(out_features,)``) is U(-1/sqrt(in_features), 1/sqrt(in_features)).

    >>> import pylucid
    >>> layer = Linear(2, 32)
    >>> layer
    Linear(in_features=2, out_features=32, bias=True)
    >>> layer(pylucid.ones(5, 2)).shape
    pylucid.Size([5, 32])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        _check_device(device, "Linear")
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                # A float size is the TypeError PyTorch raises; a negative one its RuntimeError.
                exc = _C.LucidError if isinstance(v, int) and not isinstance(v, bool) else _C.DtypeMismatch
                raise exc(f"Linear: {name} must be a non-negative int, got {v!r}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Re-draw weight and bias with the default initialisation."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return _C.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """The ``Linear`` that ``MultiheadAttention`` uses as ``out_proj`` (PyTorch names it so that
    its quantization tools leave it alone; here it is a plain ``Linear`` with that name)."""


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` into one (by default all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into ``unflattened_size`` (a tuple or list of ints; one may be -1):
    the inverse of :class:`Flatten`.

    >>> import pylucid
    >>> Unflatten(1, (2, 5))(pylucid.ones(3, 10)).shape
    pylucid.Size([3, 2, 5])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise _C.DtypeMismatch(f"Unflatten: dim must be an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(s, int) and not isinstance(s, bool) for s in unflattened_size):
            raise _C.DtypeMismatch(f"Unflatten: unflattened_size must be a tuple of ints, got {unflattened_size!r}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
