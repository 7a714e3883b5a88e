"""Covariance and the small matrix products PyTorch offers beside ``matmul``: ``cov``,
``corrcoef``, ``mv``, ``vdot``, ``inner``, ``addmv``, ``addr``, ``addbmm``, ``chain_matmul`` and
``matrix_power``, composed from differentiable ops (gradients of every order).

>>> import pylucid
>>> pylucid.mv(pylucid.eye(2), pylucid.tensor([3.0, 4.0])).tolist()
[3.0, 4.0]
>>> pylucid.matrix_power(pylucid.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
[[1.0, 3.0], [0.0, 1.0]]
"""
import builtins as _builtins

from . import _C
from ._compat import _method
from ._math_extra import _tensors
from ._math_more import _float_of, _tensor_arg, tensordot
from ._tensor import eye, zeros_like

__all__ = ["cov", "corrcoef", "mv", "vdot", "inner", "addmv", "addr", "addbmm", "chain_matmul", "matrix_power"]


# --- statistics -------------------------------------------------------------------------------

def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the rows of ``input`` (variables) over its columns (observations),
    with integer frequency weights ``fweights`` and observation weights ``aweights``; a 1-d input
    gives a 0-d variance."""
    _tensor_arg("cov", "input", input)
    if input.ndim > 2:
        raise _C.ShapeMismatch(f"cov(): expected input to have two or fewer dimensions but got {input.ndim}")
    x = _float_of(input)
    x2 = x.reshape(1, -1) if x.ndim < 2 else x
    w = None
    if fweights is not None:
        if fweights.dtype.is_floating_point:
            raise _C.DtypeMismatch(f"cov(): expected fweights to have integral dtype but got {fweights.dtype!r}")
        if _builtins.bool((fweights < 0).any()):
            raise _C.LucidError("cov(): fweights cannot be negative")
        w = fweights.to(x.dtype)
    if aweights is not None:
        if not aweights.dtype.is_floating_point:
            raise _C.DtypeMismatch(f"cov(): expected aweights to have floating point dtype but got {aweights.dtype!r}")
        if _builtins.bool((aweights < 0).any()):
            raise _C.LucidError("cov(): aweights cannot be negative")
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        xc = x2 - x2.mean(1, keepdim=True)
        c = (xc @ xc.transpose(0, 1)) / _builtins.max(x2.shape[1] - correction, 0)
    else:
        # numpy's and PyTorch's normalisation: sum(w) - correction * sum(w * aweights) / sum(w).
        wsum = w.sum()
        xc = x2 - (x2 * w).sum(1, keepdim=True) / wsum
        a = w if aweights is None else w * aweights.to(x.dtype)
        norm = wsum - correction * (a.sum() / wsum if aweights is not None else 1)
        c = ((xc * w) @ xc.transpose(0, 1)) / norm.clamp(min=0)
    return c.reshape(()) if input.ndim < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (values clipped to [-1, 1])."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal().sqrt()
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1.0, 1.0)


# --- small linear algebra ---------------------------------------------------------------------

def _check_ndim(op, name, t, ndim):
    _tensor_arg(op, name, t)
    if t.ndim != ndim:
        raise _C.ShapeMismatch(f"{op}: {name} must be {ndim}-d, got shape {tuple(t.shape)}")


def mv(input, vec):
    """The matrix-vector product of an (n, m) matrix and an m-vector."""
    _check_ndim("mv", "input", input, 2)
    _check_ndim("mv", "vec", vec, 1)
    if input.shape[1] != vec.shape[0]:
        raise _C.ShapeMismatch(f"mv: size mismatch, got input ({input.shape[0]}x{input.shape[1]}), "
                               f"vec ({vec.shape[0]})")
    return input @ vec


def vdot(input, other):
    """The dot product of two 1-d tensors (real tensors: the same as :func:`pylucid.dot`)."""
    _check_ndim("vdot", "input", input, 1)
    _check_ndim("vdot", "other", other, 1)
    return _C.dot(input, other)


def inner(input, other):
    """Sums the products over the last dims of both (a 0-d input multiplies)."""
    _tensor_arg("inner", "input", input)
    _tensor_arg("inner", "other", other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise _C.ShapeMismatch(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def _add_scaled(input, prod, beta, alpha):
    """``beta * input + alpha * prod``; with ``beta == 0`` input is ignored (NaN in it does not propagate)."""
    prod = prod if alpha == 1 else alpha * prod
    if beta == 0:
        return prod + zeros_like(input)  # keeps the broadcast shape
    return (input if beta == 1 else beta * input) + prod


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    return _add_scaled(_tensor_arg("addmv", "input", input), mv(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    _check_ndim("addr", "vec1", vec1, 1)
    _check_ndim("addr", "vec2", vec2, 1)
    return _add_scaled(_tensor_arg("addr", "input", input), vec1.unsqueeze(1) * vec2.unsqueeze(0), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]``."""
    _check_ndim("addbmm", "batch1", batch1, 3)
    _check_ndim("addbmm", "batch2", batch2, 3)
    return _add_scaled(_tensor_arg("addbmm", "input", input), _C.bmm(batch1, batch2).sum(0), beta, alpha)


def chain_matmul(*matrices):
    """The product of 2-d matrices left to right (deprecated in PyTorch for ``linalg.multi_dot``)."""
    ms = _tensors("chain_matmul", matrices)
    if not ms:
        raise _C.LucidError("chain_matmul(): Expected one or more matrices")
    out = ms[0]
    for m in ms:
        if m.ndim != 2:
            raise _C.ShapeMismatch(f"chain_matmul(): Tensor dimension is {m.ndim}, expected 2 instead.")
    for m in ms[1:]:
        out = out @ m
    return out


def matrix_power(input, n):
    """The ``n``-th power of a square matrix or batch of them, by repeated squaring; ``n == 0``
    gives the identity and ``n < 0`` the power of the inverse."""
    _tensor_arg("matrix_power", "input", input)
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise _C.ShapeMismatch(f"matrix_power: expected a (batch of) square matrices, got shape {tuple(input.shape)}")
    if n < 0:
        from .linalg import inv
        input, n = inv(input), -n
    if n == 0:
        return eye(input.shape[-1], dtype=input.dtype).expand(*input.shape).clone()
    result, base = None, input
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def _attach():
    for name in ["cov", "corrcoef", "mv", "vdot", "inner", "addmv", "addr", "addbmm", "matrix_power"]:
        if name not in vars(_C.Tensor):
            setattr(_C.Tensor, name, _method(globals()[name], name, globals()[name].__doc__))


_attach()
