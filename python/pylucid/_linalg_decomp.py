"""The matrix decompositions of ``torch.linalg``: ``cholesky`` (and ``cholesky_ex``), ``qr``,
``eigh``, ``eigvalsh``, ``svd``, ``svdvals``, ``pinv``, ``lstsq``, ``matrix_rank``, ``inv_ex``,
and the older top-level spellings ``torch.cholesky``, ``torch.svd``, ``torch.qr``,
``torch.pinverse``, ``torch.cholesky_solve`` and ``torch.cholesky_inverse``.

Forward: LAPACK through numpy, over batches (the same LAPACK routines PyTorch calls, so the same
signs of eigen- and singular vectors and of ``R``'s diagonal). Backward: the closed forms of the
literature written with pylucid ops (products, triangular parts, ``linalg.solve``), so every
decomposition has gradients of every order:

* Cholesky ``A = L L^T``: ``gA = L^-T S L^-1`` with ``S`` the symmetric matrix whose lower
  triangle is ``tril(L^T gL)`` with the diagonal halved (then halved again off it, so that
  ``S = (P + tril(P, -1)^T) / 2`` for ``P = tril(L^T gL)``).
* Symmetric eigen ``A = V diag(w) V^T``: ``gA = V (diag(gw) + F o skew(V^T gV)) V^T`` with
  ``F_ij = 1 / (w_j - w_i)`` (the eigenvalue gaps) and ``skew(X) = (X - X^T) / 2``.
* SVD ``A = U diag(s) V^T`` (the reduced factors): ``gA = U [(F o (U^T gU - gU^T U)) S +
  S (F o (V^T gV - gV^T V)) + diag(gs)] V^T + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)``
  with ``F_ij = 1 / (s_j^2 - s_i^2)``.
* QR ``A = Q R``: for ``m >= n``, ``gA = (gQ + Q copyltu(M)) R^-T`` with ``M = R gR^T - gQ^T Q``
  and ``copyltu(M) = tril(M) + tril(M, -1)^T``; for ``m < n`` the same on the leading square
  block, with ``gQ + Y gV^T`` for ``gQ`` and ``Q gV`` for the trailing columns ``Y``.
* Pseudo-inverse ``P = A^+``: ``gA = -P^T gP P^T + (I - A P) gP^T P P^T + P^T P gP^T (I - P A)``.

As in PyTorch, the gradient of a symmetric input (``cholesky``, ``eigh``) is the symmetric one,
and those of eigen- and singular vectors are only meaningful for losses that do not depend on
their signs; repeated eigen- or singular values give infinite gradients.
"""
import collections as _collections

import numpy as _np

from . import _C
from ._C import Tensor
from ._tensor import empty, eye, zeros
from ._tensor_str import return_type_repr

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv", "lstsq",
           "matrix_rank", "inv_ex", "matrix_exp", "householder_product", "solve_triangular", "matrix_norm", "linalg_matrix_power", "multi_dot", "cond", "vecdot",
           "cross", "diagonal"]


class LinAlgError(_C.LucidError):
    """PyTorch's ``torch.linalg.LinAlgError``: a decomposition or inversion could not be
    completed (a matrix that is not positive-definite, or singular). A RuntimeError."""


LinAlgError.__module__ = "pylucid.linalg"


def _named(name, fields):
    t = _collections.namedtuple(name, fields)  # type: ignore[misc]
    t.__module__ = "pylucid.return_types"
    setattr(t, "__repr__", return_type_repr)  # noqa: B010
    return t


