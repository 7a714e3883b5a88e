"""Activation modules: thin wrappers over the elementwise ops and ``softmax``/``log_softmax``."""
from ... import _C
from .. import functional as F
from ..module import Module

__all__ = ["GELU", "LogSoftmax", "ReLU", "SiLU", "Sigmoid", "Softmax", "Tanh"]


class ReLU(Module):
    """``max(x, 0)`` elementwise (``inplace=True`` overwrites the input)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """``x * Phi(x)``; ``approximate='tanh'`` uses the tanh approximation."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise _C.LucidError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return _C.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)`` (swish)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """``tanh(x)`` elementwise."""

    def forward(self, input):
        return _C.tanh(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise."""

    def forward(self, input):
        return _C.sigmoid(input)


class Softmax(Module):
    """``softmax(x, dim)``: exponentials normalised to sum to 1 along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log_softmax(x, dim)``, computed stably (x - logsumexp(x))."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"
