"""The LU family: ``linalg.lu``, ``linalg.lu_factor`` (and ``lu_factor_ex``), ``linalg.lu_solve``,
``lu_unpack``, and the older spellings ``torch.lu`` / ``Tensor.lu`` and ``torch.lu_solve`` /
``Tensor.lu_solve``.

Forward: LAPACK's ``getrf`` (the bundled OpenBLAS, through ``_C._lu_factor_ex``): Gaussian
elimination with partial pivoting (the pivot of column j is the first entry of largest magnitude
on or below the diagonal; a zero pivot is recorded in ``info`` and the elimination goes on), over
batches, in the input's own precision. ``_getrf`` below is the same elimination in numpy
(recursive over halves of the columns, as LAPACK's getrf2): the reference the tests compare with. ``P^T A = L U``
with ``L`` unit lower ``(m, k)`` and ``U`` upper ``(k, n)``, ``k = min(m, n)``; ``pivots`` are
1-based row swaps applied in order (pylucid's integer dtype is int64 where PyTorch's is int32).

Backward, with ``A' = P^T A`` split as ``[A1 | A2]`` (wide) or ``[A1; A2]`` (tall) around the
square block ``A1 = L1 U1``, ``gL`` strictly lower and ``gU`` upper:

* ``R = tril(L1^H gL1 - gU2 U2^H, -1) + triu(gU1 U1^H - L2^H gL2)`` (the ``*2`` terms exist only
  for wide / tall inputs), ``gA1 = L1^-H R U1^-H``, ``gA2 = L1^-H gU2`` (wide) or
  ``gL2 U1^-H`` (tall), ``gA = P gA'``.
* ``lu_solve``: ``gB`` is the solve with the adjoint system; ``gA`` is the solve's gradient
  (``-gB X^H`` for ``AX = B``), pulled back through ``A = P L U``:
  ``gLU = tril(P^T gA U^H, -1) + triu(L^H P^T gA)``.

All are written with pylucid ops (triangular solves, products), so they have gradients of every order.
"""
import warnings as _warnings

import numpy as _np

from . import _C
from ._C import Tensor
from ._linalg_decomp import LinAlgError, _named, _out, lazy_functions, solve_triangular, sum_to
from ._tensor import eye, zeros

__all__ = ["lu", "lu_factor", "lu_factor_ex", "lu_solve", "lu_unpack"]

