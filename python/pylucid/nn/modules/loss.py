"""Loss modules: each holds the options of its function in ``pylucid.nn.functional`` and calls
it in ``forward(input, target)``. Class weights are registered as buffers (they follow
``.to(dtype)`` and appear in ``state_dict``), as in PyTorch."""
from ... import _C
from .. import functional as F
from ..module import Module

__all__ = ["BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss"]

_REDUCTIONS = ("none", "mean", "sum")


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in _REDUCTIONS:
            raise _C.LucidError(f"{type(self).__name__}: reduction must be one of 'none', 'mean', 'sum', "
                                f"got {reduction!r}")
        self.reduction = reduction

    def extra_repr(self):
        return f"reduction={self.reduction!r}" if self.reduction != "mean" else ""


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between logits ``input`` (``(N, C)`` or ``(N, C, d1, ...)``) and class
    indices or class probabilities ``target``; see :func:`pylucid.nn.functional.cross_entropy`.

    >>> import pylucid
    >>> loss = CrossEntropyLoss()(pylucid.zeros(2, 4), pylucid.tensor([1, 3]))
    >>> round(loss.item(), 4)     # log(4)
    1.3863
    """

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(weight, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise _C.LucidError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)

    def extra_repr(self):
        parts = [super().extra_repr()]
        if self.ignore_index != -100:
            parts.append(f"ignore_index={self.ignore_index}")
        if self.label_smoothing:
            parts.append(f"label_smoothing={self.label_smoothing}")
        return ", ".join(p for p in parts if p)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices ``target`` under log-probabilities ``input``."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error ``(input - target)^2`` (reduced by ``reduction``)."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|`` (reduced by ``reduction``)."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy on logits, computed stably; ``pos_weight`` scales the positive term
    per class."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)
