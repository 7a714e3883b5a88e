"""The rest of PyTorch's functional activations: ``leaky_relu``, ``elu``, ``softplus``, ``mish``,
``hardtanh``, ... (each one fused C++ elementwise op with its own backward node, see
``cpp/ops/activation.h``), and the few that are compositions: ``glu``, ``softmin``,
``normalize``, ``cosine_similarity``, ``pairwise_distance``.

``inplace=True`` overwrites ``input`` and returns it. When autograd tracks ``input`` the write is
recorded as in PyTorch: ``input``'s history moves onto the activation's node (a leaf that requires
grad is refused).

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> F.leaky_relu(pylucid.tensor([-1.0, 2.0]), 0.1).tolist()
[-0.10000000149011612, 2.0]
>>> F.hardtanh(pylucid.tensor([-3.0, 0.5, 3.0])).tolist()
[-1.0, 0.5, 1.0]
"""
from .. import _C
from .._C import Tensor

__all__ = [
    "celu", "cosine_similarity", "elu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
    "leaky_relu", "logsigmoid", "mish", "normalize", "pairwise_distance", "relu6", "selu", "softmin",
    "softplus", "softshrink", "softsign", "tanhshrink", "threshold",
]


def _can_write(input, op="activation"):
    """Whether an ``inplace=True`` activation may overwrite ``input`` with the raw kernel: yes
    unless autograd tracks it (then the write is recorded, see :func:`_maybe_inplace`). A leaf
    that requires grad is refused, as PyTorch refuses it."""
    if not isinstance(input, Tensor):
        return False
    return not _C._inplace_records(input, [], op)


def _maybe_inplace(input, inplace, op, a, b, out_of_place):
    """``out_of_place(t)`` computes the activation of ``t`` with autograd."""
    if inplace and isinstance(input, Tensor):
        if _can_write(input, op):
            return _C._activation_(input, op, a, b)
        # Recorded: computed from a copy of the old value (the node may save its input), then
        # written back with input's history moved onto the node.
        return _C._rebase_inplace(input, out_of_place(input.clone()), op)
    return out_of_place(input)


def leaky_relu(input, negative_slope=0.01, inplace=False) -> Tensor:
    """``x if x > 0 else negative_slope * x``, elementwise."""
    return _maybe_inplace(input, inplace, "leaky_relu", negative_slope, 0.0,
                          lambda t: _C._leaky_relu(t, negative_slope))


def elu(input, alpha=1.0, inplace=False) -> Tensor:
    """``x if x > 0 else alpha * (exp(x) - 1)``, elementwise."""
    return _maybe_inplace(input, inplace, "elu", alpha, 0.0, lambda t: _C._elu(t, alpha))


