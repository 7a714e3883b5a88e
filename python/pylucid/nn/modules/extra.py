"""Modules over :mod:`pylucid.nn._functional_extra`: ``Softmax2d``, ``LocalResponseNorm``,
``AlphaDropout``, ``FeatureAlphaDropout``, ``ChannelShuffle`` and the multi-class/multi-label
margin losses."""
from .. import functional as F
from ..module import Module
from .dropout import _DropoutNd
from .loss import _Loss, _WeightedLoss

__all__ = ["AlphaDropout", "ChannelShuffle", "FeatureAlphaDropout", "LocalResponseNorm", "MultiLabelMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "Softmax2d"]


class Softmax2d(Module):
    """Softmax over the channels of a (N, C, H, W) or (C, H, W) input, at each location."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class LocalResponseNorm(Module):
    """Local response normalisation across channels; see :func:`pylucid.nn.functional.local_response_norm`."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the self-normalising property of SELU networks while ``training``;
    see :func:`pylucid.nn.functional.alpha_dropout`."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """:class:`AlphaDropout` of whole channels; see :func:`pylucid.nn.functional.feature_alpha_dropout`."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


class ChannelShuffle(Module):
    """Interleaves ``groups`` groups of channels; see :func:`pylucid.nn.functional.channel_shuffle`."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss; see :func:`pylucid.nn.functional.multi_margin_loss`."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be a 1D tensor, got {weight.ndim}D")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss; see :func:`pylucid.nn.functional.multilabel_margin_loss`."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The multi-label logistic loss; see :func:`pylucid.nn.functional.multilabel_soft_margin_loss`."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)
