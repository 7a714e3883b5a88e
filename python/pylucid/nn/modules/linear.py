"""``Linear``, ``Identity`` and ``Flatten``."""
import math

from ... import _C
from ..._tensor import empty
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["Flatten", "Identity", "Linear"]


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
    (5, 32)
    """

    def __init__(self, in_features, out_features, bias=True, dtype=None):
        super().__init__()
        for name, v in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise _C.LucidError(f"Linear: {name} must be a non-negative int, got {v!r}")
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
