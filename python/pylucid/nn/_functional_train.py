"""Functional training ops: softmax, log_softmax, the losses, embedding and dropout.

Each is one fused C++ op with its own backward node (``y.grad_fn``); these wrappers only hold
PyTorch's signatures and defaults. Under ``pylucid.autocast`` softmax, log_softmax and every
loss compute in float32 (float64 stays float64) and return float32; gradients come back in
each input's own dtype.
"""

import warnings

from .. import _C
from .._C import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import no_grad

__all__ = [
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "dropout",
    "embedding",
    "l1_loss",
    "log_softmax",
    "mse_loss",
    "nll_loss",
    "softmax",
]


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's mapping of the deprecated ``size_average``/``reduce`` flags to ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  stacklevel=3)
    return reduction


def _softmax_dim(op, input, dim):
    """PyTorch's deprecated implicit dim (with its warning): 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is not None:
        return dim
    nd = input.dim() if isinstance(input, Tensor) else 0
    dim = 0 if nd in (0, 1, 3) else 1
    warnings.warn(f"Implicit dimension choice for {op} has been deprecated. Change the call to include dim=X as an "
                  "argument.", stacklevel=3)
    return dim


def _broadcast_target(input, target):
    """The elementwise losses broadcast a target of another shape against the input, warning as
    PyTorch does (a (N, 1) prediction against an (N,) target is the usual cause)."""
    if isinstance(input, Tensor) and isinstance(target, Tensor) and input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)
        from .._math_more import broadcast_tensors
        input, target = broadcast_tensors(input, target)
    return input, target


def _weighted(loss, weight, reduction, op):
    """PyTorch 2.13's ``weight`` of mse_loss/l1_loss: the elementwise loss times ``weight``."""
    from ._functional_loss_ext import _reduce
    return _reduce(op, loss * weight, reduction)


def _cast_for(input, dtype, op):
    if dtype is None:
        return input
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"{op}: input must be a Tensor, got {type(input).__name__}")
    return input.to(dtype)


def softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    """Softmax along ``dim``: ``exp(x) / exp(x).sum(dim)``, computed stably (row max subtracted).

    >>> import pylucid
    >>> x = pylucid.tensor([[1.0, 2.0, 3.0]])
    >>> pylucid.nn.functional.softmax(x, dim=-1).sum(-1).item()
    1.0

    With ``dtype`` the input is converted to it first (PyTorch's keyword). Without ``dim``,
    PyTorch's deprecated implicit choice applies (dim 0 for 0-, 1- and 3-d inputs, else 1), with
    its warning.
    """
    return _C._softmax(_cast_for(input, dtype, "softmax"), _softmax_dim("softmax", input, dim))


