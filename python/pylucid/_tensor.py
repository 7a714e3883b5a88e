"""Tensor creation, numpy/DLPack interop and the Python-side Tensor methods.

The Tensor class itself is C++ (``pylucid._C.Tensor``); methods that are pure conveniences
(repr, tolist, dtype shorthands, interop protocols) are attached here.
"""
import builtins as _builtins
import numpy as _np

from . import _C
from ._C import Tensor, dtype
from ._device import _check_device

__all__ = [
    "float16", "half", "bfloat16", "float32", "float", "float64", "double", "int64", "long", "bool",
    "int32", "int16", "int8", "uint8", "short",
    "tensor", "as_tensor", "asarray", "from_numpy", "from_dlpack", "empty", "zeros", "ones", "full",
    "arange", "linspace", "eye", "empty_like", "zeros_like", "ones_like", "full_like", "is_tensor",
    "is_floating_point", "numel", "get_default_dtype", "set_default_dtype", "promote_types", "result_type",
]

dtype.__repr__ = dtype.__str__ = lambda self: f"pylucid.{self.name}"
float16 = half = dtype.float16
bfloat16 = dtype.bfloat16
float32 = dtype.float32
float64 = double = dtype.float64
int64 = long = dtype.int64
globals()["float"] = dtype.float32
globals()["bool"] = _bool_dtype = dtype.bool

# pylucid has one integer dtype: the narrower PyTorch integer names all mean int64 here
# (pylucid.int is bound in __init__, since this module uses the builtin int).
int32 = int16 = int8 = uint8 = short = dtype.int64

promote_types = _C.promote_types


def result_type(tensor1, tensor2):
    """The dtype PyTorch's promotion gives ``tensor1 op tensor2``; either may be a Python number
    (which, like a 0-d tensor, only raises the category: int -> floating)."""
    def as_tensor(v):
        if isinstance(v, Tensor):
            return v
        if isinstance(v, (int, _builtins.float)):
            return tensor(v)
        raise _C.DtypeMismatch(f"result_type: expected a Tensor or a number, got {type(v).__name__}")
    return _C.result_type(as_tensor(tensor1), as_tensor(tensor2))

_DEFAULT_DTYPE = [float32]

# numpy's scalar type of each dtype numpy has (all but bfloat16), from the extension's one map.
_NP_OF = {d: _C._numpy_dtype(d).type for d in dtype.__members__.values() if d != dtype.bfloat16}


