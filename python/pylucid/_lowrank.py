"""Randomized low-rank SVD and PCA (PyTorch's ``torch.svd_lowrank`` and ``torch.pca_lowrank``),
Halko, Martinsson and Tropp's range finder with subspace iteration:

    R ~ N(0, 1) (n, q);  Q = qr(A R).Q;  niter times: Q = qr(A^T Q).Q, Q = qr(A Q).Q
    B = Q^T A = U' S V^T (thin SVD);  U = Q U'

(for a wide ``A`` the same on ``A^T`` with ``U`` and ``V`` swapped). The Gaussian sketch is drawn
with :func:`pylucid.randn` in the same order as PyTorch draws it, so a seeded program gets
PyTorch's factors. Written with differentiable ops (``qr``, ``svd``, products).
"""
from . import _C
from ._C import Tensor

__all__ = ["pca_lowrank", "svd_lowrank"]


def _mT(x):
    return x.transpose(-2, -1)


def _float_dtype(A):
    return A.dtype if A.dtype.is_floating_point else _C.dtype.float32


def _approximate_basis(A, q, niter, M):
    from ._random import randn
    from .linalg import qr
    R = randn(A.shape[-1], q, dtype=_float_dtype(A))
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = _mT(A) @ Q
        if M is not None:
            X = X - _mT(M) @ Q
        Q = qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = qr(X).Q
    return Q


def _check(A, op):
    if not isinstance(A, Tensor):
        raise _C.DtypeMismatch(f"{op}: A must be a Tensor, got {type(A).__name__}")
    if A.dim() < 2:
        raise _C.ShapeMismatch(f"{op}: A must have at least 2 dimensions, got shape {list(A.shape)}")


def svd_lowrank(A, q=6, niter=2, M=None):
    """``(U, S, V)`` with ``A - M ~ U diag(S) V^T`` of rank ``q`` (``U`` ``(*, m, q)``, ``S``
    ``(*, q)``, ``V`` ``(*, n, q)``); randomized, so seed the generator for repeatable results."""
    _check(A, "svd_lowrank")
    from .linalg import svd
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:
        A = _mT(A)
        M = _mT(M) if M is not None else None
    Q = _approximate_basis(A, q, niter, M)
    B = _mT(Q) @ A
    if M is not None:
        B = B - _mT(Q) @ M
    U, S, Vh = svd(B, full_matrices=False)
    V = _mT(Vh)
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def pca_lowrank(A, q=None, center=True, niter=2):
    """PCA of the data matrix ``A`` (``m`` samples by ``n`` features) through :func:`svd_lowrank`:
    ``(U, S, V)`` with the principal directions in ``V``'s columns and ``S**2 / (m - 1)`` the
    variances along them; ``q`` defaults to ``min(6, m, n)``, ``center`` subtracts the column means."""
    _check(A, "pca_lowrank")
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise _C.ShapeMismatch(f"pca_lowrank: q(={q}) must be non-negative integer and not greater than "
                               f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise _C.ShapeMismatch(f"pca_lowrank: niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(dim=-2, keepdim=True), q, niter=niter)
