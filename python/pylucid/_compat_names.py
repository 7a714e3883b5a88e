"""More of PyTorch's top-level names that toy programs and tutorials use: ``unravel_index``,
``scalar_tensor``, ``is_same_size``, ``is_signed``, ``split_with_sizes``, the ``*_scatter``
functions (``select_scatter``, ``slice_scatter``, ``diagonal_scatter``), ``copysign``, ``ldexp``,
``frexp``, the window functions (``hann_window``, ``hamming_window``, ``bartlett_window``,
``blackman_window``, ``kaiser_window``), ``set_default_tensor_type``, the inter-op thread count,
the autocast state functions and a few in-place methods (``nan_to_num_``, ``xlogy_``,
``float_power_``, ``copysign_``, ``ldexp_``).

Everything here is composed from existing differentiable ops, so gradients come from them.

>>> import pylucid
>>> pylucid.unravel_index(pylucid.tensor([4, 5]), (2, 3))
(tensor([1, 1]), tensor([1, 2]))
>>> pylucid.copysign(pylucid.tensor([1.0, -2.0]), -1.0)
tensor([-1., -2.])
"""
import builtins as _builtins
import collections as _collections
import math as _math
import numbers as _numbers
import os as _os
import warnings as _warnings

import numpy as _np

from . import _C
from ._C import Tensor, dtype
from .autograd.function import Function as _Function

__all__ = [
    "bartlett_window",
    "blackman_window",
    "celu_",
    "clear_autocast_cache",
    "conj",
    "conj_physical",
    "copysign",
    "nextafter",
    "diagonal_scatter",
    "e",
    "empty_permuted",
    "frexp",
    "frombuffer",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "get_device",
    "get_num_interop_threads",
    "hamming_window",
    "hann_window",
    "imag",
    "inf",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "is_conj",
    "is_neg",
    "is_same_size",
    "is_signed",
    "is_storage",
    "is_warn_always_enabled",
    "isreal",
    "kaiser_window",
    "ldexp",
    "nan",
    "nan_to_num_",
    "pi",
    "real",
    "resolve_conj",
    "resolve_neg",
    "scalar_tensor",
    "select_scatter",
    "selu_",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
    "set_default_tensor_type",
    "set_num_interop_threads",
    "set_warn_always",
    "slice_scatter",
    "split_with_sizes",
    "threshold_",
    "to_dlpack",
    "typename",
    "unravel_index",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
]


