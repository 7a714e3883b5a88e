"""The Tensor surface PyTorch scripts touch, written in Python over the C++ ops: legacy
constructors (``Tensor([..])``, ``Tensor(2, 3)``, ``FloatTensor``, ``LongTensor``, ...),
``new_*`` factories, ``repeat``/``tile``/``flip``/``roll``, comparison and logical functions,
``equal``/``allclose``/``isclose``, ``inference_mode``, the methods PyTorch offers for functions
pylucid has, and ``copy.deepcopy``/``pickle`` of tensors.

>>> import pylucid
>>> x = pylucid.Tensor([[1, 2], [3, 4]])
>>> x.dtype, x.repeat(1, 2).tolist()
(pylucid.float32, [[1.0, 2.0, 1.0, 2.0], [3.0, 4.0, 3.0, 4.0]])
>>> pylucid.LongTensor([3, 1]).flip(0).tolist()
[1, 3]
>>> bool(pylucid.allclose(x, x + 1e-9))
True
"""
import builtins as _builtins
import copy as _copy
import functools as _functools
import threading as _threading

import numpy as _np

from . import _C
from ._C import Tensor, dtype
from ._device import _CPU, _check_device, device
from ._tensor import _DEFAULT_DTYPE, _tensor_arg, empty, full, tensor
from .autograd.grad_mode import no_grad

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
           "BoolTensor", "ByteTensor", "Size", "inference_mode", "is_inference_mode_enabled",
           "repeat_interleave", "tile", "flip", "fliplr", "flipud", "roll",
           "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
           "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "equal", "allclose",
           "isclose", "square", "reciprocal", "std_mean", "var_mean", "softmax",
           "log_softmax"]

_orig_init = Tensor.__init__


def _from_np(a):
    """A tensor holding a numpy result; 0-d results (numpy scalars) stay 0-d."""
    return _C._from_numpy(_np.array(a, order="C"))


# ---- legacy constructors ----------------------------------------------------------------------

def _legacy_data(args, d, op):
    """The tensor a legacy constructor builds from its positional arguments."""
    if not args:
        return empty(0, dtype=d)
    if _builtins.all(isinstance(a, int) and not isinstance(a, _builtins.bool) for a in args):
        return empty(*args, dtype=d)
    if len(args) == 1 and isinstance(args[0], tuple) and args[0] and _builtins.all(
            isinstance(a, int) and not isinstance(a, _builtins.bool) for a in args[0]) and isinstance(args[0], Size):
        return empty(*args[0], dtype=d)
    if len(args) == 1:
        if isinstance(args[0], Tensor):
            return args[0] if args[0].dtype == d else args[0].to(d)
        return tensor(args[0], dtype=d)
    raise _C.DtypeMismatch(f"{op}: expected sizes (ints), or data (a sequence, array or Tensor), got "
                           f"{', '.join(type(a).__name__ for a in args)}")


def _tensor_init(self, *args, device=None, requires_grad=False):
    _check_device(device, "Tensor")
    if args and isinstance(args[0], Tensor) and (len(args) == 1 or isinstance(args[1], _builtins.bool)):
        # Tensor(data) aliases data, as Parameter(data) does; Tensor(data, requires_grad) too.
        _orig_init(self, args[0], *args[1:], requires_grad=requires_grad) if len(args) == 1 else \
            _orig_init(self, *args)
        return
    _orig_init(self, _legacy_data(args, _DEFAULT_DTYPE[0], "Tensor"), requires_grad)


_tensor_init.__doc__ = (
    "Tensor(data) for data a Tensor aliases it (Tensor(data, requires_grad) makes a leaf sharing its memory); "
    "PyTorch's legacy forms Tensor([..]) (a copy in the default dtype), Tensor(2, 3) (uninitialised) and "
    "Tensor() (empty) also work.")
Tensor.__init__ = _tensor_init


class _LegacyType(type):
    _dtype: dtype

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls._dtype

    def __call__(cls, *args, device=None):
        _check_device(device, cls.__name__)
        return _legacy_data(args, cls._dtype, cls.__name__)


def _legacy(name, d):
    doc = (f"PyTorch's legacy ``{name}``: ``{name}([..])`` copies data as {d!r}, ``{name}(2, 3)`` makes an "
           f"uninitialised {d!r} tensor; ``isinstance(x, {name})`` checks the dtype.")
    return _LegacyType(name, (), {"_dtype": d, "__doc__": doc, "__module__": "pylucid"})


