"""``Dropout``: zeroes elements with probability p in training mode, scaling the rest by 1/(1-p)."""
from ... import _C
from .. import functional as F
from ..module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """Randomly zeroes elements with probability ``p`` while ``training`` (identity in eval
    mode); kept elements are scaled by ``1/(1-p)`` so the expectation is unchanged. Masks come
    from the generator seeded by :func:`pylucid.manual_seed`."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise _C.LucidError(f"Dropout: dropout probability has to be between 0 and 1, but got {p!r}")
        if inplace:
            raise _C.LucidError("Dropout: inplace=True is not supported")
        self.p = float(p)
        self.inplace = False

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