linalg_cholesky_ex = _named("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex = _named("linalg_inv_ex", ["inverse", "info"])
linalg_qr = _named("linalg_qr", ["Q", "R"])
linalg_eigh = _named("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_svd = _named("linalg_svd", ["U", "S", "Vh"])
linalg_lstsq = _named("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
svd_type = _named("svd", ["U", "S", "V"])
qr_type = _named("qr", ["Q", "R"])


# ---- helpers -------------------------------------------------------------------------------

def _mT(x):
    return x.transpose(-2, -1)


def _matrix(A, op, square=False):
    if not isinstance(A, Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor, got {type(A).__name__}")
    if A.dtype not in (_C.dtype.float32, _C.dtype.float64):
        raise _C.DtypeMismatch(f"{op}: Expected a floating point tensor of dtype float32 or float64, got {A.dtype}")
    if A.dim() < 2:
        raise _C.ShapeMismatch(f"{op}: The input tensor A must have at least 2 dimensions, got shape {list(A.shape)}")
    if square and A.shape[-1] != A.shape[-2]:
        raise _C.ShapeMismatch(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                               f"{A.shape[-1]} matrices")


def _np_of(A):
    return A.detach().numpy()


def _T(a, like):
    # np.array(order="C") rather than ascontiguousarray, which turns a 0-d array into a 1-d one.
    return _C._from_numpy(_np.array(a, order="C")).to(like.dtype)


def _long(a):
    return _C._from_numpy(_np.array(a, dtype=_np.int64, order="C"))


def _solve(A, B):
    from .linalg import solve
    return solve(A, B)


def _diag_embed(v):
    from ._math_misc import diag_embed
    return diag_embed(v)


def _eye(n, like):
    return eye(n, dtype=like.dtype)


def _gap_inverse(w, square):
    """F with F_ij = 1 / (w_j - w_i) (or of the squares) off the diagonal and 0 on it."""
    v = w * w if square else w
    E = v.unsqueeze(-2) - v.unsqueeze(-1)
    n = w.shape[-1]
    I = _eye(n, w).bool()
    return (1.0 / E.masked_fill(I, 1.0)).masked_fill(I, 0.0)


def _batch_error(A, k, msg):
    prefix = f"(Batch element {k}): " if A.dim() > 2 else ""
    return prefix + msg


# ---- Cholesky ----------------------------------------------------------------------------

def _first_bad_minor(a):
    """The order (1-based) of the first leading minor of ``a`` that is not positive-definite."""
    for k in range(1, a.shape[-1] + 1):
        try:
            _np.linalg.cholesky(a[:k, :k])
        except _np.linalg.LinAlgError:
            return k
    return 0


def _cholesky_np(a):
    """(L, info) per matrix: L of the lower triangle, info 0 or the order of the failing minor."""
    if a.size == 0:
        return _np.zeros_like(a), _np.zeros(a.shape[:-2], dtype=_np.int64)
    flat = a.reshape(-1, a.shape[-2], a.shape[-1])
    Ls = _np.zeros_like(flat)
    info = _np.zeros(flat.shape[0], dtype=_np.int64)
    try:
        Ls = _np.linalg.cholesky(flat) if flat.shape[0] else Ls
    except _np.linalg.LinAlgError:
        for i, m in enumerate(flat):
            try:
                Ls[i] = _np.linalg.cholesky(m)
            except _np.linalg.LinAlgError:
                info[i] = _first_bad_minor(m)
                Ls[i] = _np.full_like(m, _np.nan)
    return Ls.reshape(a.shape), info.reshape(a.shape[:-2])


def _cholesky_grad(L, gL):
    P = (_mT(L) @ gL).tril()
    S = (P + _mT(P.tril(-1))) * 0.5
    Y = _solve(_mT(L), S)
    return _mT(_solve(_mT(L), _mT(Y)))


def _keep(ctx, *factors):
    """Multi-output Functions: the backward gets None for outputs without a gradient (the
    formulas are linear in the output gradients; None skips a term)."""
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(*factors)


def _fns():
    from .autograd.function import Function

    class Cholesky(Function):
        _builtin_node = "LinalgCholeskyEx"

        @staticmethod
        def forward(ctx, A):
            L, info = _cholesky_np(_np_of(A))
            bad = _np.flatnonzero(info.reshape(-1))
            if bad.size:
                k = int(bad[0])
                raise LinAlgError("linalg.cholesky: " + _batch_error(
                    A, k, "The factorization could not be completed because the input is not positive-definite "
                    f"(the leading minor of order {int(info.reshape(-1)[k])} is not positive-definite)."))
            out = _T(L, A)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, gL):
            (L,) = ctx.saved_tensors
            return _cholesky_grad(L, gL)

    class Eigh(Function):
        _builtin_node = "LinalgEigh"

        @staticmethod
        def forward(ctx, A, uplo):
            w, V = _np.linalg.eigh(_np_of(A), UPLO=uplo)
            w, V = _T(w, A), _T(V, A)
            _keep(ctx, w, V)
            return w, V

        @staticmethod
        def backward(ctx, gw, gV):
            w, V = ctx.saved_tensors
            inner = _diag_embed(gw) if gw is not None else None
            if gV is not None:
                X = _mT(V) @ gV
                term = _gap_inverse(w, False) * ((X - _mT(X)) * 0.5)
                inner = term if inner is None else inner + term
            if inner is None:
                return None, None
            return V @ inner @ _mT(V), None

    class Svd(Function):
        _builtin_node = "LinalgSvd"

        """The reduced SVD (U (m, k), S (k,), Vh (k, n)); full_matrices is layered on top."""

        @staticmethod
        def forward(ctx, A):
            U, S, Vh = _np.linalg.svd(_np_of(A), full_matrices=False)
            U, S, Vh = _T(U, A), _T(S, A), _T(Vh, A)
            _keep(ctx, U, S, Vh)
            return U, S, Vh

        @staticmethod
        def backward(ctx, gU, gS, gVh):
            U, S, Vh = ctx.saved_tensors
            return _svd_grad(U, S, Vh, gU, gS, gVh)

    class Qr(Function):
        _builtin_node = "LinalgQr"

        @staticmethod
        def forward(ctx, A, mode):
            Q, R = _np.linalg.qr(_np_of(A), mode=mode)
            Q, R = _T(Q, A), _T(R, A)
            _keep(ctx, Q, R)
            ctx.m, ctx.n, ctx.mode = A.shape[-2], A.shape[-1], mode
            return Q, R

        @staticmethod
        def backward(ctx, gQ, gR):
            Q, R = ctx.saved_tensors
            m, n = ctx.m, ctx.n
            if ctx.mode == "complete" and m > n:
                raise _C.LucidError("linalg.qr: The QR decomposition is not differentiable when mode='complete' "
                                    "and nrows > ncols.")
            return _qr_grad(Q, R, gQ, gR, m, n), None

    class Pinv(Function):
        _builtin_node = "LinalgPinv"

        @staticmethod
        def forward(ctx, A, atol, rtol, hermitian):
            P = _T(_pinv_np(_np_of(A), atol, rtol, hermitian), A)
            ctx.save_for_backward(A, P)
            return P

        @staticmethod
        def backward(ctx, gP):
            A, P = ctx.saved_tensors
            Pt = _mT(P)
            m, n = A.shape[-2], A.shape[-1]
            IAP = _eye(m, A) - A @ P
            IPA = _eye(n, A) - P @ A
            gA = -(Pt @ gP @ Pt) + IAP @ _mT(gP) @ P @ Pt + Pt @ P @ _mT(gP) @ IPA
            return gA, None, None, None

    class QrR(Function):
        _builtin_node = "LinalgQr"

        """mode='r': R alone; its backward raises PyTorch's error (Q is not there to use)."""

        @staticmethod
        def forward(ctx, A):
            return _T(_np.linalg.qr(_np_of(A), mode="r"), A)

        @staticmethod
        def backward(ctx, g):
            raise _C.LucidError("linalg.qr: The derivative of linalg.qr depends on Q, which is not computed when "
                                "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                                "through linalg.qr.")

    return Cholesky, Eigh, Svd, Qr, Pinv, QrR


def lazy_functions(build):
    """A getter for the autograd Functions ``build()`` returns, built on first use (their classes
    need pylucid.autograd, which imports this module)."""
    fns: list = []

    def get(i):
        if not fns:
            fns.extend(build())
        return fns[i]

    return get


def sum_to(g, shape):
    """g summed over the batch dims that broadcasting added or expanded, to ``shape``."""
    shape = tuple(shape)
    while g.dim() > len(shape):
        g = g.sum(0)
    for d, n in enumerate(shape):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdim=True)
    return g


_FNS_get = lazy_functions(_fns)


def _svd_grad(U, S, Vh, gU, gS, gVh):
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        if gS is None:
            return None
        return (U * gS.unsqueeze(-2)) @ Vh
    V = _mT(Vh)
    F = _gap_inverse(S, True)
    inner = _diag_embed(gS) if gS is not None else None
    if gU is not None:
        X = _mT(U) @ gU
        term = (F * (X - _mT(X))) * S.unsqueeze(-2)
        inner = term if inner is None else inner + term
    gV = _mT(gVh) if gVh is not None else None
    if gV is not None:
        Y = _mT(V) @ gV
        term = S.unsqueeze(-1) * (F * (Y - _mT(Y)))
        inner = term if inner is None else inner + term
    gA = U @ inner @ Vh
    if gU is not None and m > S.shape[-1]:
        gUS = gU / S.unsqueeze(-2)
        gA = gA + (gUS - U @ (_mT(U) @ gUS)) @ Vh
    if gV is not None and n > S.shape[-1]:
        gVS = gV / S.unsqueeze(-2)
        gA = gA + U @ _mT(gVS - V @ (_mT(V) @ gVS))
    return gA


def _copyltu(M):
    return M.tril() + _mT(M.tril(-1))


def _qr_grad(Q, R, gQ, gR, m, n):
    if gQ is None:
        gQ = zeros(*Q.shape, dtype=Q.dtype)
    if gR is None:
        gR = zeros(*R.shape, dtype=R.dtype)
    if m >= n:
        M = R @ _mT(gR) - _mT(gQ) @ Q
        B = gQ + Q @ _copyltu(M)
        return _mT(_solve(R, _mT(B)))
    # Wide: A = [X | Y], R = [U | V] with X = Q U square.
    U, V = R[..., :, :m], R[..., :, m:]
    gU, gV = gR[..., :, :m], gR[..., :, m:]
    Y = Q @ V
    gQ2 = gQ + Y @ _mT(gV)
    M = U @ _mT(gU) - _mT(gQ2) @ Q
    gX = _mT(_solve(U, _mT(gQ2 + Q @ _copyltu(M))))
    gY = Q @ gV
    return _C.cat([gX, gY], -1)


def _tolerances(atol, rtol, S_max, m, n, dtype, rcond_default=True):
    """PyTorch's rule: rtol defaults to eps * max(m, n) when atol is not given (or zero), else 0;
    singular values below max(atol, rtol * S_max) count as zero."""
    eps = _np.finfo(dtype).eps
    if rtol is None:
        rtol = eps * max(m, n) if (atol is None or _np.all(_np.asarray(atol) <= 0)) else 0.0
    if atol is None:
        atol = 0.0
    return _np.maximum(_np.asarray(atol, dtype=_np.float64), _np.asarray(rtol, dtype=_np.float64) * S_max)


def _count_above(s, tol):
    """Per matrix, how many of its singular values ``s`` (last dim) exceed ``tol`` (per matrix)."""
    tol = _np.broadcast_to(_np.asarray(tol, dtype=_np.float64), s.shape[:-1])
    return (s > tol[..., None]).sum(-1)


def _tol_arg(t, op, name):
    if t is None or isinstance(t, (int, float, _np.floating)):
        return None if t is None else float(t)
    if isinstance(t, Tensor):
        return t.detach().double().numpy()
    raise _C.DtypeMismatch(f"{op}: {name} must be a float or a Tensor, got {type(t).__name__}")


def _pinv_np(a, atol, rtol, hermitian):
    m, n = a.shape[-2], a.shape[-1]
    if hermitian:
        w, V = _np.linalg.eigh(a)
        s = _np.abs(w)
        tol = _tolerances(atol, rtol, s.max(-1, initial=0.0), m, n, a.dtype)
        keep = s > _np.asarray(tol)[..., None]
        winv = _np.where(keep, 1.0 / _np.where(keep, w, 1.0), 0.0).astype(a.dtype)
        return (V * winv[..., None, :]) @ _np.swapaxes(V, -1, -2)
    U, s, Vh = _np.linalg.svd(a, full_matrices=False)
    tol = _tolerances(atol, rtol, s.max(-1, initial=0.0), m, n, a.dtype)
    keep = s > _np.asarray(tol)[..., None]
    sinv = _np.where(keep, 1.0 / _np.where(keep, s, 1.0), 0.0).astype(a.dtype)
    return _np.swapaxes(Vh, -1, -2) @ (sinv[..., :, None] * _np.swapaxes(U, -1, -2))


# ---- public functions ----------------------------------------------------------------------

def _out(r, out):
    if out is None:
        return r
    if isinstance(r, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(r) or not all(isinstance(o, Tensor) for o in out):
            raise _C.DtypeMismatch(f"out= must be a tuple of {len(r)} Tensors, got {type(out).__name__}")
    elif not isinstance(out, Tensor):
        raise _C.DtypeMismatch(f"out= must be a Tensor, got {type(out).__name__}")
    if isinstance(out, (tuple, list)):
        for o, v in zip(out, r):
            _fill(o, v)
        return type(r)(*out) if isinstance(r, tuple) and hasattr(r, "_fields") else tuple(out)
    return _fill(out, r)


def _fill(out, r):
    # As PyTorch resizes an out= tensor of another shape: here it is rebound to the result's shape.
    if tuple(out.shape) != tuple(r.shape):
        out.data = r.detach() if r.dtype == out.dtype else r.detach().to(out.dtype)
        return out
    return out.copy_(r)


def cholesky(A, *, upper=False, out=None):
    """``L`` with ``A = L L^T`` (lower, or ``U = L^T`` with ``upper=True``) for each symmetric
    positive-definite matrix in ``A`` (only the lower triangle is read). Raises
    :class:`LinAlgError` naming the first leading minor that is not positive-definite."""
    _matrix(A, "linalg.cholesky", square=True)
    L = _FNS_get(0).apply(A)
    return _out(_mT(L) if upper else L, out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: the Cholesky factor and, per matrix, 0 or the order of the first leading
    minor that is not positive-definite (then that ``L`` is NaN). Raises only with
    ``check_errors=True``."""
    _matrix(A, "linalg.cholesky_ex", square=True)
    _, info = _cholesky_np(_np_of(A))
    if check_errors or not info.any():
        L = cholesky(A, upper=upper)
    else:
        L = _T(_cholesky_np(_np_of(A))[0], A)
        L = _mT(L) if upper else L
    return _out(linalg_cholesky_ex(L, _long(info)), out)


def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: the inverse and, per matrix, 0 or a positive number when it is
    singular (then that inverse is NaN). Raises only with ``check_errors=True``."""
    from .linalg import inv
    _matrix(A, "linalg.inv_ex", square=True)
    a = _np_of(A)
    flat = a.reshape(-1, a.shape[-2], a.shape[-1])
    info = _np.zeros(flat.shape[0], dtype=_np.int64)
    for i, m in enumerate(flat):
        try:
            _np.linalg.inv(m)
        except _np.linalg.LinAlgError:
            info[i] = max(1, int(_np.linalg.matrix_rank(m)) + 1)
    info = info.reshape(a.shape[:-2])
    if check_errors or not info.any():
        r = inv(A)
    else:
        res = _np.full_like(flat, _np.nan)
        for i, m in enumerate(flat):
            if not info.reshape(-1)[i]:
                res[i] = _np.linalg.inv(m)
        r = _T(res.reshape(a.shape), A)
    return _out(linalg_inv_ex(r, _long(info)), out)


def eigh(A, UPLO="L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix in ``A`` (the ``UPLO``
    triangle is read), eigenvalues ascending; a named tuple. Differentiable in both."""
    _matrix(A, "linalg.eigh", square=True)
    if UPLO not in ("L", "U"):
        raise _C.LucidError(f"linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, V = _FNS_get(1).apply(A, UPLO)
    return _out(linalg_eigh(w, V), out)


def eigvalsh(A, UPLO="L", *, out=None):
    """The eigenvalues of each symmetric matrix in ``A``, ascending (gradient ``V diag(g) V^T``)."""
    _matrix(A, "linalg.eigvalsh", square=True)
    if UPLO not in ("L", "U"):
        raise _C.LucidError(f"linalg.eigvalsh: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _out(_FNS_get(1).apply(A, UPLO)[0], out)


def _check_driver(driver, op):
    if driver is not None:
        raise _C.LucidError(f"{op}: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER "
                            "backend.")


def svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending; with
    ``full_matrices=True`` (the default) ``U`` is ``(m, m)`` and ``Vh`` ``(n, n)``, of which
    only the first ``min(m, n)`` columns of ``U`` (rows of ``Vh``) get gradients, as in PyTorch."""
    _matrix(A, "linalg.svd")
    _check_driver(driver, "linalg.svd")
    U, S, Vh = _FNS_get(2).apply(A)
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    if full_matrices and (m > k or n > k):
        Uf, _, Vhf = _np.linalg.svd(_np_of(A), full_matrices=True)
        if m > k:
            U = _C.cat([U, _T(Uf[..., :, k:], A)], -1)
        if n > k:
            Vh = _C.cat([Vh, _T(Vhf[..., k:, :], A)], -2)
    return _out(linalg_svd(U, S, Vh), out)


def svdvals(A, *, driver=None, out=None):
    """The singular values of each matrix in ``A``, descending (gradient ``U diag(g) Vh``)."""
    _matrix(A, "linalg.svdvals")
    _check_driver(driver, "linalg.svdvals")
    return _out(_FNS_get(2).apply(A)[1], out)


def qr(A, mode="reduced", *, out=None):
    """``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns and ``R`` upper triangular;
    ``mode`` ``'reduced'`` (``Q`` ``(m, k)``), ``'complete'`` (``Q`` ``(m, m)``) or ``'r'``
    (``Q`` empty). Differentiable for ``'reduced'`` and for ``'complete'`` when ``m <= n``."""
    _matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise _C.LucidError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                            "'r', or 'complete'")
    if mode == "r":
        return _out(linalg_qr(empty(0, dtype=A.dtype), _FNS_get(5).apply(A)), out)
    Q, R = _FNS_get(3).apply(A, mode)
    return _out(linalg_qr(Q, R), out)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse of each matrix in ``A``; singular values at or below
    ``max(atol, rtol * S_max)`` are dropped (``rtol`` defaults to ``eps * max(m, n)`` when
    ``atol`` is not given). ``hermitian=True`` uses the eigendecomposition of the lower triangle."""
    _matrix(A, "linalg.pinv", square=hermitian)
    atol, rtol = _tol_arg(atol, "linalg.pinv", "atol"), _tol_arg(rtol, "linalg.pinv", "rtol")
    return _out(_FNS_get(4).apply(A, atol, rtol, bool(hermitian)), out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None, out=None):
    """The number of singular values (absolute eigenvalues with ``hermitian=True``) above
    ``max(atol, rtol * S_max)``, per matrix, as int64."""
    _matrix(A, "linalg.matrix_rank", square=hermitian)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tol_arg(atol, "linalg.matrix_rank", "atol"), _tol_arg(rtol, "linalg.matrix_rank", "rtol")
    a = _np_of(A)
    s = _np.abs(_np.linalg.eigvalsh(a)) if hermitian else _np.linalg.svd(a, compute_uv=False)
    tol_v = _tolerances(atol, rtol, s.max(-1, initial=0.0), a.shape[-2], a.shape[-1], a.dtype)
    return _out(_long(_count_above(s, tol_v)), out)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)``: the least-squares solution ``X`` of
    ``A X = B`` (minimum norm when under-determined), a named tuple. ``driver`` (default
    ``'gelsy'``) decides what else is filled in, as in PyTorch: ``residuals`` (squared column
    norms of ``A X - B`` when ``m > n`` and ``A`` has full rank) for ``gels``, ``gelsd``,
    ``gelss``; ``rank`` for all but ``gels``; ``singular_values`` for ``gelsd``, ``gelss``.
    The solution is ``pinv(A) @ B`` with ``rtol=rcond``, differentiable in ``A`` and ``B``."""
    _matrix(A, "linalg.lstsq")
    if not isinstance(B, Tensor):
        raise _C.DtypeMismatch(f"linalg.lstsq: B must be a Tensor, got {type(B).__name__}")
    if B.dtype != A.dtype:
        raise _C.DtypeMismatch(f"linalg.lstsq: Expected input and other to have the same dtype, but got "
                               f"{A.dtype} and {B.dtype}")
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise _C.LucidError(f"torch.linalg.lstsq: parameter `driver` should be one of {_DRIVERS}")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.dim() < 2 or Bm.shape[-2] != A.shape[-2]:
        raise _C.ShapeMismatch(f"linalg.lstsq: input.size(-2) should match other.size(-2), got A {list(A.shape)} "
                               f"and B {list(B.shape)}")
    m, n = A.shape[-2], A.shape[-1]
    eps = float(_np.finfo(_np_of(A).dtype).eps)
    rtol = float(rcond) if rcond is not None and rcond >= 0 else eps * max(m, n)
    X = pinv(A, rtol=rtol) @ Bm
    s = _np.linalg.svd(_np_of(A), compute_uv=False)
    rank = _count_above(s, rtol * s.max(-1, initial=0.0))
    if driver != "gelsy" and m > n and bool((rank == n).all()):
        r = A @ X - Bm
        residuals = (r * r).sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    else:
        residuals = empty(0, dtype=A.dtype)
    rank_t = empty(0, dtype=_C.dtype.int64) if driver == "gels" else _long(rank)
    sv = _T(s, A) if driver in ("gelsd", "gelss") else empty(0, dtype=A.dtype)
    return linalg_lstsq(X.squeeze(-1) if vector else X, residuals, rank_t, sv)


# ---- the top-level spellings ---------------------------------------------------------------

_warned: set[str] = set()


def _warn_once(key, msg):
    if key not in _warned:
        import warnings
        _warned.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def cholesky_top(input, upper=False, *, out=None):
    """``torch.cholesky`` (deprecated in PyTorch for ``linalg.cholesky``)."""
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
               "future PyTorch release.")
    return cholesky(input, upper=upper, out=out)


def svd_top(input, some=True, compute_uv=True, *, out=None):
    """``torch.svd``: ``(U, S, V)`` with ``V`` (not ``Vh``); ``some=True`` gives the reduced
    factors; with ``compute_uv=False`` ``U`` and ``V`` are zero ``(m, m)`` and ``(n, n)``."""
    _matrix(input, "svd")
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        batch = tuple(input.shape[:-2])
        S = svdvals(input)
        return _out(svd_type(zeros(*batch, m, m, dtype=input.dtype), S, zeros(*batch, n, n, dtype=input.dtype)), out)
    U, S, Vh = svd(input, full_matrices=not some)
    return _out(svd_type(U, S, _mT(Vh)), out)


def qr_top(input, some=True, *, out=None):
    """``torch.qr``: ``(Q, R)``, reduced with ``some=True``, complete otherwise."""
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
               "release.")
    Q, R = qr(input, mode="reduced" if some else "complete")
    return _out(qr_type(Q, R), out)


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: ``linalg.pinv`` with ``rtol=rcond``."""
    return pinv(input, rtol=rcond)


def _tri_arg(L, op):
    _matrix(L, op, square=True)


def cholesky_solve(B, L, upper=False, *, out=None):
    """``X`` with ``A X = B`` for ``A = L L^T`` given its Cholesky factor ``L`` (``U^T U``
    with ``upper=True``); differentiable in ``B`` and ``L``."""
    _tri_arg(L, "cholesky_solve")
    _matrix(B, "cholesky_solve")
    if B.shape[-2] != L.shape[-1]:
        raise _C.ShapeMismatch(f"cholesky_solve: Incompatible matrix sizes for cholesky_solve: each A matrix is "
                               f"{L.shape[-1]} by {L.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    Lo = _mT(L) if upper else L
    return _out(_solve(_mT(Lo), _solve(Lo, B)), out)


def cholesky_inverse(L, upper=False, *, out=None):
    """The inverse of ``A = L L^T`` (``U^T U`` with ``upper=True``) from its Cholesky factor."""
    from .linalg import inv
    _tri_arg(L, "cholesky_inverse")
    Lo = _mT(L) if upper else L
    Li = inv(Lo)
    return _out(_mT(Li) @ Li, out)


# ---- matrix exponential and Householder products (composites of differentiable ops) --------

def matrix_exp(A):
    """``exp(A)`` of each square matrix in ``A``: scaling and squaring around a degree-18 Taylor
    polynomial (``A / 2^s`` with 1-norm at most 1/2, so the truncation is below float64's
    rounding), written with matmuls so its gradient has every order."""
    _matrix(A, "linalg.matrix_exp", square=True)
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return A.clone()
    norm = float(_np.abs(_np_of(A)).sum(-2).max()) if A.numel() else 0.0
    s = 0 if norm <= 0.5 or not _np.isfinite(norm) else int(_np.ceil(_np.log2(norm / 0.5)))
    X = A / float(2 ** s) if s else A
    I = _eye(n, A)
    # Horner: I + X (I + X/2 (I + X/3 (... (I + X/18))))
    E = I + X / 18.0
    for k in range(17, 0, -1):
        E = I + (X @ E) / float(k)
    for _ in range(s):
        E = E @ E
    return E


def householder_product(A, tau, *, out=None):
    """The first ``n`` columns of ``H_1 ... H_k`` for ``A`` ``(*, m, n)`` and ``tau`` ``(*, k)``,
    ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` column ``i`` of ``A`` below the diagonal and 1 on
    it (LAPACK's ``orgqr``); differentiable in ``A`` and ``tau``."""
    _matrix(A, "linalg.householder_product")
    if not isinstance(tau, Tensor):
        raise _C.DtypeMismatch(f"linalg.householder_product: tau must be a Tensor, got {type(tau).__name__}")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1] if tau.dim() else 0
    if m < n:
        raise _C.ShapeMismatch(f"torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                               f"input.shape[-1], got {m} and {n}")
    if k > n:
        raise _C.ShapeMismatch(f"torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                               f"tau.shape[-1], got {n} and {k}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise _C.ShapeMismatch(f"torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
                               f"input.shape[:-2], got {list(tau.shape[:-1])} and {list(A.shape[:-2])}")
    V = A.tril(-1) + _eye(m, A)[:, :n]
    batch = tuple(A.shape[:-2])
    Q = _eye(m, A)[:, :n].expand(*batch, m, n)
    # Apply H_k first to the identity's columns, then H_{k-1}, ..., H_1 (Q = H_1 (H_2 (... H_k I))).
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (_mT(v) @ Q)
    return _out(Q, out)


# ---- triangular solves and matrix norms --------------------------------------------------------

def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``) for triangular ``A`` (only its
    ``upper`` or lower triangle is read; a unit diagonal is assumed with ``unitriangular``).
    Differentiable in ``B`` and in the triangle of ``A`` that is read."""
    _matrix(A, "linalg.solve_triangular", square=True)
    _matrix(B, "linalg.solve_triangular")
    if B.dtype != A.dtype:
        raise _C.DtypeMismatch(f"linalg.solve_triangular: Expected A and B to have the same dtype, but got "
                               f"{A.dtype} and {B.dtype}")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise _C.ShapeMismatch(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                               f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    T = A.triu(1 if unitriangular else 0) if upper else A.tril(-1 if unitriangular else 0)
    if unitriangular:
        T = T + _eye(n, A)
    X = _solve(T, B) if left else _mT(_solve(_mT(T), _mT(B)))
    return _out(X, out)


_MATRIX_ORDS = ("fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf"))


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The matrix norm of ``A`` over the two dims ``dim``: ``'fro'`` (default), ``'nuc'`` (sum of
    singular values), ``2``/``-2`` (largest/smallest singular value), ``1``/``-1`` (max/min
    column abs sum), ``inf``/``-inf`` (max/min row abs sum). Differentiable."""
    if not isinstance(A, Tensor):
        raise _C.DtypeMismatch(f"linalg.matrix_norm: expected a Tensor, got {type(A).__name__}")
    if dtype is not None:
        A = A.to(dtype)
    if not A.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"linalg.matrix_norm: Expected a floating point tensor, got {A.dtype}")
    if A.dim() < 2:
        raise _C.ShapeMismatch(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, got shape "
                               f"{list(A.shape)}")
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise _C.LucidError(f"linalg.matrix_norm: Order {ord} not supported.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise _C.ShapeMismatch(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = (int(d) % A.dim() for d in dim)
    if d0 == d1:
        raise _C.LucidError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    M = A.movedim((d0, d1), (-2, -1))
    if ord == "fro":
        r = (M * M).sum((-2, -1)).sqrt()
    elif ord in ("nuc", 2, -2):
        if M.dtype not in (_C.dtype.float32, _C.dtype.float64):
            M = M.float()
        s = svdvals(M)
        r = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
    else:
        # 1 / -1: column sums (over rows), then max/min; inf / -inf: row sums, then max/min.
        sums = M.abs().sum(-2) if ord in (1, -1) else M.abs().sum(-1)
        r = sums.amax(-1) if ord > 0 else sums.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return _out(r, out)


# ---- small composites: matrix_power, multi_dot, cond, vecdot, cross, diagonal ----------------------

def linalg_matrix_power(A, n, *, out=None):
    """``A`` to the integer power ``n`` (square matrices; ``n < 0`` inverts first)."""
    from . import matrix_power as _mp
    _matrix(A, "linalg.matrix_power", square=True)
    return _out(_mp(A, n), out)


def multi_dot(tensors, *, out=None):
    """The product of two or more matrices, as ``torch.linalg.multi_dot``: the first may be 1-D
    (a row vector) and the last 1-D (a column vector); those dims are dropped from the result."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise _C.ShapeMismatch(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"multi_dot(): tensor {i} is a {type(t).__name__}, expected a Tensor")
        want = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.dim() not in want:
            raise _C.ShapeMismatch(f"multi_dot(): tensor {i} must be {' or '.join(f'{w}D' for w in want)} but got "
                                   f"{t.dim()}D")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    if first_vec:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vec:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i in range(len(tensors) - 1):
        if tensors[i].shape[-1] != tensors[i + 1].shape[-2]:
            raise _C.ShapeMismatch(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                                   f"{list(tensors[i + 1].shape)} cannot be multiplied")
    r = tensors[0]
    for t in tensors[1:]:
        r = r @ t
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return _out(r, out)


def cond(A, p=None, *, out=None):
    """The condition number of each matrix in ``A`` for the norm ``p``: ``None``/``2`` (largest
    over smallest singular value), ``-2`` (the inverse), or ``'fro'``, ``'nuc'``, ``1``, ``-1``,
    ``inf``, ``-inf`` (``norm(A) * norm(inv(A))``, square matrices)."""
    from .linalg import inv
    if p is None or p in (2, -2):
        _matrix(A, "linalg.cond")
        s = svdvals(A)
        r = s.amax(-1) / s.amin(-1) if p in (None, 2) else s.amin(-1) / s.amax(-1)
        return _out(r, out)
    _matrix(A, "linalg.cond", square=True)
    return _out(matrix_norm(A, p) * matrix_norm(inv(A), p), out)


def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of ``x`` and ``y`` (broadcast) along ``dim``."""
    if not isinstance(x, Tensor) or not isinstance(y, Tensor):
        raise _C.DtypeMismatch(f"linalg.vecdot: expected Tensors, got {type(x).__name__} and {type(y).__name__}")
    return _out((x * y).sum(dim), out)


def cross(input, other, *, dim=-1, out=None):
    """The cross product of 3-vectors along ``dim`` (default the last, unlike ``torch.cross``)."""
    from . import cross as _cross
    return _out(_cross(input, other, dim=dim), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``A.diagonal(offset, dim1, dim2)`` (defaults over the last two dims): a view."""
    if not isinstance(A, Tensor):
        raise _C.DtypeMismatch(f"linalg.diagonal: expected a Tensor, got {type(A).__name__}")
    return A.diagonal(offset, dim1, dim2)