FloatTensor = _legacy("FloatTensor", dtype.float32)
DoubleTensor = _legacy("DoubleTensor", dtype.float64)
HalfTensor = _legacy("HalfTensor", dtype.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dtype.bfloat16)
LongTensor = _legacy("LongTensor", dtype.int64)
IntTensor = _legacy("IntTensor", dtype.int64)
ByteTensor = _legacy("ByteTensor", dtype.int64)
BoolTensor = _legacy("BoolTensor", dtype.bool)
_LEGACY_BY_NAME = {c.__name__: c for c in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor,
                                           IntTensor, ByteTensor, BoolTensor)}


class Size(tuple):
    """PyTorch's ``torch.Size``, what ``Tensor.shape`` and ``Tensor.size()`` return: a tuple of
    dims (``Size([2, 3])``) with ``numel()``; slicing and concatenation give a Size again.

    >>> import pylucid
    >>> s = pylucid.zeros(2, 3, 4).shape
    >>> s, s[1:], s.numel(), s == (2, 3, 4)
    (pylucid.Size([2, 3, 4]), pylucid.Size([3, 4]), 24, True)
    """

    __slots__ = ()

    def numel(self):
        """The product of the dims."""
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        return Size(tuple.__add__(tuple(other), self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))

    def __repr__(self):
        return f"pylucid.Size({list(self)})"

    __str__ = __repr__


_C._set_size_type(Size)


# ---- grad modes -------------------------------------------------------------------------------

# Whether an inference_mode(True) block is active in this thread (is_inference_mode_enabled).
_INFERENCE = _threading.local()


class inference_mode(no_grad):
    """Context manager (or decorator, with or without parentheses) for inference: records no
    graph, like :class:`pylucid.autograd.no_grad`. ``inference_mode(False)`` leaves grad mode as it is.

    >>> import pylucid
    >>> x = pylucid.ones(2, requires_grad=True)
    >>> with pylucid.inference_mode():
    ...     (x * 2).requires_grad
    False
    """

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, _builtins.bool):
            return cls()(mode)  # bare @inference_mode
        return object.__new__(cls)

    def __init__(self, mode=True):
        self._on = _builtins.bool(mode)

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        self._prev_inference = getattr(_INFERENCE, "on", False)
        _INFERENCE.on = self._on
        if self._on:
            _C._set_grad_enabled(False)
        return self

    def __exit__(self, *exc):
        _INFERENCE.on = self._prev_inference
        _C._set_grad_enabled(self._prev)

    def __call__(self, fn):
        if not callable(fn):
            raise _C.DtypeMismatch(f"inference_mode: can only decorate a function, got {type(fn).__name__}")
        on = self._on

        @_functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(on):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled():
    """True inside :class:`inference_mode` (not inside ``inference_mode(False)`` or ``no_grad``)."""
    return getattr(_INFERENCE, "on", False)


# ---- errors of the Python composites ----------------------------------------------------------

def typed_errors(fn):
    """``fn`` with an AttributeError (what a composite hits when handed None or a number where it
    needs a Tensor) raised as a DtypeMismatch (a TypeError) naming the function, as the C++ ops do."""
    @_functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            raise _C.DtypeMismatch(f"{fn.__name__}: expected Tensor arguments ({e})") from None
    return wrapper


def wrap_public(namespace, names):
    """Applies :func:`typed_errors` to the functions ``names`` of a module's ``namespace``."""
    import inspect
    for n in names:
        if inspect.isfunction(namespace[n]):
            namespace[n] = typed_errors(namespace[n])


# ---- shape helpers --------------------------------------------------------------------------

def _ints(args, op, what="sizes"):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for a in args:
        if isinstance(a, _builtins.bool) or not isinstance(a, int):
            if isinstance(a, Tensor) or hasattr(a, "__index__"):
                continue
            raise _C.DtypeMismatch(f"{op}: {what} must be ints, got {type(a).__name__}")
    return tuple(a.__index__() for a in args)


