"""LAPACK's Householder form of QR, as PyTorch exposes it: ``torch.geqrf`` (the reflectors below
the diagonal of ``a`` and ``R`` on and above it, with the scalars ``tau``), ``torch.orgqr`` (the
explicit ``Q``, which is ``linalg.householder_product``) and ``torch.ormqr`` (a product with
``Q`` or ``Q^T`` without forming it in the caller). ``geqrf`` runs LAPACK through numpy and, as
in PyTorch, has no gradient; ``orgqr`` and ``ormqr`` are written with pylucid ops and have
gradients of every order in the reflectors and ``tau``.
"""
import numpy as _np

from . import _C
from ._C import Tensor
from ._linalg_decomp import _matrix, _named, _out, householder_product

__all__ = ["geqrf", "orgqr", "ormqr"]

geqrf_type = _named("geqrf", ["a", "tau"])


def geqrf(input, *, out=None):
    """``(a, tau)``: the QR factorization of each matrix of ``input`` ``(*, m, n)`` in LAPACK's
    ``geqrf`` form (``R`` in the upper triangle of ``a``, the Householder vectors below it, ``tau``
    ``(*, min(m, n))``). Not differentiable, as in PyTorch."""
    _matrix(input, "geqrf")
    h, tau = _np.linalg.qr(input.detach().numpy(), mode="raw")
    a = _C._from_numpy(_np.ascontiguousarray(_np.swapaxes(h, -1, -2))).to(input.dtype)
    t = _C._from_numpy(_np.array(tau, order="C")).to(input.dtype)
    if input.requires_grad:
        a, t = _no_grad_outputs(input, a, t)
    return _out(geqrf_type(a, t), out)


def _no_grad_outputs(input, a, t):
    """geqrf's outputs carry a node whose backward raises PyTorch's error."""
    from .autograd.function import Function

    class Geqrf(Function):
        _builtin_node = "Geqrf"

        @staticmethod
        def forward(ctx, x):
            return a.clone(), t.clone()

        @staticmethod
        def backward(ctx, ga, gt):
            raise _C.LucidError("the derivative for 'geqrf' is not implemented.")

    return Geqrf.apply(input)


def orgqr(input, tau, *, out=None):
    """``torch.orgqr``: the first ``n`` columns of ``Q`` from :func:`geqrf`'s ``(a, tau)``; the
    same as ``linalg.householder_product``."""
    return householder_product(input, tau, out=out)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """``op(Q) @ other`` (``other @ op(Q)`` with ``left=False``), ``op(Q) = Q^T`` with
    ``transpose=True``, for the ``m x m`` ``Q`` of :func:`geqrf`'s ``(input, tau)``."""
    _matrix(input, "ormqr")
    _matrix(other, "ormqr")
    m, n = input.shape[-2], input.shape[-1]
    if (other.shape[-2] if left else other.shape[-1]) != m:
        raise _C.ShapeMismatch(f"ormqr: other of shape {list(other.shape)} does not match Q of order {m} "
                               f"({'rows' if left else 'columns'} expected {m})")
    if not isinstance(tau, Tensor) or tau.shape[-1] > min(m, n):
        raise _C.ShapeMismatch(f"ormqr: tau must be a Tensor of at most {min(m, n)} reflectors")
    if n < m:
        pad = _C._full((*input.shape[:-2], m, m - n), 0.0, input.dtype)
        input = _C.cat([input, pad], -1)
    elif n > m:
        input = input[..., :, :m]
    Q = householder_product(input, tau)
    Qop = Q.transpose(-2, -1) if transpose else Q
    return _out(Qop @ other if left else other @ Qop, out)
