"""Functional attention: ``scaled_dot_product_attention`` as one fused C++ op with its own
backward node (``y.grad_fn`` is a ``ScaledDotProductAttentionBackward``)."""

from .. import _C
from .._C import Tensor

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False) -> Tensor:
    r"""Attention ``softmax(query @ key.mT * scale + mask) @ value`` as one fused op.

    .. math::

        \mathrm{out} = \mathrm{softmax}\!\left(s\, Q K^\top + M\right) V, \qquad
        s = 1/\sqrt{E} \text{ unless given}

    The probabilities are never stored: the forward keeps the logsumexp of each row and the
    backward recomputes them block by block.

    Args:
        query: ``(*, L, E)``.
        key: ``(*, S, E)``.
        value: ``(*, S, Ev)``. The batch dims ``*`` of the three broadcast together.
        attn_mask: optional, broadcastable to ``(*, L, S)``: bool (``True`` = attend) or floating
            (added to the scores; the query's dtype). A query row with no attended key gives a
            zero output row and zero gradients, as PyTorch's CPU kernel.
        dropout_p: probability of dropping each attention probability (the kept ones are scaled
            by ``1 / (1 - dropout_p)``), drawn from the generator seeded by
            :func:`pylucid.manual_seed`. Pass ``0.0`` in evaluation.
        is_causal: query ``i`` attends only keys ``j <= i`` (top-left aligned when ``L != S``);
            combined with ``attn_mask`` when both are given.
        scale: the factor on ``query @ key.mT``; default ``1 / sqrt(E)``.
        enable_gqa: grouped-query attention: key and value may have fewer heads (dim -3) than
            the query, a divisor of its count; query head ``h`` uses key/value head
            ``h // (Hq // Hk)``.

    Returns:
        A tensor of shape ``(*, L, Ev)`` in the query's dtype (float16 and bfloat16 compute in
        float32).

    Raises:
        ShapeMismatch: inputs with fewer than 2 dims, mismatched ``E`` or ``S``, batch dims or a
            mask that do not broadcast.
        DtypeMismatch: non-floating or differing dtypes, a mask that is neither bool nor the
            query's dtype.
        LucidError: ``dropout_p`` outside ``[0, 1]``.

    >>> import pylucid
    >>> import pylucid.nn.functional as F
    >>> q = k = v = pylucid.ones(1, 2, 3, 4)
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
    pylucid.Size([1, 2, 3, 4])
    """
    if not _SDP_ENABLED["math"]:
        _check_flash_allowed(query, dropout_p)
    return _C._scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                            enable_gqa)


# The attention kernels PyTorch lets a script switch off (``nn.attention.sdpa_kernel``,
# ``backends.cuda.enable_math_sdp``...). pylucid's one kernel stands for "math" and the CPU "flash".
_SDP_ENABLED = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _check_flash_allowed(query, dropout_p):
    """With the math kernel switched off: raises as PyTorch's CPU dispatch does when the flash
    kernel is off too or cannot take these inputs (it needs 4-d inputs and no dropout)."""
    if not _SDP_ENABLED["flash"]:
        raise _C.LucidError("No viable backend for scaled_dot_product_attention was found. This is likely due "
                            "to turning off both the math kernel and the fused kernels.")
    if query.dim() != 4 or dropout_p > 0.0:
        raise _C.LucidError("No available kernel.  Aborting execution. (scaled_dot_product_attention: the "
                            f"flash kernel needs 4-d inputs and dropout_p=0, got {query.dim()}-d and "
                            f"dropout_p={dropout_p}; allow SDPBackend.MATH)")