def _repeat(self, *sizes):
    """This tensor repeated along each dim ``sizes[i]`` times (``sizes`` may have more dims than
    self: leading ones are added); differentiable.

    >>> import pylucid
    >>> pylucid.tensor([1, 2]).repeat(2, 2).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    sizes = _ints(sizes, "repeat")
    if len(sizes) < self.ndim:
        raise _C.ShapeMismatch(f"repeat: number of repeat dims ({len(sizes)}) can not be smaller than the "
                               f"number of tensor dims ({self.ndim})")
    if _builtins.any(s < 0 for s in sizes):
        raise _C.ShapeMismatch(f"repeat: repeats must be non-negative, got {sizes}")
    shape = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
    inter, expanded, final = [], [], []
    for r, s in zip(sizes, shape):
        inter += [1, s]
        expanded += [r, s]
        final.append(r * s)
    return self.reshape(inter).expand(expanded).reshape(final)


def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim (missing leading dims count as 1)."""
    _tensor_arg(input, "tile")
    dims = _ints((dims,) if isinstance(dims, int) else tuple(dims), "tile", "dims")
    dims = (1,) * (input.ndim - len(dims)) + dims
    return _repeat(input, *dims)


def _norm_dim(d, n, op):
    if isinstance(d, _builtins.bool) or not isinstance(d, int):
        raise _C.DtypeMismatch(f"{op}: dims must be ints, got {type(d).__name__}")
    if not -_builtins.max(n, 1) <= d < _builtins.max(n, 1):
        raise _C.IndexOutOfRange(f"{op}: dim {d} out of range for a tensor with {n} dims")
    return d % _builtins.max(n, 1)


def flip(input, dims):
    """``input`` with the order of elements reversed along each of ``dims``; differentiable."""
    _tensor_arg(input, "flip")
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    out = input
    for d in {_norm_dim(d, input.ndim, "flip") for d in dims}:
        if input.ndim == 0:
            continue
        n = input.shape[d]
        out = out.index_select(d, _C._arange(n - 1.0, -1.0, -1.0, dtype.int64)) if n > 1 else out
    return out if out is not input else input.clone()


def fliplr(input):
    """``input`` flipped along dim 1 (left/right); at least 2 dims."""
    if _tensor_arg(input, "fliplr").ndim < 2:
        raise _C.ShapeMismatch("fliplr: input must have at least 2 dims")
    return flip(input, (1,))