def _tensor_arg(x, op, name="input"):
    """``x`` if it is a Tensor, else a DtypeMismatch (a TypeError) naming the op."""
    if not isinstance(x, Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor for {name}, got {type(x).__name__}")
    return x


def _dtype_arg(d, op):
    if d is not None and not isinstance(d, dtype):
        raise _C.DtypeMismatch(f"{op}: dtype must be a pylucid dtype (e.g. pylucid.float32), got {d!r}")
    return d


def get_default_dtype():
    """The dtype of floating tensors made from Python floats and by the float factories
    (``pylucid.float32`` unless :func:`set_default_dtype` changed it)."""
    return _DEFAULT_DTYPE[0]


def set_default_dtype(d):
    """Sets the dtype of floating tensors made from Python floats and by ``zeros``, ``rand``,
    ``arange`` with float bounds, ... (float16, bfloat16, float32 or float64)."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise _C.DtypeMismatch(f"set_default_dtype: expected a floating dtype, got {d!r}")
    _DEFAULT_DTYPE[0] = d


def is_floating_point(input):
    """True when ``input``'s dtype is floating (float16, bfloat16, float32, float64)."""
    return _tensor_arg(input, "is_floating_point").dtype.is_floating_point


def numel(input):
    """The number of elements of ``input``."""
    return _tensor_arg(input, "numel").numel()


def is_tensor(obj):
    """True when ``obj`` is a pylucid Tensor."""
    return isinstance(obj, Tensor)


def _shape(size):
    if len(size) == 1 and not isinstance(size[0], int):
        return tuple(size[0])
    return tuple(size)


def _infer_dtype(arr):
    k = arr.dtype.kind
    if k == "b":
        return dtype.bool
    if k in "iu":
        return dtype.int64
    if k == "f":
        return {2: dtype.float16, 4: dtype.float32, 8: dtype.float64}[arr.dtype.itemsize]
    raise _C.DtypeMismatch(f"tensor: unsupported data of numpy dtype {arr.dtype}")


def from_numpy(array) -> Tensor:
    """A tensor sharing memory with a numpy array (no copy where dtype and strides allow).

    >>> import numpy as np
    >>> a = np.arange(3.0)
    >>> t = from_numpy(a); a[0] = 7.0; t.tolist()
    [7.0, 1.0, 2.0]
    """
    if not isinstance(array, _np.ndarray):
        raise _C.DtypeMismatch(f"from_numpy: expected a numpy.ndarray, got {type(array).__name__}")
    return _C._from_numpy(array)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, numbers, numpy arrays, tensors).

    Python floats become float32, ints int64, bools bool; numpy arrays keep their dtype.

    >>> tensor([[1, 2], [3, 4]]).shape
    pylucid.Size([2, 2])
    >>> tensor([1.5, 2.0]).dtype
    pylucid.float32
    """
    _dtype_arg(dtype, "tensor")
    _check_device(device, "tensor")
    if isinstance(data, Tensor):
        t = data.detach().to(dtype or data.dtype).clone()
    else:
        from_np = isinstance(data, _np.ndarray) or isinstance(data, _np.generic)
        try:
            arr = _np.array(data)
        except (ValueError, TypeError) as e:
            raise _C.ShapeMismatch(f"tensor: cannot build a tensor from {type(data).__name__}: {e}") from None
        if arr.dtype == object:
            raise _C.ShapeMismatch("tensor: data is ragged or holds non-numbers; expected a rectangular "
                                   "nested sequence of numbers")
        if dtype is None:
            dtype = _infer_dtype(arr)
            if not from_np and arr.dtype.kind == "f":
                dtype = _DEFAULT_DTYPE[0]
        if dtype == bfloat16:
            t = _C._from_numpy(_np.asarray(arr, dtype=_np.float32, order="C")).to(bfloat16)
        else:
            t = _C._from_numpy(_np.array(arr, dtype=_NP_OF[dtype], copy=True, order="C"))
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Like :func:`tensor`, but shares memory with a numpy array or tensor when it can."""
    _check_device(device, "as_tensor")
    if isinstance(data, Tensor):
        return data if dtype is None or dtype == data.dtype else data.to(dtype)
    if isinstance(data, _np.ndarray) and (dtype is None or _NP_OF.get(dtype) == data.dtype.type):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False) -> Tensor:
    """A tensor from ``obj`` that shares its memory when it can (``copy=True`` forces a copy,
    ``copy=False`` refuses one)."""
    _check_device(device, "asarray")
    if copy:
        t = tensor(obj, dtype=dtype)
    else:
        t = as_tensor(obj, dtype=dtype)
        if copy is False and not isinstance(obj, (Tensor, _np.ndarray)):
            raise _C.LucidError(f"asarray: copy=False but {type(obj).__name__} data must be copied")
    return _finish(t, requires_grad)


def _finish(t, requires_grad):
    return t.requires_grad_(True) if requires_grad else t


def _factory_dtype(dtype, op, fallback=None):
    """The dtype a factory makes: the one given, else ``fallback``, else the default dtype."""
    _dtype_arg(dtype, op)
    return dtype if dtype is not None else (fallback if fallback is not None else _DEFAULT_DTYPE[0])


def _size_kw(size, kwargs, op):
    """The shape given positionally, or as PyTorch's ``size=`` keyword (``zeros(size=(2, 3))``):
    a var-positional ``*size`` cannot take it by name, so it arrives in ``kwargs``."""
    if not kwargs:
        return size
    bad = sorted(set(kwargs) - {"size"})
    if bad:
        raise TypeError(f"{op}() got an unexpected keyword argument '{bad[0]}'")
    if size:
        raise TypeError(f"{op}() got multiple values for argument 'size'")
    return (kwargs["size"],)


