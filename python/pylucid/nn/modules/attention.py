"""``MultiheadAttention`` with PyTorch's arguments, parameter names and layouts
(``in_proj_weight`` ``(3E, E)`` or ``q/k/v_proj_weight`` when ``kdim``/``vdim`` differ,
``in_proj_bias``, ``out_proj``), so ``state_dict``s load across. Without ``need_weights`` the
heads run through the fused ``scaled_dot_product_attention``; with it, the probabilities are
formed explicitly (they are returned)."""
import math

from ... import _C
from ..._tensor import empty, zeros
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear

__all__ = ["MultiheadAttention"]


def _float_mask(mask, name, dtype, layer):
    """PyTorch's _canonical_mask: a bool mask (True = masked out) becomes 0 / -inf in ``dtype``;
    a floating one is added as is."""
    if mask is None:
        return None
    if not isinstance(mask, _C.Tensor):
        raise _C.DtypeMismatch(f"{layer}: {name} must be a Tensor or None, got {type(mask).__name__}")
    if mask.dtype == _C.dtype.bool:
        return zeros(tuple(mask.shape), dtype=dtype).masked_fill(mask, float("-inf"))
    if not mask.is_floating_point():
        raise _C.DtypeMismatch(f"{layer}: only bool and floating types of {name} are supported, got {mask.dtype}")
    if mask.dtype != dtype:
        raise _C.DtypeMismatch(f"{layer}: {name} of dtype {mask.dtype} does not match the query's {dtype}")
    return mask