linalg_lu = _named("linalg_lu", ["P", "L", "U"])
linalg_lu_factor = _named("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _named("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_unpack_type = _named("lu_unpack", ["P", "L", "U"])
lu_with_info = _named("_lu_with_info", ["LU", "pivots", "info"])


def _mT(x):
    return x.transpose(-2, -1)


def _T(a, like):
    return _C._from_numpy(_np.array(a, order="C")).to(like.dtype)


def _long(a):
    return _C._from_numpy(_np.array(a, dtype=_np.int64, order="C"))


def _check_matrix(A, op, pivot=True):
    if not isinstance(A, Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor, got {type(A).__name__}")
    if A.dim() < 2:
        raise _C.ShapeMismatch(f"{op}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    if A.dtype not in (_C.dtype.float32, _C.dtype.float64):
        raise _C.DtypeMismatch(f"{op}: expected a floating point tensor of dtype float32 or float64, got {A.dtype}")
    if not pivot:
        raise _C.LucidError(f"{op}: LU without pivoting is not implemented on the CPU")


# ---- numpy kernels -------------------------------------------------------------------------

_LEAF = 16  # panels this narrow are eliminated column by column; wider ones split in two


def _getrf(a):
    """(LU, pivots, info) of every matrix of ``a`` (..., m, n): recursive blocked elimination
    (LAPACK's getrf2 order: factor the left half of the columns, update the right half with a
    triangular solve and a matrix product, factor the trailing block), the same pivots as
    column-by-column elimination at a fraction of the Python steps."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    w = _np.array(a.reshape(-1, m, n), copy=True)
    piv = _np.zeros((w.shape[0], k), dtype=_np.int64)
    info = _np.zeros(w.shape[0], dtype=_np.int64)
    if w.shape[0] and k:
        _getrf_block(w, piv, info, 0)
    return w.reshape(a.shape), (piv + 1).reshape(*batch, k), info.reshape(batch)


def _getrf_block(w, piv, info, off):
    """Factors the block ``w`` (B, m, n) in place; ``piv`` gets its 0-based row swaps (relative
    to the block's first row), ``info`` the first zero pivot (1-based, columns offset by ``off``)."""
    m, n = w.shape[-2:]
    k = min(m, n)
    if k <= _LEAF:
        _getf2(w, piv, info, off)
        return
    h = k // 2
    left, right = w[:, :, :h], w[:, :, h:]
    _getrf_block(left, piv[:, :h], info, off)
    _swap_rows(right, piv[:, :h])
    L11 = _np.tril(left[:, :h, :], -1) + _np.eye(h, dtype=w.dtype)
    right[:, :h, :] = _np.linalg.solve(L11, right[:, :h, :])
    right[:, h:, :] -= left[:, h:, :] @ right[:, :h, :]
    _getrf_block(w[:, h:, h:], piv[:, h:], info, off + h)
    _swap_rows(w[:, h:, :h], piv[:, h:])
    piv[:, h:] += h


def _getf2(w, piv, info, off):
    """Column-by-column elimination of a narrow block (see _getrf_block)."""
    rows = _np.arange(w.shape[0])
    for j in range(min(w.shape[-2:])):
        p = j + _np.argmax(_np.abs(w[:, j:, j]), axis=1)
        piv[:, j] = p
        top = w[rows, j].copy()
        w[rows, j] = w[rows, p]
        w[rows, p] = top
        d = w[:, j, j]
        zero = d == 0
        info[(info == 0) & zero] = off + j + 1
        # NOTE: getrf scales the column by the pivot's reciprocal (not a division per entry).
        r = _np.where(zero, 0.0, 1.0 / _np.where(zero, 1.0, d)).astype(w.dtype)
        w[:, j + 1:, j] *= r[:, None]
        w[:, j + 1:, j + 1:] -= w[:, j + 1:, j, None] * w[:, j, None, j + 1:]


def _swap_rows(block, swaps):
    """Applies the row swaps ``i <-> swaps[:, i]`` (in order, 0-based) to ``block`` (B, r, c)."""
    perm = _np.tile(_np.arange(block.shape[1]), (block.shape[0], 1))
    rows = _np.arange(block.shape[0])
    for i in range(swaps.shape[1]):
        p = swaps[:, i]
        top = perm[:, i].copy()
        perm[:, i] = perm[rows, p]
        perm[rows, p] = top
    block[...] = _np.take_along_axis(block, perm[..., None], axis=1)


def _perm(piv, m):
    """The row order ``perm`` with ``(P^T A)[i] = A[perm[i]]`` for each pivot vector (..., k)."""
    flat = piv.reshape(-1, piv.shape[-1]) - 1
    perm = _np.tile(_np.arange(m), (flat.shape[0], 1))
    rows = _np.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        p = flat[:, j]
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = top
    return perm.reshape(*piv.shape[:-1], m)


def _perm_matrix(piv, m, dtype):
    perm = _perm(piv, m)
    P = _np.zeros((*perm.shape, m), dtype=dtype)
    _np.put_along_axis(P, perm[..., None], 1.0, axis=-1)  # P^T[i, perm[i]] = 1
    return _np.swapaxes(P, -1, -2)


def _lu_solve_np(lu, piv, b, adjoint):
    """``A X = B`` (``A^H X = B`` with ``adjoint``) for ``A = P L U`` given as ``(lu, piv)``;
    ``lu`` (n, n) and ``b`` (n, r) batches already broadcast together."""
    n = lu.shape[-1]
    eye_n = _np.eye(n, dtype=lu.dtype)
    L = _np.tril(lu, -1) + eye_n
    U = _np.triu(lu)
    perm = _perm(piv, n)
    if not adjoint:
        pb = _np.take_along_axis(b, perm[..., None], axis=-2)  # P^T B
        return _np.linalg.solve(U, _np.linalg.solve(L, pb))
    y = _np.linalg.solve(_np.swapaxes(L, -1, -2), _np.linalg.solve(_np.swapaxes(U, -1, -2), b))
    x = _np.empty_like(y)
    _np.put_along_axis(x, perm[..., None], y, axis=-2)  # P Y
    return x


# ---- differentiable pieces -----------------------------------------------------------------

def _unpack(LU, piv):
    """(P, L, U) from a factorization, L and U as differentiable functions of ``LU``."""
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    P = _T(_perm_matrix(piv.numpy(), m, _np.float64), LU)
    L = LU[..., :, :k].tril(-1) + eye(m, k, dtype=LU.dtype)
    U = LU[..., :k, :].triu()
    return P, L, U


def _lu_grad(P, L, U, gL, gU):
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    L1, U1 = L[..., :k, :], U[..., :, :k]
    R = None
    if gL is not None:
        gL = gL.tril(-1)
        R = (_mT(L1) @ gL[..., :k, :]).tril(-1)
        if m > k:
            R = R - (_mT(L[..., k:, :]) @ gL[..., k:, :]).triu()
    if gU is not None:
        gU = gU.triu()
        t = (gU[..., :, :k] @ _mT(U1)).triu()
        if n > k:
            t = t - (gU[..., :, k:] @ _mT(U[..., :, k:])).tril(-1)
        R = t if R is None else R + t
    if R is None:
        return None
    gA = solve_triangular(_mT(L1), solve_triangular(_mT(U1), R, upper=False, left=False), upper=True,
                          unitriangular=True)
    if n > k:
        extra = solve_triangular(_mT(L1), gU[..., :, k:], upper=True, unitriangular=True) if gU is not None \
            else zeros(*gA.shape[:-1], n - k, dtype=gA.dtype)
        gA = _C.cat([gA, extra], -1)
    if m > k:
        extra = solve_triangular(_mT(U1), gL[..., k:, :], upper=False, left=False) if gL is not None \
            else zeros(*gA.shape[:-2], m - k, n, dtype=gA.dtype)
        gA = _C.cat([gA, extra], -2)
    return P @ gA


def _fns():
    from .autograd.function import Function

    class LuFactorEx(Function):
        _builtin_node = "LinalgLuFactorEx"

        @staticmethod
        def forward(ctx, A):
            LU, pivots, info = _C._lu_factor_ex(A.detach())
            ctx.mark_non_differentiable(pivots, info)
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(LU, pivots)
            return LU, pivots, info

        @staticmethod
        def backward(ctx, gLU, _gp, _gi):
            LU, pivots = ctx.saved_tensors
            if gLU is None:
                return None
            k = min(LU.shape[-2], LU.shape[-1])
            P, L, U = _unpack(LU, pivots)
            return _lu_grad(P, L, U, gLU[..., :, :k], gLU[..., :k, :])

    class LinalgLu(Function):
        _builtin_node = "LinalgLu"

        @staticmethod
        def forward(ctx, A):
            LU, pivots, _ = _C._lu_factor_ex(A.detach())
            P, L, U = _unpack(LU, pivots)
            ctx.mark_non_differentiable(P)
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(P, L, U)
            return P, L, U

        @staticmethod
        def backward(ctx, _gP, gL, gU):
            P, L, U = ctx.saved_tensors
            return _lu_grad(P, L, U, gL, gU)

    class LuUnpack(Function):
        _builtin_node = "LuUnpack"

        @staticmethod
        def forward(ctx, LU, pivots):
            _, L, U = _unpack(LU.detach(), pivots)
            ctx.set_materialize_grads(False)
            ctx.shape = tuple(LU.shape)
            return L, U

        @staticmethod
        def backward(ctx, gL, gU):
            m, n = ctx.shape[-2], ctx.shape[-1]
            k = min(m, n)
            g = None
            if gL is not None:
                g = gL.tril(-1)
                if n > k:
                    g = _C.cat([g, zeros(*g.shape[:-1], n - k, dtype=g.dtype)], -1)
            if gU is not None:
                t = gU.triu()
                if m > k:
                    t = _C.cat([t, zeros(*t.shape[:-2], m - k, n, dtype=t.dtype)], -2)
                g = t if g is None else g + t
            return g, None

    class LuSolve(Function):
        _builtin_node = "LinalgLuSolve"

        @staticmethod
        def forward(ctx, LU, pivots, B, left, adjoint):
            lu, piv, b = LU.detach().numpy(), pivots.numpy(), B.detach().numpy()
            if not left:
                b = _np.swapaxes(b, -1, -2)
            batch = _np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b.shape[:-2])
            n = lu.shape[-1]
            lu = _np.broadcast_to(lu, (*batch, n, n))
            piv = _np.broadcast_to(piv, (*batch, n))
            b = _np.broadcast_to(b, (*batch, *b.shape[-2:]))
            x = _lu_solve_np(lu, piv, b, adjoint != (not left))
            X = _T(_np.swapaxes(x, -1, -2) if not left else x, B)
            ctx.save_for_backward(LU, pivots, X)
            ctx.left, ctx.adjoint, ctx.b_shape = left, adjoint, tuple(B.shape)
            return X

        @staticmethod
        def backward(ctx, gX):
            LU, pivots, X = ctx.saved_tensors
            left, adjoint = ctx.left, ctx.adjoint
            gB = lu_solve(LU, pivots, gX, left=left, adjoint=not adjoint)
            if left:
                gA = -(gB @ _mT(X)) if not adjoint else -(X @ _mT(gB))
            else:
                gA = -(_mT(X) @ gB) if not adjoint else -(_mT(gB) @ X)
            P, L, U = _unpack(LU, pivots)
            PgA = _mT(P) @ gA
            gLU = (PgA @ _mT(U)).tril(-1) + (_mT(L) @ PgA).triu()
            return sum_to(gLU, LU.shape), None, sum_to(gB, ctx.b_shape), None, None

    return LuFactorEx, LinalgLu, LuUnpack, LuSolve


_fn = lazy_functions(_fns)


# ---- public functions ----------------------------------------------------------------------

def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)``: the packed factorization ``P^T A = L U`` of each matrix in ``A``
    ``(*, m, n)`` (``L`` below the diagonal of ``LU`` with an implicit unit diagonal, ``U`` on and
    above it), 1-based row swaps ``pivots`` ``(*, min(m, n))``, and ``info``: 0, or the 1-based
    index of the first zero on ``U``'s diagonal (a singular matrix). Raises only with
    ``check_errors=True``. Differentiable in ``LU``."""
    _check_matrix(A, "linalg.lu_factor_ex", pivot)
    LU, pivots, info = _fn(0).apply(A)
    if check_errors:
        _raise_singular(A, info, "linalg.lu_factor_ex")
    return _out(linalg_lu_factor_ex(LU, pivots, info), out)


def _raise_singular(A, info, op):
    flat = info.numpy().reshape(-1)
    bad = _np.flatnonzero(flat)
    if bad.size:
        b, i = int(bad[0]), int(flat[bad[0]])
        prefix = f"(Batch element {b}): " if A.dim() > 2 else ""
        raise LinAlgError(f"{op}: {prefix}U[{i},{i}] is zero and using it on lu_solve would result in a division "
                          "by zero. If you still want to perform the factorization, consider calling "
                          "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)`` of ``lu_factor_ex``; raises :class:`LinAlgError` for a singular
    matrix (a zero on ``U``'s diagonal)."""
    _check_matrix(A, "linalg.lu_factor", pivot)
    LU, pivots, info = _fn(0).apply(A)
    _raise_singular(A, info, "linalg.lu_factor")
    return _out(linalg_lu_factor(LU, pivots), out)


def lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with ``A = P L U`` for each matrix in ``A`` ``(*, m, n)``: ``P`` ``(*, m, m)``
    a permutation matrix, ``L`` ``(*, m, k)`` unit lower triangular, ``U`` ``(*, k, n)`` upper
    triangular, ``k = min(m, n)``. Singular matrices factor too. Differentiable in ``L`` and ``U``.

    >>> import pylucid
    >>> P, L, U = pylucid.linalg.lu(pylucid.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P.tolist(), L.tolist(), U.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.3333333432674408, 1.0]], [[3.0, 4.0], [0.0, 0.6666666269302368]])
    """
    _check_matrix(A, "linalg.lu", pivot)
    return _out(linalg_lu(*_fn(1).apply(A)), out)


def _check_pivots(pivots, op):
    if not isinstance(pivots, Tensor) or pivots.dtype != _C.dtype.int64:
        got = pivots.dtype if isinstance(pivots, Tensor) else type(pivots).__name__
        raise _C.DtypeMismatch(f"{op}: pivots should be a Tensor of an integer dtype (int32/int64), got {got}")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from the packed factorization of ``linalg.lu_factor`` (as
    ``linalg.lu`` returns them); ``unpack_data=False`` leaves ``L`` and ``U`` empty,
    ``unpack_pivots=False`` leaves ``P`` empty. Differentiable in ``LU_data``."""
    _check_matrix(LU_data, "lu_unpack")
    _check_pivots(LU_pivots, "lu_unpack")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    if tuple(LU_pivots.shape) != (*LU_data.shape[:-2], min(m, n)):
        raise _C.ShapeMismatch(f"lu_unpack: the pivots of LU_data {tuple(LU_data.shape)} must have shape "
                               f"{(*LU_data.shape[:-2], min(m, n))}, got {tuple(LU_pivots.shape)}")
    piv = LU_pivots.numpy()
    if piv.size and (piv.min() < 1 or piv.max() > m):
        raise _C.IndexOutOfRange(f"lu_unpack: pivots must be between 1 and {m}, got values in "
                                 f"[{int(piv.min())}, {int(piv.max())}]")
    empty = zeros(0, dtype=LU_data.dtype)
    P = _T(_perm_matrix(piv, m, _np.float64), LU_data) if unpack_pivots else empty
    if unpack_data:
        L, U = _fn(2).apply(LU_data, LU_pivots)
    else:
        L = U = empty
    return _out(lu_unpack_type(P, L, U), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """``X`` with ``A X = B`` for ``A = P L U`` given as the ``(LU, pivots)`` of
    ``linalg.lu_factor`` (``X A = B`` with ``left=False``, ``A^H`` for ``A`` with
    ``adjoint=True``); batches broadcast. Differentiable in ``LU`` and ``B``."""
    op = "linalg.lu_solve"
    _check_matrix(LU, op)
    _check_pivots(pivots, op)
    if not isinstance(B, Tensor):
        raise _C.DtypeMismatch(f"{op}: B must be a Tensor, got {type(B).__name__}")
    if B.dim() < 2:
        raise _C.ShapeMismatch(f"{op}: The input tensor B must have at least 2 dimensions, got shape {list(B.shape)}")
    if B.dtype != LU.dtype:
        raise _C.DtypeMismatch(f"{op}: Expected LU and B to have the same dtype, but found LU of type {LU.dtype} "
                               f"and B of type {B.dtype} instead")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise _C.ShapeMismatch(f"{op}: Expected LU to be square, got shape {list(LU.shape)}")
    if pivots.dim() == 0 or pivots.shape[-1] != n:
        raise _C.ShapeMismatch(f"{op}: Expected pivots of shape (*, {n}) for LU of shape {list(LU.shape)}, got "
                               f"{list(pivots.shape)}")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise _C.ShapeMismatch(f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                               f"{B.shape[-2]}x{B.shape[-1]})")
    try:
        batch = _np.broadcast_shapes(tuple(LU.shape[:-2]), tuple(pivots.shape[:-1]), tuple(B.shape[:-2]))
    except ValueError:
        raise _C.ShapeMismatch(f"{op}: the batch dims of LU {list(LU.shape)}, pivots {list(pivots.shape)} and B "
                               f"{list(B.shape)} do not broadcast") from None
    del batch
    X = _fn(3).apply(LU, pivots, B, bool(left), bool(adjoint))
    return _out(X, out)


# ---- the older spellings -------------------------------------------------------------------

_warned: set = set()


def _warn_once(key, msg):
    if key not in _warned:
        _warned.add(key)
        _warnings.warn(msg, UserWarning, stacklevel=3)


def lu_top(A, pivot=True, get_infos=False, out=None):
    """``torch.lu`` (deprecated in PyTorch for ``linalg.lu_factor``): ``(LU, pivots)``, or the
    named tuple ``(LU, pivots, info)`` with ``get_infos=True``. Never raises for a singular matrix."""
    _warn_once("lu", "torch.lu is deprecated in favor of linalg.lu_factor / linalg.lu_factor_ex and will be "
               "removed in a future PyTorch release.")
    _check_matrix(A, "lu", pivot)
    LU, pivots, info = _fn(0).apply(A)
    return _out(lu_with_info(LU, pivots, info) if get_infos else (LU, pivots), out)


def lu_solve_top(b, LU_data, LU_pivots, *, out=None):
    """``torch.lu_solve(b, LU_data, LU_pivots)`` (deprecated in PyTorch for
    ``linalg.lu_solve(LU, pivots, B)``, whose arguments come in the other order)."""
    _warn_once("lu_solve", "torch.lu_solve is deprecated in favor of linalg.lu_solve and will be removed in a "
               "future PyTorch release. Note that linalg.lu_solve has its arguments reversed.")
    return lu_solve(LU_data, LU_pivots, b, out=out)


def _attach():
    from ._compat import _method
    for name, fn in (("lu", lu_top), ("lu_solve", lu_solve_top)):
        setattr(Tensor, name, _method(fn, name, fn.__doc__))


_attach()
