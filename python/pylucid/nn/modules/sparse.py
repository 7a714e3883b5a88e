"""``Embedding``: a lookup table of ``num_embeddings`` vectors of size ``embedding_dim``."""
from ... import _C
from ..._device import _check_device
from ..._tensor import empty
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """Maps int64 indices of any shape to rows of ``weight`` (shape ``(num_embeddings,
    embedding_dim)``, initialised N(0, 1)). Row ``padding_idx`` (if given) starts at zero and
    receives no gradient.

    >>> import pylucid
    >>> emb = Embedding(10, 3, padding_idx=0)
    >>> emb(pylucid.tensor([[0, 4], [9, 9]])).shape
    pylucid.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        for name, v in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                # A float size is the TypeError PyTorch raises; a negative one its RuntimeError.
                exc = _C.LucidError if isinstance(v, int) and not isinstance(v, bool) else _C.DtypeMismatch
                raise exc(f"Embedding: {name} must be a non-negative int, got {v!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise _C.IndexOutOfRange(f"Embedding: padding_idx {padding_idx} must be within "
                                         f"[-{num_embeddings}, {num_embeddings})")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        if sparse:
            raise _C.LucidError("Embedding: sparse=True needs sparse gradients, which pylucid does not have; "
                                "use sparse=False (the gradient is dense)")
        _check_device(device, "Embedding")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype), not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise _C.ShapeMismatch(f"Embedding: _weight has shape {list(_weight.shape)}, expected "
                                       f"[{num_embeddings}, {embedding_dim}]")
            self.weight = Parameter(_weight, not _freeze)

    def reset_parameters(self):
        """Re-draw the table from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0.0)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding holding a copy-free view of the 2-D tensor ``embeddings``."""
        if embeddings.ndim != 2:
            raise _C.ShapeMismatch(f"Embedding.from_pretrained: embeddings must be 2-D, got shape "
                                   f"{list(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings, _freeze=freeze)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        return s
