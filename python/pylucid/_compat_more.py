"""Smaller pieces of PyTorch's surface that tutorial and utility code reaches for: bitwise
functions and shifts on integer tensors, ``gcd``/``lcm``, ``hsplit``/``vsplit``/``dsplit``,
``adjoint`` and ``Tensor.mH``/``H``, ``narrow_copy``, ``masked_scatter``, the in-place shape
methods (``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``), the legacy ``Tensor.new``,
``Tensor.stride(dim)``, ``numpy(force=True)``, layouts and memory formats, ``is_nonzero``,
``is_complex``, and ``empty_strided``.

>>> import pylucid
>>> pylucid.tensor([12]) >> 2, pylucid.gcd(pylucid.tensor([12]), pylucid.tensor([8]))
(tensor([3]), tensor([4]))
>>> x = pylucid.zeros(3, 4)
>>> x.unsqueeze_(0).shape
pylucid.Size([1, 3, 4])
"""
import builtins as _builtins
import numbers as _numbers

import numpy as _np

from . import _C
from ._C import Tensor


def _t(x, op, name="input"):
    """``x`` if it is a Tensor, else a DtypeMismatch (a TypeError) naming the op and argument."""
    if not isinstance(x, Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor for {name}, got {type(x).__name__}")
    return x


def _int(v, op, name):
    if isinstance(v, bool) or not isinstance(v, (int, _np.integer)):
        raise _C.DtypeMismatch(f"{op}: {name} must be an int, got {type(v).__name__}")
    return int(v)


def _real(v, op, name):
    if isinstance(v, bool) or not isinstance(v, _numbers.Real):
        raise _C.DtypeMismatch(f"{op}: {name} must be a number, got {type(v).__name__}")
    return float(v)

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
           "bitwise_right_shift", "gcd", "lcm", "hsplit", "vsplit", "dsplit", "adjoint", "narrow_copy",
           "masked_scatter", "is_nonzero", "is_complex", "empty_strided", "strided",
           "sparse_coo", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
           "layout", "memory_format", "renorm", "unique_consecutive", "cumulative_trapezoid", "vander"]


# ---- layouts and memory formats ---------------------------------------------------------------