def selu(input, inplace=False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalising constants ``alpha = 1.6732632...``,
    ``scale = 1.0507009...``."""
    return _maybe_inplace(input, inplace, "selu", 0.0, 0.0, lambda t: _C._selu(t))


def celu(input, alpha=1.0, inplace=False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``, elementwise."""
    return _maybe_inplace(input, inplace, "celu", alpha, 0.0, lambda t: _C._celu(t, alpha))


def softplus(input, beta=1.0, threshold=20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, reverting to ``x`` where ``beta * x > threshold``.

    >>> import pylucid
    >>> round(softplus(pylucid.tensor([0.0])).item(), 4)
    0.6931
    """
    return _C._softplus(input, beta, threshold)


def logsigmoid(input) -> Tensor:
    """``log(sigmoid(x))``, computed without overflow as ``min(x, 0) - log1p(exp(-|x|))``."""
    return _C._logsigmoid(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False) -> Tensor:
    """``clamp(x, min_val, max_val)``; the gradient passes strictly inside ``(min_val, max_val)``."""
    return _maybe_inplace(input, inplace, "hardtanh", min_val, max_val,
                          lambda t: _C._hardtanh(t, min_val, max_val))


def relu6(input, inplace=False) -> Tensor:
    """``min(max(x, 0), 6)``: ``hardtanh(x, 0, 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def mish(input, inplace=False) -> Tensor:
    """``x * tanh(softplus(x))``, elementwise."""
    return _maybe_inplace(input, inplace, "mish", 0.0, 0.0, lambda t: _C._mish(t))


def hardsigmoid(input, inplace=False) -> Tensor:
    """``clamp(x / 6 + 1/2, 0, 1)``, elementwise."""
    return _maybe_inplace(input, inplace, "hardsigmoid", 0.0, 0.0, lambda t: _C._hardsigmoid(t))


def hardswish(input, inplace=False) -> Tensor:
    """``x * hardsigmoid(x)``, elementwise."""
    return _maybe_inplace(input, inplace, "hardswish", 0.0, 0.0, lambda t: _C._hardswish(t))


def softsign(input) -> Tensor:
    """``x / (1 + |x|)``, elementwise."""
    return _C._softsign(input)


def tanhshrink(input) -> Tensor:
    """``x - tanh(x)``, elementwise."""
    return _C._tanhshrink(input)


def threshold(input, threshold, value, inplace=False) -> Tensor:
    """``x if x > threshold else value``, elementwise."""
    return _maybe_inplace(input, inplace, "threshold", threshold, value,
                          lambda t: _C._threshold(t, threshold, value))


def hardshrink(input, lambd=0.5) -> Tensor:
    """``x if |x| > lambd else 0``, elementwise."""
    return _C._hardshrink(input, lambd)


def softshrink(input, lambd=0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    return _C._softshrink(input, lambd)


def _check_tensor(op, name, value):
    if not isinstance(value, Tensor):
        raise _C.DtypeMismatch(f"{op}: {name} must be a Tensor, got {type(value).__name__}")


def glu(input, dim=-1) -> Tensor:
    """Gated linear unit: split ``input`` in halves ``a, b`` along ``dim``; ``a * sigmoid(b)``.

    >>> import pylucid
    >>> glu(pylucid.tensor([[2.0, 0.0]])).tolist()
    [[1.0]]
    """
    _check_tensor("glu", "input", input)
    if input.ndim == 0:
        raise _C.LucidError("glu: does not support scalars (0-d tensors)")
    size = input.size(dim)
    if size % 2:
        raise _C.ShapeMismatch(f"glu: halving dimension must be even, but dimension {dim} is size {size} "
                               f"(input shape {list(input.shape)})")
    a, b = input.chunk(2, dim)
    return a * _C.sigmoid(b)


def softmin(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    """``softmax(-input, dim)``: weights that favour the smallest entries."""
    from ._functional_train import softmax

    _check_tensor("softmin", "input", input)
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:  # PyTorch's legacy implicit choice
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return softmax(-input, dim)


def _broadcast_shape(op, a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, j in zip(a, b):
        if i != j and 1 not in (i, j):
            raise _C.ShapeMismatch(f"{op}: shapes {list(a)} and {list(b)} cannot be broadcast together")
        out.append(j if i == 1 else i)
    return tuple(out)


def _clamped_below(t, eps):
    # The value of clamp_min(t, eps) with the gradient of t: PyTorch clamps the norms in
    # normalize/cosine_similarity but differentiates them unclamped.
    return t + (t.clamp_min(eps) - t).detach()


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None) -> Tensor:
    """``input / max(||input||_p, eps)`` with the norm taken along ``dim`` (kept for broadcast).

    >>> import pylucid
    >>> normalize(pylucid.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    _check_tensor("normalize", "input", input)
    if out is not None:
        raise _C.LucidError("normalize: out= is not supported")
    denom = _C.norm(input, p, dim, True).clamp_min(eps)
    return input / denom


def cosine_similarity(x1, x2, dim=1, eps=1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` (broadcast) along ``dim``:
    ``sum(x1/|x1| * x2/|x2|)`` with each norm clamped below at ``eps``, as PyTorch computes it.

    >>> import pylucid
    >>> cosine_similarity(pylucid.tensor([[1.0, 0.0]]), pylucid.tensor([[1.0, 1.0]])).tolist()
    [0.7071067690849304]
    """
    _check_tensor("cosine_similarity", "x1", x1)
    _check_tensor("cosine_similarity", "x2", x2)
    shape = _broadcast_shape("cosine_similarity", x1.shape, x2.shape)
    x1, x2 = x1.expand(*shape), x2.expand(*shape)
    n1 = _clamped_below(_C.norm(x1, 2, dim, True), eps)
    n2 = _clamped_below(_C.norm(x2, 2, dim, True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dim (PyTorch adds ``eps`` to the difference)."""
    _check_tensor("pairwise_distance", "x1", x1)
    _check_tensor("pairwise_distance", "x2", x2)
    return _C.norm(x1 - x2 + eps, p, -1, keepdim)