def flipud(input):
    """``input`` flipped along dim 0 (up/down); at least 1 dim."""
    if _tensor_arg(input, "flipud").ndim < 1:
        raise _C.ShapeMismatch("flipud: input must have at least 1 dim")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    """``input`` rolled by ``shifts`` along ``dims`` (elements leaving one end re-enter at the
    other); without dims, over the flattened tensor. Differentiable."""
    _tensor_arg(input, "roll")
    if dims is None:
        if not isinstance(shifts, int):
            shifts = _ints(tuple(shifts), "roll", "shifts")
            if len(shifts) != 1:
                raise _C.ShapeMismatch("roll: without dims, shifts must be a single int")
            shifts = shifts[0]
        return roll(input.flatten(), shifts, 0).reshape(input.shape)
    shifts = _ints((shifts,) if isinstance(shifts, int) else tuple(shifts), "roll", "shifts")
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise _C.ShapeMismatch(f"roll: shifts ({len(shifts)}) and dims ({len(dims)}) must have the same length")
    out = input
    for s, d in zip(shifts, dims):
        d = _norm_dim(d, input.ndim, "roll")
        n = input.shape[d] if input.ndim else 1
        s = s % n if n else 0
        if s:
            out = _C.cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out if out is not input else input.clone()


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Each element (or slice along ``dim``) of ``input`` repeated ``repeats`` times in place
    (``repeats`` an int or a 1-d int tensor, one count per slice); flattened when dim is None."""
    _tensor_arg(input, "repeat_interleave")
    if dim is None:
        input, dim = input.flatten(), 0
    dim = _norm_dim(dim, input.ndim, "repeat_interleave")
    n = input.shape[dim] if input.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.dtype != dtype.int64 or repeats.ndim > 1:
            raise _C.DtypeMismatch("repeat_interleave: repeats must be an int or a 1-d int64 tensor")
        counts = _np.broadcast_to(repeats.numpy().reshape(-1), (n,)) if repeats.numel() == 1 else repeats.numpy()
    elif isinstance(repeats, int) and not isinstance(repeats, _builtins.bool):
        counts = _np.full(n, repeats)
    else:
        raise _C.DtypeMismatch(f"repeat_interleave: repeats must be an int or a Tensor, got {type(repeats).__name__}")
    if len(counts) != n or (counts < 0).any():
        raise _C.ShapeMismatch(f"repeat_interleave: repeats must be non-negative with one per slice ({n})")
    idx = _C._from_numpy(_np.repeat(_np.arange(n, dtype=_np.int64), counts))
    return input.index_select(dim, idx)


# ---- comparison and logical functions --------------------------------------------------------

def _operand(x, op, name="other"):
    if isinstance(x, (Tensor, int, float)):
        return x
    raise _C.DtypeMismatch(f"{op}: expected a Tensor or a number for {name}, got {type(x).__name__}")


def _cmp(name, fn, doc):
    def f(input, other):
        _tensor_arg(input, name)
        return fn(input, _operand(other, name))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + " Returns a bool tensor (broadcast shapes)."
    return f


eq = _cmp("eq", lambda a, b: a == b, "input == other, elementwise.")
ne = not_equal = _cmp("ne", lambda a, b: a != b, "input != other, elementwise.")
lt = less = _cmp("lt", lambda a, b: a < b, "input < other, elementwise.")
le = less_equal = _cmp("le", lambda a, b: a <= b, "input <= other, elementwise.")
gt = greater = _cmp("gt", lambda a, b: a > b, "input > other, elementwise.")
ge = greater_equal = _cmp("ge", lambda a, b: a >= b, "input >= other, elementwise.")


def _nonzero_mask(x, op):
    if isinstance(x, Tensor):
        return x if x.dtype == dtype.bool else x != 0
    if isinstance(x, (int, float)):
        return tensor(_builtins.bool(x))
    raise _C.DtypeMismatch(f"{op}: expected a Tensor, got {type(x).__name__}")


def _np_bool(x):
    return _np.asarray(x.numpy())


def logical_and(input, other):
    """True where both are nonzero; a bool tensor."""
    a, b = _nonzero_mask(_tensor_arg(input, "logical_and"), "logical_and"), _nonzero_mask(other, "logical_and")
    return _from_np(_np.logical_and(_np_bool(a), _np_bool(b)))


def logical_or(input, other):
    """True where either is nonzero; a bool tensor."""
    a, b = _nonzero_mask(_tensor_arg(input, "logical_or"), "logical_or"), _nonzero_mask(other, "logical_or")
    return _from_np(_np.logical_or(_np_bool(a), _np_bool(b)))


def logical_xor(input, other):
    """True where exactly one is nonzero; a bool tensor."""
    a, b = _nonzero_mask(_tensor_arg(input, "logical_xor"), "logical_xor"), _nonzero_mask(other, "logical_xor")
    return _from_np(_np.logical_xor(_np_bool(a), _np_bool(b)))


def logical_not(input):
    """True where input is zero; a bool tensor."""
    return _tensor_arg(input, "logical_not") == 0


def _as_np(x, op):
    x = _tensor_arg(x, op).detach()
    return (x.float() if x.dtype == dtype.bfloat16 else x).numpy()


def equal(input, other):
    """True when both tensors have the same shape and the same values (a Python bool)."""
    a, b = _as_np(input, "equal"), _as_np(_tensor_arg(other, "equal", "other"), "equal")
    return a.shape == b.shape and _builtins.bool(_np.array_equal(a, b))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Bool tensor: ``|input - other| <= atol + rtol * |other|`` elementwise (infinities equal only
    to themselves; NaNs equal when ``equal_nan``)."""
    a, b = _as_np(input, "isclose"), _as_np(_tensor_arg(other, "isclose", "other"), "isclose")
    try:
        _np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise _C.ShapeMismatch(f"isclose: shapes {a.shape} and {b.shape} do not broadcast") from None
    return _from_np(_np.isclose(a, b, rtol=float(rtol), atol=float(atol), equal_nan=_builtins.bool(equal_nan)))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when :func:`pylucid.isclose` holds everywhere (a Python bool)."""
    return _builtins.bool(_np.all(isclose(input, other, rtol, atol, equal_nan).numpy()))


# ---- more elementwise --------------------------------------------------------------------

def square(input):
    """input * input, elementwise; differentiable. A bool tensor squares to int64 (PyTorch)."""
    if _tensor_arg(input, "square").dtype == _C.dtype.bool:
        input = input.long()
    return input * input


def reciprocal(input):
    """1 / input, elementwise; differentiable."""
    return 1.0 / _tensor_arg(input, "reciprocal")


def softmax(input, dim, dtype=None):
    """``pylucid.nn.functional.softmax`` under PyTorch's top-level name (``torch.softmax``)."""
    from .nn.functional import softmax as f

    return f(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    """``pylucid.nn.functional.log_softmax`` under PyTorch's top-level name."""
    from .nn.functional import log_softmax as f

    return f(input, dim, dtype=dtype)


def std_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """``(std, mean)`` of ``input`` over ``dim`` (all dims when None), as PyTorch's ``std_mean``."""
    _tensor_arg(input, "std_mean")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return input.std(dim=dim, correction=correction, keepdim=keepdim), input.mean(dim=dim, keepdim=keepdim)


def var_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """``(var, mean)`` of ``input`` over ``dim`` (all dims when None), as PyTorch's ``var_mean``."""
    _tensor_arg(input, "var_mean")
    if unbiased is not None:
        correction = 1 if unbiased else 0
    return input.var(dim=dim, correction=correction, keepdim=keepdim), input.mean(dim=dim, keepdim=keepdim)


# ---- Tensor methods ---------------------------------------------------------------------------

def _new_factory(name, fill):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        _check_device(device, name)
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        t = full(_ints(size, name), fill, dtype=dtype or self.dtype) if fill is not None else \
            empty(*_ints(size, name), dtype=dtype or self.dtype)
        return t.requires_grad_(True) if requires_grad else t
    method.__name__ = method.__qualname__ = name
    what = "uninitialised" if fill is None else f"filled with {fill}"
    method.__doc__ = f"A new tensor of the given size, {what}, with this tensor's dtype unless dtype= is given."
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """A new tensor of ``size`` filled with ``fill_value``, in this tensor's dtype unless given."""
    _check_device(device, "new_full")
    return full(_ints((size,) if isinstance(size, int) else tuple(size), "new_full"), fill_value,
                dtype=dtype or self.dtype, requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new tensor copying ``data``, in this tensor's dtype unless given."""
    _check_device(device, "new_tensor")
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def _int_method(self, memory_format=None):
    """This tensor converted to pylucid's integer dtype, int64 (PyTorch's ``int()`` gives int32;
    pylucid has one integer dtype)."""
    return self.to(dtype.int64)


def _device_prop(self):
    """The device the data lives on: always ``device(type='cpu')`` (compares equal to ``'cpu'``)."""
    return _CPU


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """Raises LucidError: pylucid has no CUDA device (check ``pylucid.cuda.is_available()``)."""
    raise _C.LucidError("cuda: pylucid only has the 'cpu' device; there is no CUDA device")


_type_c = Tensor.type


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """Without an argument, PyTorch's legacy type name (e.g. ``'pylucid.FloatTensor'``); with a dtype,
    a legacy type (``pylucid.LongTensor``) or its name (``'torch.LongTensor'``), this tensor converted."""
    if isinstance(dtype, _LegacyType):
        dtype = dtype._dtype
    elif isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        if name not in _LEGACY_BY_NAME:
            raise _C.DtypeMismatch(f"type: unknown tensor type '{dtype}'")
        dtype = _LEGACY_BY_NAME[name]._dtype
    return _type_c(self, dtype)


_METHOD_DOCS = {
    "mul": "self * other, elementwise with broadcasting (other a Tensor or number).",
    "multiply": "Alias of mul.", "div": "self / other (true division), elementwise with broadcasting.",
    "divide": "Alias of div.", "true_divide": "Alias of div.",
    "pow": "self ** exponent, elementwise with broadcasting (exponent a Tensor or number).",
    "maximum": "The elementwise larger of self and other (NaN propagates).",
    "minimum": "The elementwise smaller of self and other (NaN propagates).",
}


def _method(fn, name=None, doc=None):
    """``fn`` as a Tensor method named ``name`` (``x.name(...)`` is ``fn(x, ...)``); its docstring is
    ``doc``, else the method's entry in _METHOD_DOCS, else fn's."""
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name or fn.__name__
    method.__doc__ = doc if doc is not None else _METHOD_DOCS.get(method.__name__, fn.__doc__)
    setattr(method, "__wrapped__", fn)  # its keywords are fn's
    return method


def _varargs_method(fn, name, what):
    def method(self, *args, **kwargs):
        if kwargs:  # x.flip(dims=(0, 1)): the keyword spelling
            if args or set(kwargs) != {what}:
                raise TypeError(f"{name}() takes {what} as separate ints, one sequence or the keyword {what}=")
            return fn(self, kwargs[what])
        return fn(self, args[0] if len(args) == 1 else args)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Method form of pylucid.{name}; {what} may be given as one sequence or as separate ints."
    return method


def _inplace(fn, name):
    def method(self, *args, **kwargs):
        others = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
        if _C._inplace_records(self, others, name):
            # Recorded as PyTorch records it: computed from a copy of the old value (the op's node
            # may save its input), written back, and self's history moved onto the op's node.
            return _C._rebase_inplace(self, fn(self.clone(), *args, **kwargs), name)
        return self.copy_(fn(self, *args, **kwargs))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"In-place {name[:-1]}: writes the result into self and returns self (recorded by "
                      "autograd; refused on a leaf that requires grad).")
    return method


def _bitwise(np_fn, name):
    def op(self, other):
        if not isinstance(other, (Tensor, _builtins.bool, int)):
            return NotImplemented
        a = self
        b = other if isinstance(other, Tensor) else tensor(other)
        for t in (a, b):
            if t.dtype not in (dtype.bool, dtype.int64):
                raise _C.DtypeMismatch(f"{name}: bitwise ops need bool or integer tensors, got {t.dtype!r}")
        out = np_fn(a.numpy(), b.numpy())
        return _from_np(out)
    op.__name__ = name
    return op


def _invert(self):
    if self.dtype == dtype.bool:
        return self == 0
    if self.dtype != dtype.int64:
        raise _C.DtypeMismatch(f"__invert__: bitwise not needs a bool or integer tensor, got {self.dtype!r}")
    return _from_np(_np.invert(self.numpy()))


# ---- copies: deepcopy and pickle --------------------------------------------------------------

def _state(t):
    t = t.detach()
    arr = (t.float() if t.dtype == dtype.bfloat16 else t).numpy()
    return _np.array(arr, copy=True, order="C"), t.dtype.name


def _rebuild(arr, dtype_name, requires_grad, grad=None):
    t = _C._from_numpy(_np.array(arr, copy=True, order="C"))
    d = getattr(dtype, dtype_name)
    if t.dtype != d:
        t = t.to(d)
    if requires_grad:
        t.requires_grad_(True)
    if grad is not None:
        t.grad = grad
    return t


def _reduce_ex(self, protocol):
    if not self.is_leaf:
        raise _C.LucidError("pickle: only leaf tensors can be pickled (use detach() for a non-leaf tensor)")
    arr, name = _state(self)
    if type(self) is not Tensor:  # Parameter and other subclasses come back as their class
        return (_rebuild_as, (type(self), arr, name, self.requires_grad, self.grad))
    return (_rebuild, (arr, name, self.requires_grad, self.grad))


def _rebuild_as(cls, arr, dtype_name, requires_grad, grad=None):
    t = cls(_rebuild(arr, dtype_name, False), requires_grad)
    if grad is not None:
        t.grad = grad
    return t


def _deepcopy(self, memo):
    """A copy with its own storage, the same dtype, shape, values, requires_grad and a copied grad."""
    if not self.is_leaf:
        raise _C.LucidError("deepcopy: only tensors created explicitly by the user (graph leaves) support "
                            "the deepcopy protocol; detach() first")
    if id(self) in memo:
        return memo[id(self)]
    with no_grad():
        new = self.detach().clone()
    if type(self) is not Tensor:  # Parameter and other subclasses keep their class
        new = type(self)(new, self.requires_grad)
    elif self.requires_grad:
        new.requires_grad_(True)
    memo[id(self)] = new
    if self.grad is not None:
        new.grad = _copy.deepcopy(self.grad, memo)
    for k, v in getattr(self, "__dict__", {}).items():
        setattr(new, k, _copy.deepcopy(v, memo))
    return new


_dtype_reduce = dtype.__reduce_ex__ if "__reduce_ex__" in vars(dtype) else None
dtype.__reduce_ex__ = lambda self, protocol: (getattr, (dtype, self.name))
dtype.__deepcopy__ = lambda self, memo: self
dtype.__copy__ = lambda self: self


def _attach():
    from . import _math, _random, _shape
    funcs = {}
    for mod in (_math, _shape, _random):  # noqa: B007
        funcs.update({n: getattr(mod, n) for n in mod.__all__})
    funcs.update({n: globals()[n] for n in __all__ if n[0].islower()})
    # Functions PyTorch also offers as Tensor methods (x.pow(2), x.eq(y), x.flip(0), ...).
    names = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "maximum",
             "minimum", "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
             "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "equal", "allclose",
             "isclose", "square", "flip", "fliplr", "flipud", "roll", "tile", "repeat_interleave",
             "rsqrt", "sign", "neg", "negative", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh",
             "sigmoid", "clamp", "clip", "gelu", "silu", "isnan", "isfinite", "reciprocal"]
    for n in names:
        if n in funcs and n not in vars(Tensor):
            setattr(Tensor, n, _method(funcs[n], n))
    Tensor.repeat = _repeat
    Tensor.int = _int_method
    for name in ("byte", "char", "short"):  # PyTorch's 8/16-bit integer casts: pylucid's one integer dtype
        setattr(Tensor, name, _int_method)
    Tensor.flip = _varargs_method(flip, "flip", "dims")
    Tensor.tile = _varargs_method(tile, "tile", "dims")
    Tensor.new_zeros = _new_factory("new_zeros", 0)
    Tensor.new_ones = _new_factory("new_ones", 1)
    Tensor.new_empty = _new_factory("new_empty", None)
    Tensor.new_full = _new_full
    Tensor.new_tensor = _new_tensor
    Tensor.device = property(_device_prop)
    Tensor.is_cuda = property(lambda self: False, doc="False: pylucid tensors live on the CPU.")
    Tensor.cuda = _cuda
    Tensor.type = _type
    Tensor.get_device = lambda self: -1
    Tensor.get_device.__doc__ = "-1, PyTorch's answer for a CPU tensor."
    Tensor.ndimension = lambda self: self.ndim
    Tensor.ndimension.__doc__ = "The number of dims; alias of dim()."
    Tensor.__and__ = Tensor.__rand__ = _bitwise(_np.bitwise_and, "__and__")
    Tensor.__or__ = Tensor.__ror__ = _bitwise(_np.bitwise_or, "__or__")
    Tensor.__xor__ = Tensor.__rxor__ = _bitwise(_np.bitwise_xor, "__xor__")
    Tensor.__invert__ = _invert
    Tensor.__reduce_ex__ = _reduce_ex
    Tensor.__deepcopy__ = _deepcopy