class MultiheadAttention(Module):
    r"""Multi-head attention: ``out_proj(concat_h softmax(Q_h K_h^T / sqrt(d) + M) V_h)`` with
    ``Q, K, V`` projected from ``query``, ``key``, ``value`` by one packed ``in_proj_weight``.

    Inputs are ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``) or unbatched ``(L, E)``.
    ``key_padding_mask`` ``(N, S)`` and ``attn_mask`` ``(L, S)`` or ``(N * num_heads, L, S)`` are
    bool (True = not attended) or floating (added to the scores). Returns ``(output, weights)``;
    ``weights`` is ``(N, L, S)`` (averaged over heads) or ``(N, num_heads, L, S)``, and None when
    ``need_weights=False``. ``add_bias_kv`` appends the learned ``bias_k``/``bias_v`` ``(1, 1, E)``
    as one more projected key and value; ``add_zero_attn`` then appends a zero key and value per
    head; both are always attended (the masks are padded), so ``S`` grows by one for each.

    >>> import pylucid
    >>> mha = MultiheadAttention(16, 4, batch_first=True)
    >>> x = pylucid.randn(2, 5, 16)
    >>> out, w = mha(x, x, x)
    >>> out.shape, w.shape
    (pylucid.Size([2, 5, 16]), pylucid.Size([2, 5, 5]))
    >>> list(mha.state_dict())
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        for name, v in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise _C.LucidError(f"MultiheadAttention: {name} must be a positive int, got {v!r}")
        if embed_dim % num_heads != 0:
            raise _C.ShapeMismatch(f"MultiheadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                                   f"({num_heads})")
        if device is not None and str(device) not in ("cpu", "cpu:0"):
            raise _C.LucidError(f"MultiheadAttention: pylucid runs on the CPU only, got device {device!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
            raise _C.LucidError(f"MultiheadAttention: dropout must be in [0, 1], got {dropout!r}")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = float(dropout)
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self.bias_k: Parameter | None
        self.bias_v: Parameter | None
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def _projections(self):
        E = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            return (w[:E], bq), (w[E:2 * E], bk), (w[2 * E:], bv)
        return (self.q_proj_weight, bq), (self.k_proj_weight, bk), (self.v_proj_weight, bv)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        name = "MultiheadAttention"
        for nm, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, _C.Tensor):
                raise _C.DtypeMismatch(f"{name}: {nm} must be a Tensor, got {type(t).__name__}")
        batched = query.ndim == 3
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise _C.ShapeMismatch(f"{name}: query, key and value must all be 3-D (batched) or 2-D (unbatched), "
                                   f"got shapes {tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}")
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        # From here on: (L, N, E), (S, N, kdim), (S, N, vdim).
        L, N, E = query.shape
        S = key.shape[0]
        H, d = self.num_heads, self.head_dim
        if E != self.embed_dim:
            raise _C.ShapeMismatch(f"{name}: was expecting embedding dimension of {self.embed_dim}, but got {E}")
        if key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            raise _C.ShapeMismatch(f"{name}: expected key/value feature sizes {self.kdim}/{self.vdim}, got "
                                   f"{key.shape[-1]}/{value.shape[-1]}")
        if key.shape[:2] != value.shape[:2] or key.shape[1] != N:
            raise _C.ShapeMismatch(f"{name}: key shape {tuple(key.shape)} does not match value shape "
                                   f"{tuple(value.shape)} or the query's batch {N}")
        if is_causal and attn_mask is None:
            raise _C.LucidError(f"{name}: need attn_mask if specifying the is_causal hint")
        dtype = query.dtype
        kpm = _float_mask(key_padding_mask, "key_padding_mask", dtype, name)
        am = _float_mask(attn_mask, "attn_mask", dtype, name)
        mask = None
        if am is not None:
            if am.ndim == 2:
                if tuple(am.shape) != (L, S):
                    raise _C.ShapeMismatch(f"{name}: the shape of the 2D attn_mask is {tuple(am.shape)}, but should "
                                           f"be {(L, S)}.")
                mask = am.reshape(1, 1, L, S)
            elif am.ndim == 3:
                if tuple(am.shape) != (N * H, L, S):
                    raise _C.ShapeMismatch(f"{name}: the shape of the 3D attn_mask is {tuple(am.shape)}, but should "
                                           f"be {(N * H, L, S)}.")
                mask = am.reshape(N, H, L, S)
            else:
                raise _C.ShapeMismatch(f"{name}: attn_mask's dimension {am.ndim} is not supported")
        if kpm is not None:
            if tuple(kpm.shape) != (N, S):
                raise _C.ShapeMismatch(f"{name}: expected key_padding_mask of shape {(N, S)}, got {tuple(kpm.shape)}")
            k4 = kpm.reshape(N, 1, 1, S)
            mask = k4 if mask is None else mask + k4
        (wq, bq), (wk, bk), (wv, bv) = self._projections()
        kp, vp = F.linear(key, wk, bk), F.linear(value, wv, bv)  # (S, N, E)
        extra = 0  # key positions appended after the S given ones, always attended
        if self.bias_k is not None and self.bias_v is not None:
            # PyTorch appends the learned bias_k / bias_v as one more projected key and value
            kp = _C.cat([kp, self.bias_k.expand(1, N, E)])
            vp = _C.cat([vp, self.bias_v.expand(1, N, E)])
            extra += 1
        # (L, N, E) -> (N, H, L, d)
        q = F.linear(query, wq, bq).reshape(L, N, H, d).permute(1, 2, 0, 3)
        k = kp.reshape(S + extra, N, H, d).permute(1, 2, 0, 3)
        v = vp.reshape(S + extra, N, H, d).permute(1, 2, 0, 3)
        if self.add_zero_attn:  # and a zero key and value per head, after the projections
            z = zeros((N, H, 1, d), dtype=k.dtype)
            k, v = _C.cat([k, z], 2), _C.cat([v, z], 2)
            extra += 1
        if extra and mask is not None:
            mask = F.pad(mask, (0, extra))
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:
            scores = (q * math.sqrt(1.0 / d)) @ k.transpose(-2, -1)
            if mask is not None:
                scores = scores + mask
            weights = F.softmax(scores, dim=-1)
            if p > 0:  # PyTorch returns the weights after dropout (what multiplied v)
                weights = F.dropout(weights, p)
            out = weights @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        out = F.linear(out.permute(2, 0, 1, 3).reshape(L, N, E), self.out_proj.weight, self.out_proj.bias)
        if weights is not None and average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights
