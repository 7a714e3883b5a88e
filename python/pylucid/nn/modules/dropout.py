"""``Dropout`` (elementwise) and ``Dropout1d`` / ``Dropout2d`` (whole channels): zero with
probability p in training mode, scaling the rest by 1/(1-p)."""
from ..._errors import InvalidValue
from .. import functional as F
from ..module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d"]


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        name = type(self).__name__
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise InvalidValue(f"{name}: dropout probability has to be between 0 and 1, but got {p!r}")
        self.p = float(p)
        self.inplace = bool(inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Randomly zeroes elements with probability ``p`` while ``training`` (identity in eval
    mode); kept elements are scaled by ``1/(1-p)`` so the expectation is unchanged. Masks come
    from the generator seeded by :func:`pylucid.manual_seed`."""

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, L)`` or unbatched ``(C, L)`` inputs with probability
    ``p`` while ``training``, scaling the kept ones by ``1/(1-p)``; see
    :func:`pylucid.nn.functional.dropout1d`.

    >>> import pylucid
    >>> Dropout1d(0.5).eval()(pylucid.ones(2, 3, 4)).shape
    pylucid.Size([2, 3, 4])
    """

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole feature maps of ``(N, C, H, W)`` inputs with probability ``p`` while
    ``training``, scaling the kept ones by ``1/(1-p)``; see :func:`pylucid.nn.functional.dropout2d`
    (a 3-D input is read as ``(N, C, L)``, as PyTorch).

    >>> import pylucid
    >>> Dropout2d(0.2)
    Dropout2d(p=0.2, inplace=False)
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