_attach()

# The one table of in-place methods: for each name, ``x.<name>_(...)`` computes ``x.<name>(...)``
# and writes it into x through ``_inplace`` (recorded by autograd as PyTorch records it). Names
# whose in-place form the extension defines itself (``add_``, ``mul_``, ``clamp_``, ...) keep it.
INPLACE_OPS = (
    # elementwise math
    "abs", "absolute", "neg", "negative", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
    "square", "reciprocal", "sign", "sgn", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "tanh", "sigmoid", "logit",
    "erf", "erfc", "erfinv", "floor", "ceil", "round", "trunc", "fix", "frac", "deg2rad", "rad2deg", "nan_to_num",
    "clamp_min", "clamp_max", "clip",
    # binary and ternary
    "pow", "multiply", "divide", "true_divide", "subtract", "floor_divide", "remainder", "fmod", "atan2",
    "arctan2", "hypot", "logaddexp", "lerp", "addcmul", "addcdiv", "addmm", "baddbmm",
    # comparisons and logic (the result is converted to self's dtype)
    "eq", "ne", "not_equal", "lt", "less", "le", "less_equal", "gt", "greater", "ge", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
    # scans, triangles, indexing
    "cumsum", "cumprod", "tril", "triu", "index_add", "index_copy", "index_fill", "index_put", "scatter",
    "scatter_reduce", "index_reduce",
)


def _attach_inplace():
    """Adds ``x.<name>_`` for every name of :data:`INPLACE_OPS` pylucid has (called once every module
    that defines Tensor methods is loaded)."""
    for n in INPLACE_OPS:
        if n + "_" not in vars(Tensor) and hasattr(Tensor, n):
            setattr(Tensor, n + "_", _inplace(getattr(Tensor, n), n + "_"))
