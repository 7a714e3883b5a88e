"""``Bilinear``, ``EmbeddingBag``, ``Unfold``, ``Fold``, ``GaussianNLLLoss``, ``PoissonNLLLoss``,
``MultiLabelSoftMarginLoss``, ``MultiMarginLoss``, ``LocalResponseNorm``, ``ChannelShuffle`` and
``Softmax2d``: the modules over the functions of the same names in ``pylucid.nn.functional``, with
PyTorch's parameters, initialisation and options."""
import math

from ... import _C
from ..._tensor import empty
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..module import Module
from .dropout import _DropoutNd
from ..parameter import Parameter
from .loss import _Loss

__all__ = ["AlphaDropout", "FeatureAlphaDropout", "MultiLabelMarginLoss", "Bilinear", "ChannelShuffle", "EmbeddingBag", "Fold", "GaussianNLLLoss", "LocalResponseNorm",
           "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "Softmax2d", "Unfold"]


class Bilinear(Module):
    """``y = x1^T A x2 + b``: ``weight`` ``(out_features, in1_features, in2_features)`` and
    ``bias`` ``(out_features,)``, both U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    >>> import pylucid
    >>> Bilinear(3, 4, 2)(pylucid.ones(5, 3), pylucid.ones(5, 4)).shape
    pylucid.Size([5, 2])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Re-draw weight then bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class EmbeddingBag(Module):
    """Sums, means (default) or maxes of bags of embedding rows, without building the
    ``(N, bag, D)`` lookup first; ``weight`` ``(num_embeddings, embedding_dim)`` is N(0, 1) with
    the ``padding_idx`` row zero. See :func:`pylucid.nn.functional.embedding_bag`."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise _C.ShapeMismatch(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise _C.IndexOutOfRange(f"EmbeddingBag: padding_idx {padding_idx} must be within the embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype, device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise _C.ShapeMismatch("EmbeddingBag: shape of weight does not match num_embeddings and "
                                       "embedding_dim")
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        """Re-draw the table from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag over the 2-d tensor ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.dim() != 2:
            raise _C.ShapeMismatch("EmbeddingBag.from_pretrained: embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings, include_last_offset,
                  padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        s += f", mode='{self.mode}'"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


class Unfold(Module):
    """Extracts sliding blocks as columns; see :func:`pylucid.nn.functional.unfold`."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """Sums columns of sliding blocks back into an image; see :func:`pylucid.nn.functional.fold`."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood, ``forward(input, target, var)``; see
    :func:`pylucid.nn.functional.gaussian_nll_loss`."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood; see :func:`pylucid.nn.functional.poisson_nll_loss`."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """See :func:`pylucid.nn.functional.multilabel_soft_margin_loss`."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiMarginLoss(_Loss):
    """See :func:`pylucid.nn.functional.multi_margin_loss`."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise _C.ShapeMismatch("MultiMarginLoss: only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class LocalResponseNorm(Module):
    """See :func:`pylucid.nn.functional.local_response_norm`."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class ChannelShuffle(Module):
    """See :func:`pylucid.nn.functional.channel_shuffle`."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"


class Softmax2d(Module):
    """Softmax over the channels of ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise _C.ShapeMismatch(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the self-normalising property of SELU networks while ``training``;
    see :func:`pylucid.nn.functional.alpha_dropout`. As PyTorch's, the module ignores ``inplace``
    (the functional form honours it)."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """:class:`AlphaDropout` of whole channels; see :func:`pylucid.nn.functional.feature_alpha_dropout`."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss; see :func:`pylucid.nn.functional.multilabel_margin_loss`."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)
