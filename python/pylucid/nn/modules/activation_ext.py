"""The activation modules over ``pylucid.nn.functional``'s parametrised activations
(``LeakyReLU``, ``ELU``, ``Softplus``, ``Hardtanh``, ``Mish``, ...) and the distance modules
``CosineSimilarity``/``PairwiseDistance``, with PyTorch's arguments, defaults and reprs."""
from typing import Callable

from ... import _C
from ..._C import Tensor
from .. import functional as F
from ..module import Module

__all__ = [
    "CELU", "CosineSimilarity", "ELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "LeakyReLU", "LogSigmoid", "Mish", "PairwiseDistance", "ReLU6", "SELU", "Softmin", "Softplus",
    "Softshrink", "Softsign", "Tanhshrink", "Threshold",
]


def _inplace_suffix(inplace, lead=", "):
    return f"{lead}inplace=True" if inplace else ""


class LeakyReLU(Module):
    """``x if x > 0 else negative_slope * x``."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class ELU(Module):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(Module):
    """``scale * elu(x, alpha)`` with the self-normalising constants."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, "")


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed stably."""

    def forward(self, input):
        return F.logsigmoid(input)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        if max_val <= min_val:
            raise _C.LucidError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, "")


class _InplaceOnly(Module):
    _fn: Callable[..., Tensor]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.inplace)


class Mish(_InplaceOnly):
    """``x * tanh(softplus(x))``."""

    _fn = staticmethod(F.mish)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, "")


class Hardsigmoid(_InplaceOnly):
    """``clamp(x / 6 + 1/2, 0, 1)``."""

    _fn = staticmethod(F.hardsigmoid)


class Hardswish(_InplaceOnly):
    """``x * hardsigmoid(x)``."""

    _fn = staticmethod(F.hardswish)


class Softsign(Module):
    """``x / (1 + |x|)``."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``."""

    def forward(self, input):
        return F.tanhshrink(input)


class Threshold(Module):
    """``x if x > threshold else value``."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class Hardshrink(Module):
    """``x if |x| > lambd else 0``."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x -+ lambd`` outside ``[-lambd, lambd]``, else 0."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class GLU(Module):
    """Gated linear unit over ``dim``: ``a * sigmoid(b)`` for the two halves ``a, b``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(Module):
    """``softmax(-x, dim)``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim`` (see :func:`pylucid.nn.functional.cosine_similarity`)."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dim."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