def empty(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False,
          memory_format=None, out=None, **kwargs) -> Tensor:
    """An uninitialised tensor of the given shape (``empty(2, 3)``, ``empty((2, 3))`` or
    ``empty(size=(2, 3))``)."""
    size = _size_kw(size, kwargs, "empty")
    _check_device(device, "empty")
    _no_out(out, "empty")
    return _finish(_C._empty(_shape(size), _factory_dtype(dtype, "empty")), requires_grad)


def _no_out(out, op):
    if out is not None:
        raise _C.LucidError(f"{op}: out= is not supported; assign the result instead")


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
         pin_memory=False, out=None) -> Tensor:
    """A tensor filled with ``fill_value`` (dtype inferred from the value when not given: bool,
    int64, or the default floating dtype)."""
    _check_device(device, "full")
    _no_out(out, "full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = (_bool_dtype if isinstance(fill_value, _builtins.bool)
                 else int64 if isinstance(fill_value, int) else _DEFAULT_DTYPE[0])
    _dtype_arg(dtype, "full")
    if not isinstance(fill_value, (int, _builtins.float)):
        raise _C.DtypeMismatch(f"full: fill_value must be a number, got {type(fill_value).__name__}")
    t = _C._full(tuple(size) if not isinstance(size, int) else (size,), _builtins.float(fill_value), dtype)
    if dtype == int64 and isinstance(fill_value, int) and _builtins.abs(fill_value) > 2 ** 53:
        t = _C._from_numpy(_np.full(t.shape, fill_value, dtype=_np.int64))  # exact beyond 2^53
    return _finish(t, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, layout=None, out=None, **kwargs) -> Tensor:
    """A tensor of zeros (``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``)."""
    size = _size_kw(size, kwargs, "zeros")
    _check_device(device, "zeros")
    _no_out(out, "zeros")
    return full(_shape(size), 0.0, dtype=_factory_dtype(dtype, "zeros"), requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, layout=None, out=None, **kwargs) -> Tensor:
    """A tensor of ones (``ones(2, 3)``, ``ones((2, 3))`` or ``ones(size=(2, 3))``)."""
    size = _size_kw(size, kwargs, "ones")
    _check_device(device, "ones")
    _no_out(out, "ones")
    return full(_shape(size), 1.0, dtype=_factory_dtype(dtype, "ones"), requires_grad=requires_grad)


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, layout=None,
           out=None) -> Tensor:
    """Values from ``start`` (inclusive) to ``end`` (exclusive) by ``step``; int64 when all three
    are ints, else the default floating dtype.

    >>> arange(4).tolist()
    [0, 1, 2, 3]
    """
    _check_device(device, "arange")
    _no_out(out, "arange")
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    for v in vals:
        if not isinstance(v, (int, _builtins.float)):
            raise _C.DtypeMismatch(f"arange: start, end and step must be numbers, got {type(v).__name__}")
    if dtype is None:
        dtype = int64 if _builtins.all(isinstance(v, int) for v in vals) else _DEFAULT_DTYPE[0]
    _dtype_arg(dtype, "arange")
    t = _C._arange(_builtins.float(vals[0]), _builtins.float(vals[1]), _builtins.float(vals[2]), dtype)
    return _finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, layout=None,
             out=None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    _check_device(device, "linspace")
    _no_out(out, "linspace")
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end)]
    t = _C._linspace(_builtins.float(vals[0]), _builtins.float(vals[1]), _index_arg(steps, "linspace", "steps"),
                     _factory_dtype(dtype, "linspace"))
    return _finish(t, requires_grad)


