"""``pylucid.linalg``: the vector and Frobenius norms of PyTorch's ``torch.linalg`` that toy
programs use, over the fused ``norm`` reduction (differentiable).

>>> import pylucid
>>> pylucid.linalg.vector_norm(pylucid.tensor([3.0, 4.0])).item()
5.0
"""
from . import _C
from ._C import Tensor

__all__ = ["norm", "vector_norm"]


def _check(x, op):
    if not isinstance(x, Tensor):
        raise _C.DtypeMismatch(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{op}: expected a floating point tensor, got {x.dtype!r}")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 (PyTorch's names)
    """The ``ord``-norm of ``x`` over ``dim`` (all elements when None) seen as a vector; ``ord``
    may be any positive number, ``inf`` or ``-inf``."""
    _check(x, "vector_norm")
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise _C.DtypeMismatch(f"vector_norm: ord must be a number, got {type(ord).__name__}")
    if ord == float("inf"):
        return x.abs().amax(dim=dim, keepdim=keepdim) if dim is not None else x.abs().max()
    if ord == float("-inf"):
        return x.abs().amin(dim=dim, keepdim=keepdim) if dim is not None else x.abs().min()
    if ord <= 0:
        raise _C.LucidError(f"vector_norm: ord must be positive or +-inf, got {ord}")
    return x.norm(p=float(ord), dim=dim, keepdim=keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002 (PyTorch's names)
    """PyTorch's ``linalg.norm`` for the vector norms (``ord`` a number, ``dim`` an int or None
    with a 1-d input) and the Frobenius norm (``ord`` None or ``'fro'``); other matrix norms
    raise LucidError."""
    _check(A, "norm")
    if ord is None or ord == "fro":
        if ord == "fro" and dim is None and A.ndim != 2:
            raise _C.ShapeMismatch(f"norm: 'fro' needs a 2-d input or two dims, got {A.ndim} dims")
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise _C.LucidError(f"norm: matrix norm ord={ord!r} is not supported (only 'fro')")
    if dim is None and A.ndim != 1:
        raise _C.LucidError("norm: a numeric ord over a matrix is a matrix norm, which is not supported; "
                            "give dim or use vector_norm")
    if isinstance(dim, (tuple, list)) and len(dim) == 2:
        raise _C.LucidError("norm: a numeric ord over two dims is a matrix norm, which is not supported")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)
