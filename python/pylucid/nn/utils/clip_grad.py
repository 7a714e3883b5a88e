"""Gradient clipping: ``clip_grad_norm_`` (one fused C++ pass for the norm, one for the scaling)
and ``clip_grad_value_``."""
import math

from ... import _C
from ..._C import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm"]


def _grads(parameters, op):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    out = []
    for i, p in enumerate(parameters):
        if not isinstance(p, Tensor):
            raise _C.DtypeMismatch(f"{op}: expected Tensors, but item {i} is a {type(p).__name__}")
        if p.grad is not None:
            out.append(p.grad)
    return out


def _norm_type(norm_type, op):
    norm_type = float(norm_type)
    if not (norm_type > 0 or math.isinf(norm_type) and norm_type > 0):
        raise _C.LucidError(f"{op}: norm_type must be positive or inf, got {norm_type}")
    return norm_type


def get_total_norm(tensors, norm_type=2.0):
    """The ``norm_type``-norm of all ``tensors`` viewed as one vector (a 0-d tensor).

    Args:
        tensors: a Tensor or an iterable of Tensors (usually gradients).
        norm_type: the order of the norm, a positive number or ``inf`` (the largest absolute
            value). Default 2.

    Raises:
        LucidError: ``norm_type`` is not positive.

    >>> import pylucid
    >>> get_total_norm([pylucid.tensor([3.0]), pylucid.tensor([4.0])]).item()
    5.0
    >>> get_total_norm([pylucid.tensor([3.0, -4.0])], norm_type=float("inf")).item()
    4.0
    """
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    return _C._total_norm(list(tensors), _norm_type(norm_type, "get_total_norm"))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type``-norm
    (all gradients as one vector) is at most ``max_norm``; returns the norm before clipping as
    a 0-d tensor. The scale is ``max_norm / (total + 1e-6)`` when below 1, as in PyTorch.

    Args:
        parameters: a Tensor or an iterable of Tensors; those without a ``.grad`` are skipped.
        max_norm: the largest total norm the gradients may have after clipping.
        norm_type: the order of the norm, a positive number or ``inf``. Default 2.
        error_if_nonfinite: raise instead of scaling when the total norm is NaN or infinite.
        foreach: accepted for PyTorch's signature (it picks PyTorch's kernels); no effect.
            Default False.

    Returns:
        The total norm of the gradients before clipping, a 0-d tensor.

    Raises:
        LucidError: ``norm_type`` is not positive, or the total norm is not finite while
            ``error_if_nonfinite`` is True.
        DtypeMismatch: an item of ``parameters`` is not a Tensor.

    >>> import pylucid
    >>> w = pylucid.zeros(2, requires_grad=True)
    >>> (w * pylucid.tensor([3.0, 4.0])).sum().backward()
    >>> clip_grad_norm_([w], max_norm=1.0).item()
    5.0
    >>> [round(g, 4) for g in w.grad.tolist()]
    [0.6, 0.8]
    """
    grads = _grads(parameters, "clip_grad_norm_")
    return _C._clip_grad_norm_(grads, float(max_norm), _norm_type(norm_type, "clip_grad_norm_"),
                               bool(error_if_nonfinite))


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` into ``[-clip_value, clip_value]``, in place.

    Parameters without a ``.grad`` are skipped. Raises LucidError for a negative
    ``clip_value`` and DtypeMismatch for an item that is not a Tensor.

    >>> import pylucid
    >>> w = pylucid.zeros(3, requires_grad=True)
    >>> (w * pylucid.tensor([-5.0, 0.5, 2.0])).sum().backward()
    >>> clip_grad_value_([w], 1.0)
    >>> w.grad.tolist()
    [-1.0, 0.5, 1.0]
    """
    v = float(clip_value)
    if v < 0:
        raise _C.LucidError(f"clip_grad_value_: clip_value must be non-negative, got {v}")
    for g in _grads(parameters, "clip_grad_value_"):
        g.clamp_(-v, v)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_` (warns with PyTorch's FutureWarning)."""
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))`` in place, given the total
    norm computed earlier (e.g. by :func:`get_total_norm`); the second half of :func:`clip_grad_norm_`."""
    grads = _grads(parameters, "clip_grads_with_norm_")
    total = float(total_norm.item() if isinstance(total_norm, Tensor) else total_norm)
    coef = min(float(max_norm) / (total + 1e-6), 1.0)
    for g in grads:
        g.mul_(coef)