def _index_arg(v, op, what):
    if isinstance(v, _builtins.bool) or not isinstance(v, int):
        if isinstance(v, Tensor) or hasattr(v, "__index__"):
            return v.__index__()
        raise _C.DtypeMismatch(f"{op}: {what} must be an int, got {type(v).__name__}")
    return v


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, layout=None, out=None) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m`` defaults to ``n``).

    >>> eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    _check_device(device, "eye")
    _no_out(out, "eye")
    n = _index_arg(n, "eye", "n")
    m = n if m is None else _index_arg(m, "eye", "m")
    if n < 0 or m < 0:
        raise _C.ShapeMismatch(f"eye: n and m must be non-negative, got n={n}, m={m}")
    t = full((n, m), 0.0, dtype=_factory_dtype(dtype, "eye"))
    k = _builtins.min(n, m)
    if k:
        t.view(-1)[: k * (m + 1) : m + 1] = 1  # the first k rows only: a tall matrix has no more
    return _finish(t, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None) -> Tensor:
    """An uninitialised tensor with ``input``'s shape (and dtype unless given)."""
    _tensor_arg(input, "empty_like")
    return empty(input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
               memory_format=None) -> Tensor:
    """Zeros with ``input``'s shape (and dtype unless given)."""
    _tensor_arg(input, "zeros_like")
    _check_device(device, "zeros_like")
    return full(input.shape, 0.0, dtype=dtype or input.dtype, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None) -> Tensor:
    """Ones with ``input``'s shape (and dtype unless given)."""
    _tensor_arg(input, "ones_like")
    _check_device(device, "ones_like")
    return full(input.shape, 1.0, dtype=dtype or input.dtype, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              memory_format=None) -> Tensor:
    """``fill_value`` with ``input``'s shape (and dtype unless given)."""
    _tensor_arg(input, "full_like")
    _check_device(device, "full_like")
    return full(input.shape, fill_value, dtype=dtype or input.dtype, requires_grad=requires_grad)


def from_dlpack(obj) -> Tensor:
    """A tensor sharing memory with any object that speaks DLPack (numpy, PyTorch, ...)."""
    if isinstance(obj, Tensor):
        return obj
    if not hasattr(obj, "__dlpack__"):
        raise _C.DtypeMismatch(f"from_dlpack: expected an object with __dlpack__, got {type(obj).__name__}")
    return _C._from_numpy(_np.from_dlpack(obj))


def _all(input, dim=None, keepdim=False) -> Tensor:
    """True where every element (along ``dim``) is nonzero; a bool tensor.

    >>> tensor([[1, 0], [2, 3]]).all(dim=1).tolist()
    [False, True]
    """
    zeros = _tensor_arg(input, "all") == 0
    return (zeros.sum() if dim is None else zeros.sum(dim, keepdim)) == 0


def _any(input, dim=None, keepdim=False) -> Tensor:
    """True where some element (along ``dim``) is nonzero; a bool tensor.

    >>> tensor([[1, 0], [0, 0]]).any(dim=1).tolist()
    [True, False]
    """
    nonzero = _tensor_arg(input, "any") != 0
    return (nonzero.sum() if dim is None else nonzero.sum(dim, keepdim)) > 0


globals()["all"] = _all
globals()["any"] = _any
__all__ += ["all", "any"]


# ---- Tensor methods written in Python --------------------------------------------------------

def _numpy_for_display(t):
    t = t.detach()
    if t.dtype == bfloat16:
        t = t.to(float32)
    return t.numpy()


def _repr(self):
    """PyTorch's print format (see ``_tensor_str``): ``tensor([ 1.0000, -2.5000], requires_grad=True)``."""
    from ._tensor_str import node_display_name, tensor_repr
    t = self.detach()
    arr = t.to(float64).numpy() if t.dtype.is_floating_point else t.numpy()
    node = self.grad_fn
    return tensor_repr(self, arr, _DEFAULT_DTYPE[0], None if node is None else node_display_name(node, self))


def _tolist(self):
    """Nested Python lists of Python numbers (a number for a 0-d tensor)."""
    return _numpy_for_display(self).tolist()


def _array(self, dtype=None, copy=None):
    """NumPy's conversion protocol: a view of the data where the layout allows."""
    t = self.detach()
    needs_copy = t.dtype == bfloat16
    if needs_copy and copy is False:
        raise ValueError("__array__: bfloat16 has no numpy dtype, so a copy is required")
    arr = t.to(float32).numpy() if needs_copy else t.numpy()
    if dtype is not None and arr.dtype != _np.dtype(dtype):
        if copy is False:
            raise ValueError(f"__array__: converting {self.dtype} to {dtype} requires a copy")
        return arr.astype(dtype)
    return arr.copy() if copy else arr