class layout:
    """A tensor layout; pylucid has one, ``strided`` (dense). ``sparse_coo`` exists so code can
    compare against it."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"pylucid.{self._name}"


class memory_format:
    """A memory format. Every pylucid tensor is stored row-major, so ``channels_last`` is accepted
    and gives the same values in the default (contiguous) layout."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"pylucid.{self._name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


# ---- integer bit operations -------------------------------------------------------------------

def _int_args(a, b, op):
    """Both operands as numpy integer/bool arrays (a Python int allowed for either)."""
    out = []
    for v in (a, b):
        if isinstance(v, Tensor):
            if v.dtype.is_floating_point:
                raise _C.DtypeMismatch(f"{op}: only integer and bool tensors are supported, got {v.dtype!r}")
            out.append(v.detach().numpy())
        elif isinstance(v, (bool, int, _np.integer)):
            out.append(_np.asarray(v, dtype=bool if isinstance(v, bool) else _np.int64))
        else:
            raise _C.DtypeMismatch(f"{op}: expected a Tensor or an int, got {type(v).__name__}")
    return out


def _from_np(a):
    a = _np.asarray(a, order="C")
    return _C._from_numpy(a if a.dtype == bool else a.astype(_np.int64))


def bitwise_and(input, other):
    """Element-wise AND of integer or bool tensors (``input & other``)."""
    a, b = _int_args(input, other, "bitwise_and")
    return _from_np(_np.bitwise_and(a, b))


def bitwise_or(input, other):
    """Element-wise OR of integer or bool tensors (``input | other``)."""
    a, b = _int_args(input, other, "bitwise_or")
    return _from_np(_np.bitwise_or(a, b))


def bitwise_xor(input, other):
    """Element-wise XOR of integer or bool tensors (``input ^ other``)."""
    a, b = _int_args(input, other, "bitwise_xor")
    return _from_np(_np.bitwise_xor(a, b))


def bitwise_not(input):
    """Element-wise NOT of an integer or bool tensor (``~input``)."""
    (a, _) = _int_args(input, 0, "bitwise_not")
    return _from_np(_np.invert(a))


def bitwise_left_shift(input, other):
    """``input << other`` on int64 (two's complement, the high bits dropped)."""
    a, b = _int_args(input, other, "bitwise_left_shift")
    return _from_np(_np.left_shift(a.astype(_np.int64), b.astype(_np.int64)))


def bitwise_right_shift(input, other):
    """``input >> other`` on int64 (arithmetic: the sign is kept)."""
    a, b = _int_args(input, other, "bitwise_right_shift")
    return _from_np(_np.right_shift(a.astype(_np.int64), b.astype(_np.int64)))


def gcd(input, other):
    """Element-wise greatest common divisor of integer tensors (non-negative)."""
    a, b = _int_args(input, other, "gcd")
    return _from_np(_np.gcd(a.astype(_np.int64), b.astype(_np.int64)))


def lcm(input, other):
    """Element-wise least common multiple of integer tensors (non-negative)."""
    a, b = _int_args(input, other, "lcm")
    return _from_np(_np.lcm(a.astype(_np.int64), b.astype(_np.int64)))


# ---- splitting, transposes, copies ------------------------------------------------------------

def _split_along(input, sections, dim, op, min_dims):
    from ._math_misc import tensor_split
    if input.dim() < min_dims:
        raise _C.LucidError(f"{op} requires a tensor with at least {min_dims} dimension(s), but got a tensor with "
                            f"{input.dim()} dimensions")
    if isinstance(sections, int) and not isinstance(sections, bool) and sections > 0 and input.shape[dim] % sections:
        raise _C.LucidError(f"{op} attempted to split along dimension {dim}, but the size of the dimension "
                            f"{input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):
    """Splits column-wise: along dim 1 (dim 0 for a 1-D tensor), as numpy's hsplit."""
    _t(input, "hsplit")
    return _split_along(input, indices_or_sections, 0 if input.dim() == 1 else 1, "torch.hsplit", 1)


def vsplit(input, indices_or_sections):
    """Splits row-wise, along dim 0 (the tensor must be at least 2-D), as numpy's vsplit."""
    _t(input, "vsplit")
    return _split_along(input, indices_or_sections, 0, "torch.vsplit", 2)


def dsplit(input, indices_or_sections):
    """Splits depth-wise, along dim 2 (the tensor must be at least 3-D), as numpy's dsplit."""
    _t(input, "dsplit")
    return _split_along(input, indices_or_sections, 2, "torch.dsplit", 3)


def adjoint(input):
    """The conjugate transpose of the last two dims; for real tensors, ``input.transpose(-2, -1)``."""
    if _t(input, "adjoint").dim() < 2:
        raise _C.ShapeMismatch(f"adjoint: tensor.adjoint() is only supported on matrices or batches of matrices, got "
                               f"{input.dim()}-D tensor")
    return input.transpose(-2, -1)


def narrow_copy(input, dim, start, length):
    """``input.narrow(dim, start, length)`` as a new tensor (not a view)."""
    return _t(input, "narrow_copy").narrow(dim, start, length).clone()


def masked_scatter(input, mask, source):
    """``input`` with the positions where ``mask`` (broadcast to input's shape) is True filled, in
    row-major order, with consecutive elements of ``source``; differentiable in input and source."""
    _t(input, "masked_scatter")
    _t(source, "masked_scatter", "source")
    if _t(mask, "masked_scatter", "mask").dtype != _C.dtype.bool:
        raise _C.DtypeMismatch(f"masked_scatter: expected a bool mask, got {mask.dtype!r}")
    if source.dtype.is_floating_point != input.dtype.is_floating_point and input.requires_grad:
        raise _C.DtypeMismatch(f"masked_scatter: source ({source.dtype!r}) and input ({input.dtype!r}) dtypes differ")
    m = mask.expand_as(input).reshape(-1)
    idx = m.nonzero().reshape(-1)
    if idx.numel() > source.numel():
        raise _C.ShapeMismatch(f"masked_scatter: the mask selects {idx.numel()} elements but source has only "
                               f"{source.numel()}")
    src = source.reshape(-1)[:idx.numel()].to(input.dtype)
    return input.reshape(-1).index_copy(0, idx, src).view(input.shape)


def renorm(input, p, dim, maxnorm):
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled by
    ``maxnorm / (norm + 1e-7)`` (PyTorch's formula); differentiable."""
    from ._index_ext import _dim
    from .linalg import vector_norm
    d = _dim(dim, _t(input, "renorm").dim(), "renorm")
    p, maxnorm = _real(p, "renorm", "p"), _real(maxnorm, "renorm", "maxnorm")
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"renorm: expected a floating tensor, got {input.dtype!r}")
    if p <= 0:
        raise _C.LucidError(f"renorm: non-positive norm not supported, got p={p}")
    if maxnorm < 0:
        raise _C.LucidError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    others = [i for i in range(input.dim()) if i != d]
    norm = vector_norm(input, p, dim=others, keepdim=True) if others else input.abs()
    scale = (maxnorm / (norm + 1e-7)).masked_fill(norm <= maxnorm, 1.0)
    return input * scale


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses each run of equal consecutive elements (or slices along ``dim``) to one, as
    ``itertools.groupby``; with ``return_inverse`` the run index of every element, with
    ``return_counts`` each run's length."""
    from ._index_ext import _dim
    a = _t(input, "unique_consecutive").detach()
    a = (a.float() if a.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else a).numpy()
    if dim is None:
        flat = a.reshape(-1)
        keep = _np.ones(flat.shape[0], dtype=bool)
        keep[1:] = flat[1:] != flat[:-1]
        values = flat[keep]
        inv_shape = a.shape
    else:
        d = _dim(dim, input.dim(), "unique_consecutive")
        moved = _np.moveaxis(a, d, 0)
        rows = moved.reshape(moved.shape[0], -1)
        keep = _np.ones(rows.shape[0], dtype=bool)
        keep[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        values = _np.moveaxis(moved[keep], 0, d)
        inv_shape = (a.shape[d],)
    out = _C._from_numpy(_np.array(values, order="C")).to(input.dtype)
    extra = []
    if return_inverse:
        extra.append(_from_np((_np.cumsum(keep) - 1).reshape(inv_shape)))
    if return_counts:
        starts = _np.flatnonzero(keep)
        extra.append(_from_np(_np.diff(_np.append(starts, keep.shape[0]))))
    return (out, *extra) if extra else out


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of ``y`` along ``dim`` (one fewer element than ``y``
    there), with sample points ``x`` or spacing ``dx`` (default 1); differentiable."""
    from ._index_ext import _dim
    d = _dim(dim, _t(y, "cumulative_trapezoid", "y").dim(), "cumulative_trapezoid")
    if y.dim() == 0:
        raise _C.ShapeMismatch("cumulative_trapezoid: y must have at least one dim")
    n = y.shape[d]
    avg = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2 if n > 1 else y.narrow(d, 0, 0)
    if x is not None:
        _t(x, "cumulative_trapezoid", "x")
        if x.dim() != 1 and tuple(x.shape) != tuple(y.shape) or x.shape[-1 if x.dim() == 1 else d] != n:
            raise _C.ShapeMismatch(f"cumulative_trapezoid: x of shape {tuple(x.shape)} does not fit y of shape "
                                   f"{tuple(y.shape)} along dim {d}")
        xd = x.dim() - 1 if x.dim() == 1 else d
        step = x.narrow(xd, 1, n - 1) - x.narrow(xd, 0, n - 1)
        if x.dim() == 1 and y.dim() > 1:
            step = step.reshape([n - 1 if i == d else 1 for i in range(y.dim())])
        avg = avg * step
    elif dx is not None:
        avg = avg * _real(dx, "cumulative_trapezoid", "dx")
    return avg.cumsum(d)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N-1), ..., x ** 0`` (the other way
    round with ``increasing``); ``N`` defaults to ``len(x)``."""
    from ._shape import stack
    if _t(x, "vander", "x").dim() != 1:
        raise _C.ShapeMismatch(f"vander: x must be a one-dimensional tensor, got {x.dim()} dims")
    n = x.shape[0] if N is None else _int(N, "vander", "N")
    if n < 0:
        raise _C.LucidError(f"vander: N must be non-negative, got {n}")
    base = x if x.dtype != _C.dtype.bool else x.long()
    cols = [base * 0 + 1 if i == 0 else base ** i for i in range(n)]
    if not cols:
        from ._tensor import empty
        return empty(x.shape[0], 0, dtype=base.dtype)
    out = stack(cols, 1)
    return out if increasing else out.flip(1)


# ---- predicates and factories -----------------------------------------------------------------

def is_nonzero(input):
    """Whether a one-element tensor is non-zero; raises for any other size, as PyTorch does."""
    if _t(input, "is_nonzero").numel() != 1:
        if input.numel() == 0:
            raise _C.LucidError("Boolean value of Tensor with no values is ambiguous")
        raise _C.LucidError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_complex(input):
    """False: pylucid has no complex dtypes."""
    return False


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor of ``size``. pylucid allocates it contiguous; ``stride`` is checked
    for length but not kept (the values are unset either way)."""
    from ._tensor import empty
    if not isinstance(size, (tuple, list)) or not isinstance(stride, (tuple, list)):
        raise _C.DtypeMismatch("empty_strided: size and stride must be sequences of ints")
    if len(tuple(size)) != len(tuple(stride)):
        raise _C.ShapeMismatch(f"empty_strided: mismatch in length of strides and shape ({len(tuple(size))} sizes, "
                               f"{len(tuple(stride))} strides)")
    return empty(*tuple(size), dtype=dtype, device=device, requires_grad=requires_grad)


# ---- Tensor methods ---------------------------------------------------------------------------

def _shape_inplace(op):
    def method(self, *args, **kwargs):
        if self.requires_grad:
            raise _C.LucidError(f"{op}_: changing the shape of a tensor that requires grad in place is not "
                                f"supported; use {op}() (the out-of-place view) instead")
        self.data = getattr(self, op)(*args, **kwargs)
        return self
    method.__name__ = method.__qualname__ = op + "_"
    method.__doc__ = f"In-place {op}: self takes the shape (and strides) of self.{op}(...) and is returned."
    return method


_stride = Tensor.stride
_numpy = Tensor.numpy


def _tensor_stride(self, dim=None):
    """The strides (in elements) of every dim, or of ``dim``."""
    s = _stride(self)
    if dim is None:
        return s
    from ._index_ext import _dim
    return s[_dim(dim, self.dim(), "stride")]


def _tensor_numpy(self, *, force=False):
    """A numpy array sharing this tensor's memory; with ``force=True`` the tensor is detached first
    (and bfloat16 converted to float32), so it works for tensors that require grad."""
    if force:
        t = self.detach()
        return _numpy(t.float() if t.dtype == _C.dtype.bfloat16 else t)
    return _numpy(self)


def _tensor_new(self, *args, **kwargs):
    """The legacy constructor: a tensor of this tensor's dtype, from a sequence (``x.new([1, 2])``)
    or a size (``x.new(2, 3)``, uninitialised; ``x.new()`` is empty)."""
    from ._tensor import empty, tensor
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].to(self.dtype)
    if len(args) == 1 and not isinstance(args[0], int):
        return tensor(args[0], dtype=self.dtype)
    return empty(*(args or (0,)), dtype=self.dtype)


def _apply_(self, callable):
    """Applies the Python function ``callable`` to every element, in place (slow: one call per
    element, as in PyTorch); returns self."""
    from ._tensor import tensor
    if not _builtins.callable(callable):
        raise _C.DtypeMismatch(f"apply_: expected a callable, got {type(callable).__name__}")
    vals = [callable(v) for v in self.detach().reshape(-1).tolist()]
    return self.copy_(tensor(vals, dtype=self.dtype).reshape(self.shape))


def _map_(self, tensor, callable):
    """``self[i] = callable(self[i], tensor[i])`` for every element (``tensor`` broadcast to self's
    shape), in place; returns self."""
    from ._tensor import tensor as _tensor
    _t(tensor, "map_", "tensor")
    if not _builtins.callable(callable):
        raise _C.DtypeMismatch(f"map_: expected a callable, got {type(callable).__name__}")
    other = tensor.expand_as(self).reshape(-1).tolist()
    vals = [callable(a, b) for a, b in zip(self.detach().reshape(-1).tolist(), other)]
    return self.copy_(_tensor(vals, dtype=self.dtype).reshape(self.shape))


def _uniform64(self, generator, op):
    """float64 uniforms in [0, 1), one per element of self, from the generator's stream (what
    PyTorch's per-element samplers draw)."""
    from ._random import rand
    if not self.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{op}: expects a floating tensor, got {self.dtype!r}")
    if self.requires_grad and self.is_leaf:
        raise _C.LucidError(f"{op}: a leaf Variable that requires grad is being used in an in-place operation")
    return rand(tuple(self.shape), dtype=_C.dtype.float64, generator=generator)


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills self with Cauchy samples ``median + sigma * tan(pi * (u - 0.5))``, the draws
    PyTorch's CPU ``cauchy_`` makes for the same seed; returns self."""
    median, sigma = _real(median, "cauchy_", "median"), _real(sigma, "cauchy_", "sigma")
    if sigma <= 0:
        raise _C.LucidError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    u = _uniform64(self, generator, "cauchy_")
    return self.copy_(median + sigma * (_np.pi * (u - 0.5)).tan())


def _geometric_(self, p, *, generator=None):
    """Fills self with geometric samples (trials up to the first success, from 1), as PyTorch's
    CPU ``geometric_`` draws them for the same seed; returns self."""
    p = _real(p, "geometric_", "p")
    if not 0 < p < 1:
        raise _C.LucidError(f"geometric_ expects p to be in (0, 1), got p = {p}")
    u = _uniform64(self, generator, "geometric_")
    return self.copy_((u.log() / _np.log1p(-p)).ceil())


def _share_memory_(self):
    """Returns self: pylucid runs in one process, there is no shared memory to move to."""
    return self


def _is_shared(self):
    """False: pylucid runs in one process and never places tensors in shared memory."""
    return False


def _tensor_is_complex(self):
    """False: pylucid has no complex dtypes."""
    return False


_PROPERTIES = {
    "layout": (lambda self: strided, "The tensor's layout: always pylucid.strided (dense)."),
    "mH": (adjoint, "The conjugate transpose of the last two dims (the transpose, for real tensors)."),
    "H": (lambda self: adjoint(self) if self.dim() == 2 else _h_error(self),
          "The conjugate transpose of a matrix (the transpose, for real tensors)."),
}


def _install():
    for op in ("unsqueeze", "squeeze", "t", "transpose", "swapaxes", "swapdims"):
        setattr(Tensor, op + "_", _shape_inplace(op))
    methods = {"cauchy_": _cauchy_, "geometric_": _geometric_, "apply_": _apply_, "map_": _map_, "share_memory_": _share_memory_, "is_shared": _is_shared,
               "stride": _tensor_stride, "numpy": _tensor_numpy, "new": _tensor_new, "is_complex": _tensor_is_complex,
               "renorm_": _renorm_, "masked_scatter_": _masked_scatter_,
               "__lshift__": _as_method(bitwise_left_shift), "__rshift__": _as_method(bitwise_right_shift),
               "__rlshift__": lambda self, other: bitwise_left_shift(other, self),
               "__rrshift__": lambda self, other: bitwise_right_shift(other, self)}
    for fn in (unique_consecutive, vander, renorm, adjoint, narrow_copy, masked_scatter, hsplit, vsplit, dsplit, bitwise_and, bitwise_or, bitwise_xor,
               bitwise_not, bitwise_left_shift, bitwise_right_shift, gcd, lcm):
        methods[fn.__name__] = _as_method(fn)
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    for name, (get, doc) in _PROPERTIES.items():
        setattr(Tensor, name, property(get, doc=doc))


def _h_error(t):
    raise _C.ShapeMismatch(f"tensor.H is only supported on matrices (2-D tensors), got {t.dim()}-D tensor")


def _as_method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = f"Method form of pylucid.{fn.__name__}."
    setattr(method, "__wrapped__", fn)  # its keywords are fn's
    return method


def _renorm_(self, p, dim, maxnorm):
    """In-place renorm; returns self."""
    return self.copy_(renorm(self, p, dim, maxnorm))


def _masked_scatter_(self, mask, source):
    """In-place masked_scatter: writes ``source``'s elements where ``mask`` is True; returns self."""
    return self.copy_(masked_scatter(self, mask, source))


_install()
