"""``pylucid.linalg``: PyTorch's ``torch.linalg``. Vector norms over the fused ``norm`` reduction
and matrix norms (``norm``, ``matrix_norm``); the small dense solvers ``inv``, ``solve``, ``det``
and ``slogdet`` here, and the decompositions (``cholesky``, ``qr``, ``eigh``, ``svd``, ``pinv``,
``lstsq``, ``solve_triangular``, ``matrix_exp``, ``lu``, ``lu_factor``, ``lu_solve``, ...): LAPACK
through numpy for the forward, over batches of matrices; backward written with pylucid ops, so
it has gradients of every order. All differentiable.

>>> import pylucid
>>> pylucid.linalg.vector_norm(pylucid.tensor([3.0, 4.0])).item()
5.0
>>> A = pylucid.tensor([[2.0, 1.0], [1.0, 3.0]])
>>> pylucid.linalg.solve(A, pylucid.tensor([3.0, 5.0])).tolist(), round(pylucid.linalg.det(A).item(), 6)
([0.800000011920929, 1.399999976158142], 5.0)
"""
from typing import NamedTuple

import numpy as _np

from . import _C
from ._C import Tensor
from ._linalg_decomp import (LinAlgError, cholesky, cholesky_ex, cond, cross, diagonal, eigh, eigvalsh,
                             householder_product, inv_ex, lstsq, matrix_exp, matrix_norm, matrix_rank, multi_dot, pinv,
                             qr, solve_triangular, svd, svdvals, vecdot)
from ._linalg_decomp import lazy_functions, sum_to
from ._linalg_decomp import linalg_matrix_power as matrix_power
from ._linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve
from ._tensor_str import return_type_repr

__all__ = ["matmul", "solve_ex", "tensorinv", "tensorsolve", "vander", "det", "inv", "norm", "slogdet", "solve", "vector_norm", "LinAlgError", "cholesky", "cholesky_ex", "qr",
           "eigh", "eigvalsh", "svd", "svdvals", "pinv", "lstsq", "matrix_rank", "inv_ex",
           "matrix_exp", "householder_product", "solve_triangular", "matrix_norm", "matrix_power", "multi_dot", "cond",
           "vecdot", "cross", "diagonal", "lu", "lu_factor", "lu_factor_ex", "lu_solve"]