def _t(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor for {name}, got {type(x).__name__}")
    return x


def _default_float():
    from ._tensor import get_default_dtype

    return get_default_dtype()


# ---- indices and sizes ------------------------------------------------------------------------

def unravel_index(indices, shape):
    """Flat indices into a tensor of ``shape`` as a tuple of coordinate tensors, one per dim (each
    shaped like ``indices``). As PyTorch, an index outside ``[0, numel)`` wraps: each coordinate is
    the floor quotient taken modulo its dim's size.

    >>> import pylucid
    >>> pylucid.unravel_index(pylucid.tensor(7), (2, 2, 2))
    (tensor(1), tensor(1), tensor(1))
    """
    _t(indices, "unravel_index", "indices")
    if indices.dtype.is_floating_point or indices.dtype == dtype.bool:
        raise _C.DtypeMismatch(f"expected 'indices' to be integer dtype, but got {indices.dtype!r}")
    if isinstance(shape, (int, _np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not all(isinstance(s, (int, _np.integer)) for s in shape):
        raise _C.DtypeMismatch(f"unravel_index: expected 'shape' to be an int or a sequence of ints, got {shape!r}")
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise _C.ShapeMismatch(f"'shape' cannot have negative values, but got {shape}")
    flat = indices.detach().numpy().astype(_np.int64)
    out, stride = [], 1
    for s in reversed(shape):
        out.append(_np.remainder(_np.floor_divide(flat, stride), s) if s else _np.zeros_like(flat))
        stride *= max(s, 1)
    return tuple(_C._from_numpy(_np.array(a, dtype=_np.int64, order="C")) for a in reversed(out))


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """A 0-d tensor holding the number ``s``, in the default float dtype unless ``dtype`` is given
    (so ``scalar_tensor(3)`` is ``tensor(3.)``, as PyTorch)."""
    from ._device import _check_device
    from ._tensor import full

    _check_device(device, "scalar_tensor")
    if isinstance(s, Tensor):
        if s.numel() != 1:
            raise _C.ShapeMismatch(f"scalar_tensor: expected a number, got a tensor of shape {list(s.shape)}")
        s = s.item()
    if not isinstance(s, _numbers.Real):
        raise _C.DtypeMismatch(f"scalar_tensor: expected a number for s, got {type(s).__name__}")
    out = full((), float(s), dtype=dtype or _default_float())
    if requires_grad:
        out.requires_grad_(True)
    return out


def is_same_size(input, other):
    """True when the two tensors have the same shape."""
    return tuple(_t(input, "is_same_size").shape) == tuple(_t(other, "is_same_size", "other").shape)


def is_signed(input):
    """True when ``input``'s dtype can hold negative values (every dtype but bool; pylucid's
    integer dtype is int64, so ``uint8`` tensors answer True too)."""
    return _t(input, "is_signed").dtype != dtype.bool


def split_with_sizes(input, split_sizes, dim=0):
    """``input`` split along ``dim`` into pieces of the given sizes, which must add up to the
    dim's length (views, as ``split`` with a list)."""
    _t(input, "split_with_sizes")
    sizes = [int(s) for s in split_sizes]
    d = dim + input.dim() if dim < 0 else dim
    if not 0 <= d < _builtins.max(input.dim(), 1):
        raise _C.IndexOutOfRange(f"split_with_sizes: dim {dim} out of range for a {input.dim()}-d tensor")
    n = input.shape[d] if input.dim() else 1
    if any(s < 0 for s in sizes):
        raise _C.LucidError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                            f"split_sizes={sizes}")
    if _builtins.sum(sizes) != n:
        raise _C.LucidError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                            f"dimension {d}), but got split_sizes={sizes}")
    return tuple(input.split(sizes, d))  # one SplitWithSizesBackward node for all pieces


# ---- the *_scatter functions: a copy of input with one view of it replaced by src --------------

def _scatter_into(input, src, view_fn, op):
    _t(input, op)
    _t(src, op, "src")
    out = input.clone()
    view = view_fn(out)
    if tuple(view.shape) != tuple(src.shape):
        raise _C.ShapeMismatch(f"expected src to have a size equal to the slice of self. src size = "
                               f"{list(src.shape)}, slice size = {list(view.shape)}")
    # NOTE: the write goes through a view of the copy, so autograd records it as PyTorch's
    # CopySlices: input's gradient is grad with the view zeroed, src's is grad at the view.
    view.copy_(src.to(input.dtype))
    return out


def select_scatter(input, src, dim, index):
    """A copy of ``input`` whose ``select(dim, index)`` slice is ``src`` (differentiable in both)."""
    return _scatter_into(input, src, lambda t: t.select(dim, index), "select_scatter")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` whose slice ``start:end:step`` along ``dim`` is ``src``."""
    def view(t):
        idx = [_builtins.slice(None)] * t.dim()
        idx[dim] = _builtins.slice(start, end, step)
        return t[tuple(idx)]
    return _scatter_into(input, src, view, "slice_scatter")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` whose ``diagonal(offset, dim1, dim2)`` is ``src``."""
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2), "diagonal_scatter")


# ---- sign and exponent ------------------------------------------------------------------------

def _float_operand(x, ref):
    from ._tensor import tensor

    if isinstance(x, Tensor):
        return x
    if isinstance(x, bool) or not isinstance(x, _numbers.Real):
        raise _C.DtypeMismatch(f"expected a Tensor or a number, got {type(x).__name__}")
    return tensor(float(x), dtype=ref.dtype if ref.dtype.is_floating_point else _default_float())


def _float_result(*ts):
    """The floating dtype PyTorch gives ``copysign``/``ldexp``: the promoted one, or the default
    float dtype when every operand is integral or bool."""
    fl = [t.dtype for t in ts if t.dtype.is_floating_point]
    if not fl:
        return _default_float()
    out = fl[0]
    for d in fl[1:]:
        out = _C.promote_types(out, d)
    return out


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (element-wise; ``other`` may be a number). The sign
    bit counts, so ``-0.0`` gives a negative result. Integer inputs give the default float dtype.
    The gradient flows to ``input`` only (``sign`` ratio, 0 where input is 0), as PyTorch."""
    _t(input, "copysign")
    other = _float_operand(other, input)
    dt = _float_result(input, other)
    a = input.to(dt)
    neg = _C.signbit(other.to(dt)) if other.dtype.is_floating_point else other < 0
    mag = a.abs() + 0.0  # NOTE: abs keeps -0.0's sign bit; adding +0.0 clears it (IEEE: -0 + +0 = +0)
    return _C.where(neg, -mag, mag)


def ldexp(input, other):
    """``input * 2 ** other`` (``other`` a tensor of exponents)."""
    _t(input, "ldexp")
    other = _float_operand(other, input)
    dt = _float_result(input, other)
    two = _C.pow(_float_operand(2.0, input.to(dt)), other.to(dt))
    return input.to(dt) * two


_NP_FLOAT = {"float16": _np.float16, "float32": _np.float32, "float64": _np.float64}


class _Nextafter(_Function):
    _builtin_node = "Nextafter"

    @staticmethod
    def forward(ctx, x, toward):
        kind = _NP_FLOAT[str(x.dtype).rsplit(".", 1)[-1]]
        nums = [_np.asarray(t.detach().to(dtype.float64).numpy()).astype(kind) for t in (x, toward)]
        return _C._from_numpy(_np.array(_np.nextafter(*nums), dtype=_np.float64, order="C")).to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g, g * 0.0  # PyTorch's: the step is treated as a constant


def nextafter(input, other):
    """The next floating-point value after ``input`` toward ``other``, element-wise (both tensors,
    broadcast, in their promoted floating dtype). As PyTorch, the gradient passes to ``input``
    unchanged and ``other`` gets zero."""
    _t(input, "nextafter")
    if not isinstance(other, Tensor):
        raise TypeError(f"nextafter(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    dt = _C.promote_types(input.dtype, other.dtype)
    name = str(dt).rsplit(".", 1)[-1]
    if name not in _NP_FLOAT:
        raise NotImplementedError(f'"nextafter_cpu" not implemented for \'{_TORCH_TYPE_NAMES.get(name, name)}\'')
    from ._math_more import broadcast_tensors

    return _Nextafter.apply(*broadcast_tensors(input.to(dt), other.to(dt)))


_TORCH_TYPE_NAMES = {"int64": "Long", "bool": "Bool", "bfloat16": "BFloat16"}


frexp_result = _collections.namedtuple("frexp", ["mantissa", "exponent"])  # type: ignore[name-match]
frexp_result.__module__ = "pylucid.return_types"


def _frexp_repr(self):
    from ._tensor_str import return_type_repr
    return return_type_repr(self)


frexp_result.__repr__ = _frexp_repr  # type: ignore[method-assign]  # printed as PyTorch's return_types


def frexp(input):
    """Named tuple ``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent`` and
    ``|mantissa|`` in [0.5, 1) (0, inf and NaN give themselves and exponent 0). Exponents are
    pylucid's integer dtype (int64; PyTorch's are int32). The mantissa is differentiable:
    ``grad / 2 ** exponent``."""
    _t(input, "frexp")
    if not input.dtype.is_floating_point:
        raise _C.LucidError("torch.frexp() only supports floating-point dtypes")
    _, e = _np.frexp(input.detach().to(dtype.float64).numpy())
    exponent = _C._from_numpy(_np.array(e.astype(_np.int64), order="C"))
    scale = _C._from_numpy(_np.array(_np.ldexp(1.0, -e), order="C")).to(input.dtype)
    return frexp_result(input * scale, exponent)


# ---- window functions -------------------------------------------------------------------------

def _window_args(op, window_length, dtype_, device, layout):
    from ._device import _check_device

    _check_device(device, op)
    if isinstance(window_length, bool) or not isinstance(window_length, (int, _np.integer)):
        raise _C.DtypeMismatch(f"{op}: window_length must be an int, got {type(window_length).__name__}")
    if window_length < 0:
        raise _C.LucidError(f"{op} requires non-negative window_length, got window_length={window_length}")
    d = dtype_ or _default_float()
    if not d.is_floating_point:
        raise _C.DtypeMismatch(f"{op} expects floating point dtypes, got: {d!r}")
    return int(window_length), d


def _finish_window(w, requires_grad):
    if requires_grad:
        w.requires_grad_(True)
    return w


def _trivial_window(n, d, requires_grad):
    from ._tensor import ones

    return _finish_window(ones(n, dtype=d), requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False, _name="hamming_window"):
    """``alpha - beta * cos(2 pi n / (N - 1))``; ``periodic=True`` computes N + 1 points and
    drops the last (for spectral analysis), ``False`` gives the symmetric window."""
    from ._tensor import arange

    n, d = _window_args(_name, window_length, dtype, device, layout)
    if n <= 1:
        return _trivial_window(n, d, requires_grad)
    m = n + 1 if periodic else n
    # Same order of float operations as PyTorch's kernel, in the requested dtype.
    w = (arange(m, dtype=d) * (_math.pi * 2.0 / (m - 1))).cos() * -beta + alpha
    return _finish_window(w[:n].contiguous(), requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """``0.5 - 0.5 * cos(2 pi n / (N - 1))`` (``periodic`` as in :func:`hamming_window`).

    >>> import pylucid
    >>> pylucid.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad, _name="hann_window")


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """The triangular window ``1 - |2n / (N - 1) - 1|``."""
    from ._tensor import arange

    n, d = _window_args("bartlett_window", window_length, dtype, device, layout)
    if n <= 1:
        return _trivial_window(n, d, requires_grad)
    m = n + 1 if periodic else n
    w = arange(m, dtype=d) * (2.0 / (m - 1))
    half = ((m - 1) >> 1) + 1
    w = _C.cat([w[:half], 2.0 - w[half:]], 0)
    return _finish_window(w[:n].contiguous(), requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    from ._tensor import arange

    n, d = _window_args("blackman_window", window_length, dtype, device, layout)
    if n <= 1:
        return _trivial_window(n, d, requires_grad)
    m = n + 1 if periodic else n
    w = arange(m, dtype=d) * (_math.pi / (m - 1))
    w = (w * 4).cos() * 0.08 - (w * 2).cos() * 0.5 + 0.42
    return _finish_window(w[:n].contiguous(), requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """``I0(beta * sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)`` with ``N = window_length - 1``
    (one more point when ``periodic``), ``I0`` the modified Bessel function of order 0."""
    n, d = _window_args("kaiser_window", window_length, dtype, device, layout)
    if n <= 1:
        return _trivial_window(n, d, requires_grad)
    m = n + 1 if periodic else n
    a = (m - 1) / 2.0
    k = _np.arange(m, dtype=_np.float64)
    w = _np.i0(beta * _np.sqrt(_np.maximum(1.0 - ((k - a) / a) ** 2, 0.0))) / _np.i0(beta)
    return _finish_window(_C._from_numpy(_np.ascontiguousarray(w[:n])).to(d), requires_grad)


# ---- process-wide settings --------------------------------------------------------------------

def set_default_tensor_type(t):
    """Deprecated in PyTorch (use ``set_default_dtype``): ``t`` is a legacy floating tensor type
    (``pylucid.DoubleTensor``) or its name (``"torch.FloatTensor"``); sets the default dtype."""
    from . import _compat
    from ._tensor import set_default_dtype

    _warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                   "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning,
                   stacklevel=2)
    if isinstance(t, str):
        name = t.split(".")
        if len(name) == 3 and name[1] == "cuda":
            raise _C.LucidError(f"set_default_tensor_type: {t} needs a CUDA device; pylucid runs on the CPU only")
        cls = _compat._LEGACY_BY_NAME.get(name[-1]) if name[0] in ("torch", "pylucid") else None
        if cls is None:
            raise _C.DtypeMismatch(f"invalid type: '{t}'")
    else:
        cls = t
    d = getattr(cls, "_dtype", None)
    if not isinstance(cls, _compat._LegacyType) or d is None:
        raise _C.DtypeMismatch(f"invalid type object: only floating-point types are supported as the default "
                               f"type, got {t!r}")
    if not d.is_floating_point:
        raise _C.DtypeMismatch("only floating-point types are supported as the default type")
    set_default_dtype(d)


_INTEROP: dict = {"threads": None}


def get_num_interop_threads():
    """The inter-op thread count PyTorch reports. pylucid runs ops one after another on the
    calling thread (its kernels split work over the pool of :func:`get_num_threads`), so this is
    the number recorded by :func:`set_num_interop_threads`, or the cores this process may use."""
    if _INTEROP["threads"] is not None:
        return _INTEROP["threads"]
    try:
        return len(_os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return _os.cpu_count() or 1


def set_num_interop_threads(nthreads):
    """Records the inter-op thread count (it changes no computation: pylucid has no inter-op pool).
    As in PyTorch it may be set once; a second call raises."""
    if isinstance(nthreads, bool) or not isinstance(nthreads, (int, _np.integer)):
        raise _C.DtypeMismatch(f"set_num_interop_threads: expected an int, got {type(nthreads).__name__}")
    if nthreads <= 0:
        raise _C.LucidError("set_num_interop_threads expects a positive integer")
    if _INTEROP["threads"] is not None:
        raise _C.LucidError("Error: cannot set number of interop threads after parallel work has started or "
                            "set_num_interop_threads called")
    _INTEROP["threads"] = int(nthreads)


# ---- autocast state (PyTorch's functional spelling of what ``autocast`` sets) ------------------

# PyTorch keeps a separate state for CUDA; the device-less calls address it. pylucid has no GPU,
# so that state is only recorded.
_GPU_STATE = {"enabled": False, "dtype": dtype.float16, "cache": True}


def _device_type(device_type, op):
    if device_type is None or device_type == "cuda":
        return "cuda"
    if device_type == "cpu":
        return "cpu"
    raise _C.LucidError(f"{op}: unsupported device_type {device_type!r} (expected 'cpu' or 'cuda')")


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (``"cpu"``); without an argument PyTorch asks
    about CUDA, which is never on here unless set with :func:`set_autocast_enabled`."""
    if _device_type(device_type, "is_autocast_enabled") == "cpu":
        return _C._autocast_state()[0]
    return _GPU_STATE["enabled"]


def set_autocast_enabled(device_type, enabled=None):
    """``set_autocast_enabled("cpu", True)`` switches CPU autocast on for this thread (what
    ``autocast`` does on entry); ``set_autocast_enabled(flag)`` is PyTorch's CUDA form."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    if _device_type(device_type, "set_autocast_enabled") == "cpu":
        _C._set_autocast_state(bool(enabled), _C._autocast_state()[1])
    else:
        _GPU_STATE["enabled"] = bool(enabled)


def get_autocast_dtype(device_type):
    """The dtype autocast runs Promote ops in for ``device_type`` (``"cpu"``: bfloat16 unless set)."""
    if _device_type(device_type, "get_autocast_dtype") == "cpu":
        return _C._autocast_state()[1]
    return _GPU_STATE["dtype"]


def set_autocast_dtype(device_type, dtype):
    """Sets the dtype an ``autocast`` without ``dtype=`` uses for ``device_type``."""
    if not isinstance(dtype, _C.dtype):
        raise _C.DtypeMismatch(f"set_autocast_dtype: expected a dtype, got {type(dtype).__name__}")
    if _device_type(device_type, "set_autocast_dtype") == "cpu":
        _C._set_autocast_state(_C._autocast_state()[0], dtype)
    else:
        _GPU_STATE["dtype"] = dtype


def _deprecated(old, new):
    _warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.", FutureWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    """Deprecated spelling of ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Deprecated spelling of ``set_autocast_enabled("cpu", enabled)``."""
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated spelling of ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Deprecated spelling of ``set_autocast_dtype("cpu", dtype)``."""
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """Deprecated spelling of ``get_autocast_dtype("cuda")`` (recorded only: no GPU here)."""
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """Deprecated spelling of ``set_autocast_dtype("cuda", dtype)`` (recorded only)."""
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled():
    """Whether autocast caches casted weights (a recorded flag: pylucid casts per op)."""
    return _GPU_STATE["cache"]


def set_autocast_cache_enabled(enabled):
    """Records the autocast cache flag (pylucid casts per op and keeps no cache)."""
    _GPU_STATE["cache"] = bool(enabled)


def clear_autocast_cache():
    """Nothing to clear: pylucid's autocast keeps no cache of casted weights."""


# ---- constants, real-tensor forms of the complex helpers, small utilities ------------------------

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan


def conj(input):
    """``input`` itself: pylucid's tensors are real, so conjugation changes nothing."""
    return _t(input, "conj")


def conj_physical(input):
    """A copy of ``input`` (real tensors are their own conjugate)."""
    return _t(input, "conj_physical").clone()


def resolve_conj(input):
    """``input`` itself (no lazy conjugation on real tensors)."""
    return _t(input, "resolve_conj")


def resolve_neg(input):
    """``input`` itself (no lazy negation bit)."""
    return _t(input, "resolve_neg")


def is_conj(input):
    """False: no tensor carries a conjugation bit."""
    _t(input, "is_conj")
    return False


def is_neg(input):
    """False: no tensor carries a negation bit."""
    _t(input, "is_neg")
    return False


def real(input):
    """The real part of a real tensor: the tensor itself."""
    return _t(input, "real")


def imag(input):
    """Refused, as PyTorch refuses it for real tensors (pylucid has no complex dtypes)."""
    _t(input, "imag")
    raise _C.LucidError("imag is not implemented for tensors with non-complex dtypes.")


def isreal(input):
    """All True: every value of a real tensor is real."""
    from ._tensor import ones

    return ones(*_t(input, "isreal").shape, dtype=dtype.bool)


def get_device(input):
    """-1, PyTorch's answer for a CPU tensor."""
    _t(input, "get_device")
    return -1


def typename(obj):
    """PyTorch's type name: ``'torch.FloatTensor'`` style for tensors, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type().replace("pylucid.", "torch.")
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", None) else f"{module}.{name}"


def is_storage(obj):
    """Whether ``obj`` is a storage (what ``Tensor.untyped_storage()`` or ``Tensor.storage()`` returns)."""
    from ._storage import TypedStorage, UntypedStorage

    return isinstance(obj, (TypedStorage, UntypedStorage))


def frombuffer(buffer, *, dtype=None, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of ``buffer`` (an object with the buffer protocol). NOTE:
    PyTorch shares the buffer's memory; pylucid copies it (its tensors own their storage)."""
    import numpy as np

    d = dtype or _default_float()
    np_dtype = {dtype_.float32: np.float32, dtype_.float64: np.float64, dtype_.int64: np.int64,
                dtype_.bool: np.bool_, dtype_.float16: np.float16}.get(d) if isinstance(d, _C.dtype) else None
    if np_dtype is None:
        raise _C.DtypeMismatch(f"frombuffer: dtype {d!r} is not supported (float16, float32, float64, int64, bool)")
    arr: np.ndarray = np.frombuffer(buffer, dtype=np_dtype, count=count, offset=offset)
    if arr.size == 0:
        raise _C.ShapeMismatch("both buffer length (0) and count (-1) must not be 0")
    out = _C._from_numpy(arr.copy())
    if requires_grad:
        out.requires_grad_(True)
    return out


dtype_ = dtype


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor`` (``tensor.__dlpack__()``)."""
    return _t(tensor, "to_dlpack").__dlpack__()


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of ``size``; the requested physical order of dims is accepted, but
    pylucid stores every tensor row-major, so the strides are the contiguous ones."""
    from ._tensor import empty

    size = tuple(size)
    if sorted(physical_layout) != list(range(len(size))):
        raise _C.ShapeMismatch(f"empty_permuted: physical_layout {tuple(physical_layout)} is not a permutation of "
                               f"the {len(size)} dims")
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` (PyTorch's unsafe variant skips view tracking; pylucid's views are always safe)."""
    return _t(input, "unsafe_chunk").chunk(chunks, dim)


def unsafe_split(input, split_size_or_sections, dim=0):
    """``split`` (see :func:`unsafe_chunk`)."""
    return _t(input, "unsafe_split").split(split_size_or_sections, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes`` (see :func:`unsafe_chunk`)."""
    return split_with_sizes(input, split_sizes, dim)


_WARN_ALWAYS = [False]


def set_warn_always(b):
    """Records PyTorch's "warn every time" flag (pylucid's warnings follow Python's filters)."""
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled():
    """The flag :func:`set_warn_always` recorded."""
    return _WARN_ALWAYS[0]


def selu_(input):
    """In-place ``selu``."""
    from .nn import functional as F

    return F.selu(input, inplace=True)


def celu_(input, alpha=1.0):
    """In-place ``celu``."""
    from .nn import functional as F

    return F.celu(input, alpha, inplace=True)


def threshold_(input, threshold, value):
    """In-place ``threshold``."""
    from .nn import functional as F

    return F.threshold(input, threshold, value, inplace=True)


# Top-level in-place functions PyTorch spells ``torch.<op>_(input, ...)``: each calls the method.
_TOP_LEVEL_INPLACE = ["abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "ceil_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "i0_", "log10_", "log1p_", "log2_", "log_", "logit_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "zero_", "fill_", "gcd_", "lcm_", "ldexp_", "xlogy_", "index_put_", "addmv_"]


def _top_level_inplace(name):
    def fn(input, *args, **kwargs):
        return getattr(_t(input, name), name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: in place, returns ``input``."
    return fn


def install_top_level(namespace):
    """Adds the ``torch.<op>_`` functions to ``namespace`` (pylucid's), for methods that exist."""
    for name in _TOP_LEVEL_INPLACE:
        if name not in namespace and hasattr(Tensor, name):
            namespace[name] = _top_level_inplace(name)


# ---- in-place methods -------------------------------------------------------------------------

def _check_inplace_dtype(self, result, name):
    if result.dtype != self.dtype and not self.dtype.is_floating_point and result.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{name}: result type {result.dtype!r} can't be cast to the desired output type "
                               f"{self.dtype!r}")


def _inplace_method(fn, name, check=None):
    from . import _compat

    wrapped = _compat._inplace(fn, name)

    def method(self, *args, **kwargs):
        if check is not None:
            check(self)
        _check_inplace_dtype(self, fn(self.detach(), *[a.detach() if isinstance(a, Tensor) else a for a in args],
                                      **kwargs), name)
        return wrapped(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = wrapped.__doc__
    return method


def nan_to_num_(input, nan=0.0, posinf=None, neginf=None):
    """In-place ``nan_to_num``: returns ``input``."""
    return _t(input, "nan_to_num_").nan_to_num_(nan=nan, posinf=posinf, neginf=neginf)


def _float_power_check(self):
    if self.dtype != dtype.float64:
        raise _C.DtypeMismatch(f"the base given to float_power_ has dtype {self.dtype!r} but the operation's "
                               "result requires dtype pylucid.float64")


def _is_signed_method(self):
    return is_signed(self)


def _split_with_sizes_method(self, split_sizes, dim=0):
    return split_with_sizes(self, split_sizes, dim)


_is_signed_method.__doc__ = is_signed.__doc__
_split_with_sizes_method.__doc__ = split_with_sizes.__doc__


def _is_inference(self):
    """False: pylucid has no inference tensors (``inference_mode`` is ``no_grad``)."""
    return False


def _is_pinned(self, device=None):
    """False: there is no pinned memory without an accelerator."""
    return False


def _pin_memory(self, device=None):
    raise _C.LucidError("Cannot access accelerator device when none is available.")


_pin_memory.__doc__ = "Refused as PyTorch refuses it without an accelerator (pinned memory is for device copies)."


def _attach():
    from . import special

    methods = {"is_signed": _is_signed_method, "split_with_sizes": _split_with_sizes_method,
               "copysign_": _inplace_method(copysign, "copysign_"), "ldexp_": _inplace_method(ldexp, "ldexp_"),
               "nextafter_": _inplace_method(nextafter, "nextafter_"),
               "xlogy_": _inplace_method(special.xlogy, "xlogy_"),
               "float_power_": _inplace_method(special.float_power, "float_power_", _float_power_check)}
    for fn in (select_scatter, slice_scatter, diagonal_scatter, copysign, ldexp, nextafter, frexp, conj,
               conj_physical, resolve_conj, resolve_neg, is_conj, is_neg, isreal, get_device, is_same_size):
        methods[fn.__name__] = fn
    from ._math_misc import heaviside

    methods["heaviside_"] = _inplace_method(heaviside, "heaviside_")
    for name, fn in (("i0_", special.i0), ("sinc_", special.sinc), ("digamma_", special.digamma),
                     ("lgamma_", special.lgamma)):
        methods[name] = _inplace_method(fn, name)
    methods["polygamma_"] = _inplace_method(lambda x, n: special.polygamma(n, x), "polygamma_")
    methods["is_inference"] = _is_inference
    methods["is_pinned"] = _is_pinned
    methods["pin_memory"] = _pin_memory
    from . import _compat_more
    from ._math_linalg import addbmm, addmv, addr

    pairs: list = [("gcd_", _compat_more.gcd), ("lcm_", _compat_more.lcm), ("bitwise_and_", _compat_more.bitwise_and),
                     ("bitwise_or_", _compat_more.bitwise_or), ("bitwise_xor_", _compat_more.bitwise_xor),
                     ("bitwise_not_", _compat_more.bitwise_not),
                     ("bitwise_left_shift_", _compat_more.bitwise_left_shift),
                     ("bitwise_right_shift_", _compat_more.bitwise_right_shift),
                     ("addmv_", addmv), ("addbmm_", addbmm), ("addr_", addr)]
    for name, fn in pairs:
        methods[name] = _inplace_method(fn, name)
    for flag in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mps", "is_xpu", "is_mkldnn",
                 "is_vulkan", "is_ipu", "is_xla", "is_mtia", "is_maia"):
        if flag not in vars(Tensor):
            methods[flag] = property(lambda self: False, doc="False: pylucid tensors are dense CPU tensors.")
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