def _array_wrap(self, array, context=None, return_scalar=False):
    """NumPy's hook for a ufunc result computed from this tensor (``t * ndarray``, ``np.exp(t)``):
    the result comes back as a tensor, as PyTorch's ``__array_wrap__`` returns it (bool arrays
    as PyTorch's uint8, i.e. pylucid's integer dtype). A tensor that requires grad raises, as in
    PyTorch (numpy would silently drop its gradient)."""
    if self.requires_grad and _C.is_grad_enabled():
        raise _C.LucidError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    if return_scalar:
        return array[()]
    if array.dtype == _np.bool_:
        array = array.astype(_np.int64)
    return from_numpy(array if array.flags.c_contiguous else _np.ascontiguousarray(array))


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack export (zero copy) through numpy's implementation of the protocol."""
    if self.requires_grad:
        raise _C.LucidError("__dlpack__: can't export a tensor that requires grad; use detach()")
    if self.dtype == bfloat16:
        raise _C.DtypeMismatch("__dlpack__: bfloat16 export is not supported; convert with .float()")
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return self.numpy().__dlpack__(stream=stream, **kwargs)


def _dlpack_device(self):
    return (1, 0)  # kDLCPU, device 0


def _size(self, dim=None):
    """The shape, or its length along ``dim``."""
    if dim is None:
        return self.shape
    n = self.ndim
    if not -max(n, 1) <= dim < max(n, 1):
        raise _C.IndexOutOfRange(f"size: dim {dim} out of range for a tensor with {n} dims")
    return self.shape[dim]


# How many post-accumulate-grad hooks are live (autograd/graph.py counts them); read here on every
# backward, so it lives in this module rather than behind an import.
_POST_HOOKS = {"live": 0}


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on
    (only of ``inputs`` when given). ``create_graph=True`` records the backward computation so the
    gradients can be differentiated again; ``retain_graph`` defaults to ``create_graph``."""
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        from .autograd.functional import backward
        backward(self, gradient, retain_graph, create_graph,
                 inputs=[inputs] if isinstance(inputs, Tensor) else inputs)
        return
    if _POST_HOOKS["live"]:  # post-accumulate-grad hooks are registered: they run after the engine
        from .autograd import graph  # noqa: PLC0415

        with graph._accumulation_scope():
            _backward_c(self, gradient, _builtins.bool(retain_graph), _builtins.bool(create_graph))
        return
    _backward_c(self, gradient, _builtins.bool(retain_graph), _builtins.bool(create_graph))


_backward_c = Tensor.backward


def _as(dt):
    def conv(self):
        return self.to(dt)
    conv.__doc__ = f"This tensor converted to {dt!r} (self when it already is)."
    return conv


Tensor.all = _all
Tensor.any = _any
Tensor.__repr__ = _repr
Tensor.__str__ = _repr


def _node_repr(self):
    """As PyTorch prints a grad_fn: ``<AddmmBackward0 object at 0x...>``, with PyTorch's node name."""
    from ._tensor_str import CUSTOM_NODE_NAMES, node_display_name
    name = type(self).__name__ if type(self).__name__ in _NODE_CLASSES else node_display_name(self)
    if name in CUSTOM_NODE_NAMES:
        name = "pylucid.autograd.function." + name
    return f"<{name} object at {id(self):#x}>"


_C.Node.__repr__ = _node_repr

# PyTorch's nodes are instances of one class per kind (type(y.grad_fn).__name__ == "MulBackward0").
# A plain node object is given, when Python first sees it, a subclass of Node with the name its
# repr shows; nodes with a class of their own (AccumulateGrad, MaxBackward0, ...) keep it.
_NODE_CLASSES: dict = {}


def _classed(node, out=None):
    if type(node) is _C.Node:  # not yet seen from Python (a named node keeps its class)
        from ._tensor_str import CUSTOM_NODE_NAMES, node_display_name
        name = node_display_name(node, out)
        cls = _NODE_CLASSES.get(name)
        if cls is None:
            cls = _NODE_CLASSES[name] = _C._node_subclass(name)
            if name in CUSTOM_NODE_NAMES:
                cls.__module__ = "pylucid.autograd.function"
        node.__class__ = cls
    return node