def _check(x, op):
    if not isinstance(x, Tensor):
        raise _C.DtypeMismatch(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{op}: expected a floating point tensor, got {x.dtype!r}")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 (PyTorch's names)
    """The ``ord``-norm of ``x`` over ``dim`` (all elements when None) seen as a vector; ``ord``
    may be any number, ``inf`` or ``-inf``."""
    _check(x, "vector_norm")
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise _C.DtypeMismatch(f"vector_norm: ord must be a number, got {type(ord).__name__}")
    if ord == float("inf"):
        return x.abs().amax(dim=dim, keepdim=keepdim) if dim is not None else x.abs().max()
    if ord == float("-inf"):
        return x.abs().amin(dim=dim, keepdim=keepdim) if dim is not None else x.abs().min()
    return x.norm(p=float(ord), dim=dim, keepdim=keepdim)  # 0: the count of nonzeros; < 0: (sum |x|^ord)^(1/ord)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``linalg.norm``: a vector norm (``ord`` a number, over one dim or a 1-d input; the
    2-norm of everything when ``ord`` and ``dim`` are None) or a matrix norm (over two dims or a
    2-d input: ``'fro'``, ``'nuc'``, ``2``, ``-2``, ``1``, ``-1``, ``inf``, ``-inf``; see
    :func:`matrix_norm`)."""
    _check(A, "norm")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.ndim != 1:
            raise _C.ShapeMismatch(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                                   f"Got {A.ndim}D.")
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise _C.LucidError(f"linalg.norm: a string ord ({ord!r}) is a matrix norm and needs two dims, got dim={dim}")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def _square(A, op):
    _check(A, op)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise _C.ShapeMismatch(f"{op}: A must be batches of square matrices, but they are {A.shape[-2] if A.dim() > 1 else ''} "
                               f"by {A.shape[-1] if A.dim() else ''} matrices (shape {tuple(A.shape)})")


def _np_of(A):
    a = A.detach()
    return (a.float() if a.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else a).numpy()


def _from_np(a, like):
    return _C._from_numpy(_np.asarray(a, order="C")).to(like.dtype)


def _mT(x):
    return x.transpose(-2, -1)


def _fns():
    from .autograd.function import Function

    class Inv(Function):
        _builtin_node = "LinalgInvEx"

        @staticmethod
        def forward(ctx, A):
            try:
                out = _from_np(_np.linalg.inv(_np_of(A)), A)
            except _np.linalg.LinAlgError:
                raise LinAlgError("linalg.inv: The diagonal element is zero, the inversion could not be completed "
                                    "because the input matrix is singular.") from None
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return -(_mT(out) @ g @ _mT(out))

    class Det(Function):
        _builtin_node = "LinalgDet"

        @staticmethod
        def forward(ctx, A):
            ctx.save_for_backward(A)
            return _from_np(_np.asarray(_np.linalg.det(_np_of(A))), A)

        @staticmethod
        def backward(ctx, g):
            (A,) = ctx.saved_tensors
            # d det(A) / dA = det(A) * A^-T (the adjugate transposed) where A is invertible; where
            # it is not, PyTorch's gradient is det(A) (= 0) times a finite matrix: zeros, not an error
            # (pinv is inv for the invertible matrices of such a batch).
            try:
                a_inv_t = _mT(inv(A))
            except LinAlgError:
                a_inv_t = _from_np(_np.linalg.pinv(_np_of(A)).swapaxes(-1, -2), A)
            return (g * det(A)).unsqueeze(-1).unsqueeze(-1) * a_inv_t

    class LogAbsDet(Function):
        _builtin_node = "LinalgSlogdet"

        @staticmethod
        def forward(ctx, A):
            ctx.save_for_backward(A)
            return _from_np(_np.asarray(_np.linalg.slogdet(_np_of(A))[1]), A)

        @staticmethod
        def backward(ctx, g):
            (A,) = ctx.saved_tensors
            return g.unsqueeze(-1).unsqueeze(-1) * _mT(inv(A))

    class Solve(Function):
        _builtin_node = "LinalgSolveEx"

        @staticmethod
        def forward(ctx, A, B):
            ctx.save_for_backward(A, B)
            try:
                return _from_np(_np.linalg.solve(_np_of(A), _np_of(B)), A)
            except _np.linalg.LinAlgError:
                raise LinAlgError("linalg.solve: The solver failed because the input matrix is singular.") from None

        @staticmethod
        def backward(ctx, g):
            A, B = ctx.saved_tensors
            gB = solve(_mT(A), g)
            gA = -(gB @ _mT(solve(A, B)))
            return sum_to(gA, A.shape), sum_to(gB, B.shape)

    return Inv, Det, LogAbsDet, Solve


_fn = lazy_functions(_fns)


def inv(A, *, out=None):
    """The inverse of each square matrix in ``A`` (``(*, n, n)``); raises LucidError for a
    singular matrix. Gradient ``-A^-T g A^-T``."""
    _square(A, "linalg.inv")
    r = _fn(0).apply(A)
    return r if out is None else out.copy_(r)


def solve(A, B, *, left=True, out=None):
    """``X`` with ``A X = B`` (or ``X A = B`` when ``left=False``) for square ``A`` ``(*, n, n)``
    and ``B`` ``(*, n, k)`` or ``(*, n)``, batches broadcast (LAPACK's LU solve); differentiable
    in A and B (``gB = solve(A^T, g)``, ``gA = -gB X^T``)."""
    _square(A, "linalg.solve")
    _check(B, "linalg.solve")
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-1]:
        raise _C.ShapeMismatch(f"linalg.solve: incompatible shapes of A {tuple(A.shape)} and B {tuple(B.shape)}")
    X = _fn(3).apply(A, Bm)
    X = X.squeeze(-1) if vector else X
    return X if out is None else out.copy_(X)


def det(A, *, out=None):
    """The determinant of each square matrix in ``A``; gradient ``g * det(A) * A^-T``."""
    _square(A, "linalg.det")
    r = _fn(1).apply(A)
    return r if out is None else out.copy_(r)


class slogdet_type(NamedTuple):
    """PyTorch's ``torch.return_types.slogdet``: ``(sign, logabsdet)``."""

    sign: Tensor
    logabsdet: Tensor


class linalg_slogdet_type(NamedTuple):
    """PyTorch's ``torch.return_types.linalg_slogdet`` (what ``linalg.slogdet`` returns; the
    top-level ``slogdet`` returns ``slogdet``): ``(sign, logabsdet)``."""

    sign: Tensor
    logabsdet: Tensor


for _t, _n in ((slogdet_type, "slogdet"), (linalg_slogdet_type, "linalg_slogdet")):
    _t.__name__ = _t.__qualname__ = _n
    _t.__module__ = "pylucid.return_types"
    setattr(_t, "__repr__", return_type_repr)  # noqa: B010


def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` of each square matrix in ``A``, a named tuple; differentiable in
    logabsdet (gradient ``g * A^-T``)."""
    _square(A, "linalg.slogdet")
    sign = _from_np(_np.asarray(_np.linalg.slogdet(_np_of(A))[0]), A)
    return linalg_slogdet_type(sign, _fn(2).apply(A))


def slogdet_top(A):
    """``pylucid.slogdet`` / ``Tensor.slogdet``: :func:`slogdet` as PyTorch's ``torch.slogdet``
    returns it (a ``return_types.slogdet``)."""
    return slogdet_type(*slogdet(A))


def logdet(A):
    """``log(det(A))`` (``torch.logdet``): NaN for a negative determinant, -inf for zero."""
    sign, logabsdet = slogdet(A)
    return logabsdet + sign.log()


def _attach():
    from ._compat import _method
    from ._linalg_decomp import cholesky_inverse, cholesky_solve, cholesky_top, pinverse, qr_top, svd_top
    for name, fn in (("det", det), ("inverse", inv), ("logdet", logdet), ("slogdet", slogdet_top),
                     ("cholesky", cholesky_top), ("svd", svd_top), ("qr", qr_top), ("pinverse", pinverse),
                     ("cholesky_solve", cholesky_solve), ("cholesky_inverse", cholesky_inverse),
                     ("matrix_exp", matrix_exp)):
        setattr(Tensor, name, _method(fn, name, fn.__doc__))


_attach()


# ---- compositions PyTorch's tutorials and programs use --------------------------------------------

def matmul(input, other, *, out=None):
    """``torch.linalg.matmul``: the same as :func:`pylucid.matmul`."""
    r = _C.matmul(input, other)
    return r if out is None else out.copy_(r)


class _SolveEx(NamedTuple):
    result: _C.Tensor
    info: _C.Tensor


_SolveEx.__name__ = _SolveEx.__qualname__ = "linalg_solve_ex"
_SolveEx.__repr__ = return_type_repr  # type: ignore[method-assign]  # torch.return_types.linalg_solve_ex(


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)`` with ``result = solve(A, B)``; ``info`` is 0 (int64 zeros per matrix).
    A singular matrix raises as ``solve`` does."""
    from ._tensor import zeros  # noqa: PLC0415

    res = solve(A, B, left=left)
    info = zeros(*A.shape[:-2], dtype=_C.dtype.int64)
    return _SolveEx(res, info)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of ``A`` seen as a map from its first ``ind`` dims to the rest: shape
    ``A.shape[ind:] + A.shape[:ind]`` (differentiable through :func:`inv`)."""
    import math  # noqa: PLC0415

    if ind <= 0:
        raise _C.LucidError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise _C.ShapeMismatch(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                               f"prod(self.shape[:ind]), but got {cols} != {rows}")
    r = inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])
    return r if out is None else out.copy_(r)


def tensorsolve(A, B, dims=None, *, out=None):
    """``X`` with ``tensordot(A, X, X.ndim) == B``: ``A`` reshaped to a square matrix over
    ``B``'s shape (``dims`` moves those dims of ``A`` to the end first)."""
    import math  # noqa: PLC0415

    if dims is not None:
        keep = [d for d in range(A.dim()) if d not in [d % A.dim() for d in dims]]
        A = A.permute(*keep, *[d % A.dim() for d in dims])
    x_shape = tuple(A.shape[B.dim():])
    n = math.prod(B.shape)
    if math.prod(x_shape) != n:
        raise _C.ShapeMismatch(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                               f"prod(self.shape[:other.ndim]), but got {math.prod(x_shape)} != {n}")
    r = solve(A.reshape(n, n), B.reshape(n)).reshape(*x_shape)
    return r if out is None else out.copy_(r)


def vander(x, *, N=None):
    """``torch.linalg.vander``: columns ``x**0, x**1, ..., x**(N-1)`` (increasing powers, batched
    over leading dims)."""
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise _C.LucidError("N must be greater than 1.")
    return _C.stack([x ** k for k in range(n)], -1)
