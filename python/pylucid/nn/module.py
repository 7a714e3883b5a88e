"""``Module``: the base class of layers, holding parameters, buffers and sub-modules.

Attributes assigned on a Module are sorted into three ordered registries: Parameters into
``_parameters``, Modules into ``_modules``, tensors given to ``register_buffer`` into
``_buffers``. Everything else (``state_dict``, ``named_parameters``, ``train``, ``zero_grad``)
walks those registries, so the order of definition is the order of iteration.
"""
from collections import OrderedDict

from .. import _C
from .._C import Tensor
from .parameter import Parameter

__all__ = ["Module"]


class Module:
    """Base class of every layer; subclasses assign parameters/sub-modules in ``__init__`` and
    define ``forward``.

    >>> import pylucid
    >>> class Affine(Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = Parameter(pylucid.ones(2))
    ...     def forward(self, x):
    ...         return x * self.scale
    >>> [name for name, _ in Affine().named_parameters()]
    ['scale']
    """

    training: bool

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration --------------------------------------------------------------------

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise _C.LucidError(f"{type(self).__name__}: call super().__init__() before assigning "
                                f"attribute '{name}'")
        if isinstance(value, Parameter):
            self._buffers.pop(name, None)
            self._modules.pop(name, None)
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._parameters.pop(name, None)
            self._buffers.pop(name, None)
            self.__dict__.pop(name, None)
            self._modules[name] = value
        elif name in self._parameters:
            if value is not None:
                raise _C.DtypeMismatch(f"{type(self).__name__}: cannot assign {type(value).__name__} "
                                       f"to parameter '{name}' (expected a Parameter or None)")
            self._parameters[name] = None
        elif name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise _C.DtypeMismatch(f"{type(self).__name__}: cannot assign {type(value).__name__} "
                                       f"to buffer '{name}' (expected a Tensor or None)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for reg in ("_parameters", "_buffers", "_modules"):
            if reg in d and name in d[reg]:
                return d[reg][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for reg in (self._parameters, self._buffers, self._modules):
            if name in reg:
                del reg[name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        """Register ``param`` (a Parameter or None) under ``name``."""
        if param is not None and not isinstance(param, Parameter):
            raise _C.DtypeMismatch(f"register_parameter: '{name}' must be a Parameter or None, "
                                   f"got {type(param).__name__}")
        self._check_name(name, "register_parameter")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Register a tensor that is state but not a parameter (saved in state_dict when
        ``persistent``)."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise _C.DtypeMismatch(f"register_buffer: '{name}' must be a Tensor or None, "
                                   f"got {type(tensor).__name__}")
        self._check_name(name, "register_buffer")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def add_module(self, name, module):
        """Register a sub-module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise _C.DtypeMismatch(f"add_module: '{name}' must be a Module, got {type(module).__name__}")
        self._check_name(name, "add_module")
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, name, op):
        if not isinstance(name, str) or not name or "." in name:
            raise _C.LucidError(f"{op}: name must be a non-empty string without '.', got {name!r}")
        if name in self.__dict__:
            raise _C.LucidError(f"{op}: attribute '{name}' already exists")

    # ---- traversal -----------------------------------------------------------------------

    def named_modules(self, memo=None, prefix=""):
        """(name, module) for this module and every descendant, each once."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name)

    def modules(self):
        """This module and every descendant."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """(name, module) of the direct sub-modules."""
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        """The direct sub-modules."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr, recurse):
        seen = set()
        mods = self.named_modules() if recurse else [("", self)]
        for prefix, m in mods:
            for name, t in getattr(m, attr).items():
                if t is None or id(t) in seen:
                    continue
                seen.add(id(t))
                yield prefix + ("." if prefix else "") + name, t

    def named_parameters(self, prefix="", recurse=True):
        """(qualified name, Parameter), each shared parameter once."""
        for name, p in self._named_members("_parameters", recurse):
            yield prefix + ("." if prefix and name else "") + name, p

    def parameters(self, recurse=True):
        """Every Parameter of this module and its descendants, each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True):
        """(qualified name, buffer tensor)."""
        for name, b in self._named_members("_buffers", recurse):
            yield prefix + ("." if prefix and name else "") + name, b

    def buffers(self, recurse=True):
        """Every buffer of this module and its descendants."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and grads -----------------------------------------------------------------

    def train(self, mode=True):
        """Set training mode (affects Dropout) on this module and its descendants."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self):
        """Set evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Clear the parameters' gradients (to None by default, else to zeros)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.zero_()

    def apply(self, fn):
        """Call ``fn`` on every descendant and then on this module (e.g. for initialisation)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _cast(self, dtype):
        from .. import no_grad

        with no_grad():
            for m in self.modules():
                for name, p in m._parameters.items():
                    if p is not None and p.dtype.is_floating_point and p.dtype != dtype:
                        m._parameters[name] = Parameter(p.detach().to(dtype), p.requires_grad)
                for name, b in m._buffers.items():
                    if b is not None and b.dtype.is_floating_point:
                        m._buffers[name] = b.to(dtype)
        return self

    def to(self, dtype):
        """Convert floating parameters and buffers to ``dtype`` (in place on the module)."""
        return self._cast(dtype)

    def float(self):
        """Floating parameters and buffers to float32."""
        return self._cast(_C.dtype.float32)

    def double(self):
        """Floating parameters and buffers to float64."""
        return self._cast(_C.dtype.float64)

    def half(self):
        """Floating parameters and buffers to float16."""
        return self._cast(_C.dtype.float16)

    def bfloat16(self):
        """Floating parameters and buffers to bfloat16."""
        return self._cast(_C.dtype.bfloat16)

    # ---- state ---------------------------------------------------------------------------

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer by qualified name. Values
        are detached tensors sharing memory with the module (``keep_vars`` keeps Parameters)."""
        out = OrderedDict() if destination is None else destination
        for name, p in self._parameters.items():
            if p is not None:
                out[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                out[prefix + name] = b if keep_vars else b.detach()
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(out, prefix + name + ".", keep_vars)
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copy tensors from ``state_dict`` into this module's parameters and buffers.

        With ``strict`` (default) missing and unexpected keys raise LucidError naming them; a
        shape mismatch always raises ShapeMismatch. Nothing is modified unless every check
        passes. Returns ``(missing_keys, unexpected_keys)``.
        """
        from .. import no_grad

        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append("missing key(s): " + ", ".join(repr(k) for k in missing))
            if unexpected:
                parts.append("unexpected key(s): " + ", ".join(repr(k) for k in unexpected))
            raise _C.LucidError(f"load_state_dict: error(s) loading state_dict for "
                                f"{type(self).__name__}: " + "; ".join(parts))
        for k, t in own.items():
            if k not in state_dict:
                continue
            v = state_dict[k]
            if not isinstance(v, Tensor):
                raise _C.DtypeMismatch(f"load_state_dict: value for '{k}' is a {type(v).__name__}, "
                                       "expected a Tensor")
            if tuple(v.shape) != tuple(t.shape):
                raise _C.ShapeMismatch(f"load_state_dict: size mismatch for '{k}': checkpoint has "
                                       f"shape {list(v.shape)}, the module has {list(t.shape)}")
        with no_grad():
            for k, t in own.items():
                if k in state_dict:
                    t.copy_(state_dict[k])
        return missing, unexpected

    # ---- calling and printing ------------------------------------------------------------

    def forward(self, *args, **kwargs):
        raise _C.LucidError(f"{type(self).__name__}: forward() is not defined")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def extra_repr(self):
        """The text shown inside this module's parentheses in ``repr``."""
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines.extend(extra.split("\n"))
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {sub}")
        if not lines:
            return f"{type(self).__name__}()"
        if len(lines) == 1 and not self._modules:
            return f"{type(self).__name__}({lines[0]})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))