def log_softmax(input, dim=None, _stacklevel=3, dtype=None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed as ``x - max - log(sum(exp(x - max)))``.

    >>> import pylucid
    >>> x = pylucid.tensor([0.0, 0.0])
    >>> round(pylucid.nn.functional.log_softmax(x, dim=0)[0].item(), 4)
    -0.6931

    With ``dtype`` the input is converted to it first (PyTorch's keyword); without ``dim``, the
    implicit choice of :func:`softmax`.
    """
    return _C._log_softmax(_cast_for(input, dtype, "log_softmax"), _softmax_dim("log_softmax", input, dim))


def cross_entropy(
    input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0
) -> Tensor:
    """Cross entropy between logits and targets: fused ``log_softmax`` + ``nll_loss``.

    Args:
        input: logits of shape ``(N, C)``, ``(N, C, d1, ...)`` or unbatched ``(C,)``.
        target: int64 class indices of shape ``(N,)``, ``(N, d1, ...)`` or ``()``; or class
            probabilities (floating, the input's shape).
        weight: optional per-class weights of shape ``(C,)``.
        ignore_index: positions whose target equals it add nothing and are not counted by the
            mean (class-index targets only).
        reduction: ``'mean'`` (divided by the summed target weights), ``'sum'`` or ``'none'``.
        label_smoothing: in ``[0, 1]``; the target becomes ``(1 - eps) * onehot + eps / C``.
        size_average, reduce: PyTorch's deprecated spellings of ``reduction``.

    >>> import pylucid
    >>> logits = pylucid.tensor([[2.0, 0.0], [0.0, 2.0]])
    >>> target = pylucid.tensor([0, 1])
    >>> round(pylucid.nn.functional.cross_entropy(logits, target).item(), 4)
    0.1269
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C._cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean") -> Tensor:
    """Negative log likelihood of log-probabilities ``input`` at class indices ``target``.

    Shapes, ``weight``, ``ignore_index`` and ``reduction`` are as in :func:`cross_entropy`.

    >>> import pylucid
    >>> logp = pylucid.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> round(pylucid.nn.functional.nll_loss(logp, pylucid.tensor([0, 1])).item(), 4)
    0.3
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C._nll_loss(input, target, weight, ignore_index, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    """Mean squared error ``(input - target) ** 2`` (times ``weight`` when given), reduced by
    ``reduction``.

    A ``target`` of another shape is broadcast against ``input`` with PyTorch's warning (a
    ``(N, 1)`` prediction against an ``(N,)`` target gives an ``(N, N)`` loss, almost always a bug).

    >>> import pylucid
    >>> x, t = pylucid.tensor([1.0, 2.0]), pylucid.tensor([0.0, 0.0])
    >>> pylucid.nn.functional.mse_loss(x, t).item()
    2.5
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target = _broadcast_target(input, target)
    if weight is not None:
        return _weighted(_C._mse_loss(input, target, "none"), weight, reduction, "mse_loss")
    return _C._mse_loss(input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    """Mean absolute error ``|input - target|`` (times ``weight`` when given), reduced by
    ``reduction``; a target of another shape broadcasts as in :func:`mse_loss`.

    >>> import pylucid
    >>> x, t = pylucid.tensor([1.0, -3.0]), pylucid.tensor([0.0, 0.0])
    >>> pylucid.nn.functional.l1_loss(x, t).item()
    2.0
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target = _broadcast_target(input, target)
    if weight is not None:
        return _weighted(_C._l1_loss(input, target, "none"), weight, reduction, "l1_loss")
    return _C._l1_loss(input, target, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None) -> Tensor:
    """Binary cross entropy on logits, in the stable form
    ``(1 - t) * x + (1 + (pos_weight - 1) * t) * softplus(-x)``, times ``weight``.

    Args:
        input: logits, any shape.
        target: same shape as ``input``, values in ``[0, 1]``.
        weight: optional, broadcastable to ``input``'s shape.
        reduction: ``'mean'``, ``'sum'`` or ``'none'``.
        pos_weight: optional weight of positive examples, broadcastable to ``input`` (usually one
            per class, along the last dim).

    >>> import pylucid
    >>> x, t = pylucid.tensor([0.0, 0.0]), pylucid.tensor([1.0, 0.0])
    >>> round(pylucid.nn.functional.binary_cross_entropy_with_logits(x, t).item(), 4)
    0.6931
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _C._binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False) -> Tensor:
    """Look up rows of ``weight`` (``(num_embeddings, embedding_dim)``) at int64 indices ``input``
    (any shape); the result has shape ``input.shape + (embedding_dim,)``.

    The gradient is scatter-added into a dense gradient of ``weight``'s shape (repeated indices
    accumulate); the ``padding_idx`` row receives none. With ``max_norm``, the rows ``input``
    refers to are first renormalised in place (as PyTorch does) to a ``norm_type``-norm of at
    most ``max_norm``; with ``scale_grad_by_freq``, each row's gradient is divided by how often
    its index occurs in ``input``. Gradients are always dense, so ``sparse=True`` is refused.

    >>> import pylucid
    >>> w = pylucid.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> pylucid.nn.functional.embedding(pylucid.tensor([2, 0]), w).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    if sparse:
        raise _C.LucidError("embedding: sparse=True needs sparse gradients, which pylucid does not have; "
                            "use sparse=False (the gradient is dense)")
    out = _C._embedding(input, weight, padding_idx)  # validates the arguments before any renorm
    if max_norm is not None:
        for name, v in (("max_norm", max_norm), ("norm_type", norm_type)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _C.DtypeMismatch(f"embedding: {name} must be a number, got {type(v).__name__}")
        if input.dtype != _C.dtype.int64 or not weight.dtype.is_floating_point or weight.dim() != 2:
            raise _C.DtypeMismatch("embedding: max_norm needs int64 indices and a 2-D floating weight")
        _embedding_renorm_(weight, input, max_norm, norm_type)
        out = _C._embedding(input, weight, padding_idx)
    if scale_grad_by_freq and out.requires_grad:
        counts = _C.bincount(input.reshape(-1), minlength=weight.shape[0])
        out = _ScaleGrad.apply(out, (1.0 / counts.to(out.dtype).clamp(min=1))[input].unsqueeze(-1))
    return out


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """PyTorch's embedding_renorm_: each row of ``weight`` that ``input`` names and whose norm
    exceeds ``max_norm`` is scaled by ``max_norm / (norm + 1e-7)``, in place and unrecorded."""
    from .._math_ext import unique
    with no_grad():
        rows = unique(input.reshape(-1))
        sel = weight[rows]
        norms = sel.abs().pow(norm_type).sum(-1).pow(1.0 / norm_type)
        big = norms > max_norm
        if bool(big.any()):
            scale = max_norm / (norms[big] + 1e-7)
            weight[rows[big]] = sel[big] * scale.unsqueeze(-1)


class _ScaleGrad(Function):
    """Identity forward; the backward multiplies the gradient by ``scale``."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(scale)
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        (scale,) = ctx.saved_tensors
        return g * scale, None


def dropout(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Inverted dropout: zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``. The mask comes from the generator seeded by ``pylucid.manual_seed``;
    ``p == 0`` or ``training=False`` returns ``input`` itself, ``p == 1`` gives zeros.

    >>> import pylucid
    >>> x = pylucid.ones(1000)
    >>> y = pylucid.nn.functional.dropout(x, p=0.5)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """
    if isinstance(p, (int, float)) and not 0 <= p <= 1:  # PyTorch's ValueError (C++ checks the rest)
        from .._errors import InvalidValue
        raise InvalidValue(f"dropout: dropout probability has to be between 0 and 1, but got {p}")
    out = _C._dropout(input, p, training)
    if inplace and out is not input:  # PyTorch's inplace=True writes the result into input
        return input.copy_(out)
    return out