_grad_fn_of = Tensor.__dict__["grad_fn"].fget
_next_functions_of = _C.Node.__dict__["next_functions"].fget


def _grad_fn(self) -> _C.Node | None:
    """The backward node that produced this tensor; None for a leaf. Its class is named as
    PyTorch's (``MulBackward0``), a subclass of ``autograd.graph.Node``."""
    return _classed(_grad_fn_of(self), self)


def _next_functions(self) -> tuple:
    return tuple((_classed(n), i) for n, i in _next_functions_of(self))


_next_functions.__doc__ = _C.Node.__dict__["next_functions"].__doc__
Tensor.grad_fn = property(_grad_fn)
_C.Node.next_functions = property(_next_functions)
Tensor.tolist = _tolist
Tensor.__array__ = _array
Tensor.__array_wrap__ = _array_wrap
Tensor.__array_priority__ = 1000  # numpy defers to Tensor's reflected operators
Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
Tensor.size = _size
Tensor.backward = _backward
Tensor.float = _as(float32)
Tensor.double = _as(float64)
Tensor.half = _as(float16)
Tensor.bfloat16 = _as(bfloat16)
Tensor.long = _as(int64)
Tensor.bool = _as(dtype.bool)


def _is_floating_point(self):
    """True when the dtype is float16, bfloat16, float32 or float64."""
    return self.dtype.is_floating_point


def _device(self):
    """The device the data lives on, always ``'cpu'`` (a string, where PyTorch has torch.device)."""
    return "cpu"


def _cpu(self):
    """This tensor itself: pylucid tensors are always on the CPU (PyTorch returns self there too)."""
    return self


def _type_as(self, other):
    """This tensor converted to ``other``'s dtype (self when it already has it); differentiable."""
    return self.to(_tensor_arg(other, "type_as", "other").dtype)


def _nelement(self):
    """The number of elements; alias of ``numel()``."""
    return self.numel()


Tensor.is_floating_point = _is_floating_point
Tensor.device = property(_device)
Tensor.cpu = _cpu
Tensor.type_as = _type_as
Tensor.nelement = _nelement


def _format(self, spec):
    """As PyTorch: a 0-d tensor formats as its Python number (``f"{loss}"`` prints ``0.6931...``,
    ``f"{loss:.3f}"`` ``0.693``); other tensors format as their ``str``."""
    if self.ndim == 0 or (spec and self.numel() == 1):  # the second: lenient where PyTorch raises
        return format(self.item(), spec)
    return format(str(self), spec)


Tensor.__format__ = _format


def _real(self):
    """The real part: the tensor itself (pylucid has no complex dtypes)."""
    return self


def _imag(self):
    """The imaginary part: raises, as PyTorch does for a tensor of a real dtype."""
    raise _C.LucidError("imag is not implemented for tensors with non-complex dtypes.")


def _to_dense(self, dtype=None, *, masked_grad=True):
    """The tensor itself (every pylucid tensor is dense), converted to ``dtype`` if given."""
    return self if dtype is None else self.to(_dtype_arg(dtype, "to_dense"))


def _put_(self, index, source, accumulate=False):
    """Writes ``source`` into this tensor at the flat (row-major) positions ``index``, adding to
    what is there when ``accumulate`` (repeated positions then add up); negative positions count
    from the end. In place; returns this tensor."""
    idx = _tensor_arg(index, "put_", "index").reshape(-1)
    src = _tensor_arg(source, "put_", "source").reshape(-1).to(self.dtype)
    flat = self.view(-1) if self.is_contiguous() else self.reshape(-1).clone()
    if idx.numel() != src.numel():
        raise _C.ShapeMismatch(f"put_: expected source to have as many elements as index ({idx.numel()}), "
                               f"got {src.numel()}")
    flat.index_put_((idx,), src, accumulate=accumulate)
    if not self.is_contiguous():
        self.copy_(flat.view(self.shape))
    return self


Tensor.real = property(_real)
Tensor.imag = property(_imag)
Tensor.to_dense = _to_dense
Tensor.put_ = _put_
