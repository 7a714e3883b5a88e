"""Functional activations and ``linear``: PyTorch's ``F.relu``, ``F.gelu``, ... over the C++ ops.

The ops themselves are the elementwise ones of ``pylucid`` (``pylucid.relu`` is ``F.relu``
without the ``inplace`` flag); these wrappers add PyTorch's functional signatures.

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> F.relu(pylucid.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""
from .. import _C
from .._C import Tensor

__all__ = ["gelu", "linear", "relu", "sigmoid", "silu", "tanh"]


def relu(input, inplace=False) -> Tensor:
    """``max(input, 0)`` elementwise; ``inplace=True`` overwrites ``input`` and returns it (recorded
    by autograd as in PyTorch; a leaf that requires grad is refused)."""
    return _C.relu_(input) if inplace and isinstance(input, Tensor) else _C.relu(input)


def gelu(input, approximate="none") -> Tensor:
    """``input * Phi(input)`` with the exact normal CDF, or its tanh approximation with
    ``approximate='tanh'``."""
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False) -> Tensor:
    """``input * sigmoid(input)`` (swish). ``inplace=True`` writes the result into ``input``
    and returns it (recorded by autograd, as :func:`relu`)."""
    if inplace and isinstance(input, Tensor):
        if not _C._inplace_records(input, [], "silu"):
            return input.copy_(_C.silu(input))
        return _C._rebase_inplace(input, _C.silu(input.clone()), "silu")
    return _C.silu(input)


def sigmoid(input) -> Tensor:
    """``1 / (1 + exp(-input))`` elementwise."""
    return _C.sigmoid(input)


def tanh(input) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return _C.tanh(input)


def linear(input, weight, bias=None) -> Tensor:
    """``input @ weight.T + bias`` in one gemm; ``weight`` is ``[out_features, in_features]``."""
    return _C.linear(input, weight, bias)
