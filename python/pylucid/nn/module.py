"""``Module``: the base class of layers, holding parameters, buffers and sub-modules.

Attributes assigned on a Module are sorted into three ordered registries: Parameters into
``_parameters``, Modules into ``_modules``, tensors given to ``register_buffer`` into
``_buffers``. Everything else (``state_dict``, ``named_parameters``, ``train``, ``zero_grad``)
walks those registries, so the order of definition is the order of iteration.
"""
from collections import OrderedDict, namedtuple

from .. import _C
from .._C import Tensor
from ..autograd.hooks import RemovableHandle
from .parameter import Buffer, Parameter

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the named tuple ``(missing_keys, unexpected_keys)``."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, n):
    """Indents every line of ``s`` but the first by ``n`` spaces (blank lines stay empty), as
    PyTorch's module repr does."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join((" " * n + ln) if ln.strip() else "" for ln in lines[1:])


def _parse_to(args, kwargs):
    """The dtype of ``Module.to``'s PyTorch forms: ``to(device)``, ``to(dtype)``,
    ``to(device, dtype)``, ``to(tensor)``, with ``non_blocking``/``memory_format`` accepted."""
    from .._device import _check_device

    dt = None
    for a in args:
        if isinstance(a, _C.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dt = a.dtype
        elif isinstance(a, bool) or a is None:
            continue
        else:
            _check_device(a, "Module.to")
    for k, v in kwargs.items():
        if k == "dtype":
            if v is not None and not isinstance(v, _C.dtype):
                raise _C.DtypeMismatch(f"Module.to: dtype must be a pylucid.dtype, got {type(v).__name__}")
            dt = v if v is not None else dt
        elif k == "device":
            _check_device(v, "Module.to")
        elif k == "tensor":
            dt = v.dtype
        elif k not in ("non_blocking", "memory_format"):
            raise _C.DtypeMismatch(f"Module.to: unexpected keyword argument '{k}'")
    if dt is not None and not dt.is_floating_point:
        raise _C.DtypeMismatch(f"Module.to: only floating point dtypes are accepted, got {dt!r}")
    return dt


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
        for reg in _HOOK_REGISTRIES:
            object.__setattr__(self, reg, OrderedDict())
        object.__setattr__(self, "_hooks_with_kwargs", set())
        object.__setattr__(self, "_hooks_always_call", set())
        object.__setattr__(self, "_hooks_public", set())

    def __setstate__(self, state):
        self.__dict__.update(state)
        for reg in _HOOK_REGISTRIES:  # modules pickled before hooks existed
            self.__dict__.setdefault(reg, OrderedDict())
        self.__dict__.setdefault("_hooks_with_kwargs", set())
        self.__dict__.setdefault("_hooks_always_call", set())
        self.__dict__.setdefault("_hooks_public", set())

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
        elif isinstance(value, Buffer):  # nn.Buffer(...): a buffer, stored as the plain tensor
            self._parameters.pop(name, None)
            self._modules.pop(name, None)
            self.__dict__.pop(name, None)
            self._buffers[name] = value.detach()
            if value.persistent:
                self._non_persistent.discard(name)
            else:
                self._non_persistent.add(name)
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

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) for this module and every descendant, each once (every occurrence
        with ``remove_duplicate=False``)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

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

    def _named_members(self, attr, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, t in getattr(m, attr).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield mod_prefix + ("." if mod_prefix else "") + name, t

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(qualified name, Parameter), each shared parameter once (every occurrence with
        ``remove_duplicate=False``); names start with ``prefix``."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every Parameter of this module and its descendants, each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(qualified name, buffer tensor), persistent or not."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Every buffer of this module and its descendants."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target):
        """The sub-module at the dotted path ``target`` (``""`` is this module); AttributeError
        naming the missing part otherwise, as PyTorch.

        >>> from pylucid import nn
        >>> nn.Sequential(nn.Sequential(nn.Linear(2, 2))).get_submodule("0.0")
        Linear(in_features=2, out_features=2, bias=True)
        """
        if not isinstance(target, str):
            raise _C.DtypeMismatch(f"get_submodule: target must be a str, got {type(target).__name__}")
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def _get_member(self, target, reg, what):
        if not isinstance(target, str):
            raise _C.DtypeMismatch(f"get_{what}: target must be a str, got {type(target).__name__}")
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in getattr(mod, reg):
            raise AttributeError(f"`{name}` is not {'a parameter' if what == 'parameter' else 'a buffer'}")
        return getattr(mod, reg)[name]

    def get_parameter(self, target):
        """The Parameter at the dotted path ``target`` (e.g. ``"0.weight"``)."""
        return self._get_member(target, "_parameters", "parameter")

    def get_buffer(self, target):
        """The buffer at the dotted path ``target``."""
        return self._get_member(target, "_buffers", "buffer")

    # ---- modes and grads -----------------------------------------------------------------

    def train(self, mode=True):
        """Set training mode (affects Dropout) on this module and its descendants; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
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

    def to(self, *args, **kwargs):
        """PyTorch's ``Module.to``: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
        ``to(tensor)``. Floating parameters and buffers are converted to the dtype in place on the
        module; the device must be the CPU (any other raises LucidError naming it). Returns self."""
        dt = _parse_to(args, kwargs)
        return self._cast(dt) if dt is not None else self

    def cpu(self):
        """Returns self: every pylucid module lives on the CPU."""
        return self

    def share_memory(self):
        """Returns self: pylucid runs in one process, so there is nothing to move to shared memory
        (PyTorch's use is sharing a model with worker processes)."""
        return self

    def cuda(self, device=None):
        """Raises LucidError: pylucid has no CUDA device (check ``pylucid.cuda.is_available()``)."""
        raise _C.LucidError("Module.cuda: pylucid only has the 'cpu' device; there is no CUDA device")

    def type(self, dst_type):
        """Converts floating parameters and buffers to ``dst_type`` (a dtype); returns self."""
        if not isinstance(dst_type, _C.dtype):
            raise _C.DtypeMismatch(f"Module.type: expected a pylucid.dtype, got {type(dst_type).__name__}")
        return self._cast(dst_type)

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

    _version = 1  # recorded per module in state_dict()._metadata, as PyTorch's

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to save non-tensor state: what it returns is
        stored under ``<prefix>_extra_state`` in ``state_dict()``."""
        raise _C.LucidError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        """Override (with ``get_extra_state``): receives the ``_extra_state`` entry on load."""
        raise _C.LucidError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Puts this module's own parameters, persistent buffers and extra state (not its
        children's) into ``destination`` under ``prefix``; override to change what is saved."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer by qualified name. Values
        are detached tensors sharing memory with the module (``keep_vars`` keeps Parameters).
        As PyTorch's: each module writes its own entries with ``_save_to_state_dict`` (so
        subclasses may override it), ``_metadata`` records every module's ``_version``, and the
        ``register_state_dict_pre_hook``/``register_state_dict_post_hook`` hooks run around it."""
        if args:  # PyTorch's deprecated positional form (destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hid, hook in list(self._state_dict_hooks.items()):
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                if hid in self._hooks_public:
                    raise _C.LucidError("state_dict post-hook must return None")
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Loads this module's own parameters, persistent buffers and extra state from
        ``state_dict`` (entries under ``prefix``), appending to ``missing_keys``,
        ``unexpected_keys`` and ``error_msgs`` as PyTorch's does; subclasses override it to
        rename or convert old checkpoints' entries before calling it."""
        from .. import no_grad

        for hook in list(self._load_state_dict_pre_hooks.values()):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = [(k, v) for k, v in self._parameters.items() if v is not None]
        local_state += [(k, v) for k, v in self._buffers.items() if v is not None and k not in self._non_persistent]
        assign = local_metadata.get("assign", False)
        for name, param in local_state:
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape!r} from "
                                  f"checkpoint, the shape in current model is {param.shape!r}.")
                continue
            if assign:
                if name in self._parameters:
                    self._parameters[name] = value if isinstance(value, Parameter) else \
                        Parameter(value, param.requires_grad)
                else:
                    self._buffers[name] = value
            else:
                with no_grad():
                    param.copy_(value)
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            own = {k for k, _ in local_state}
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in own:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors from ``state_dict`` into this module's parameters and buffers.

        As PyTorch's: every module loads its own entries with ``_load_from_state_dict`` (which
        subclasses may override), load pre/post hooks run, and the problems are collected: with
        ``strict`` (default) missing and unexpected keys raise LucidError naming them, a shape
        mismatch always raises ShapeMismatch, one line per problem as PyTorch's message (the
        entries that fit are copied, as in PyTorch). Returns the named tuple
        ``(missing_keys, unexpected_keys)``. With ``assign`` the module takes the given tensors
        themselves (as Parameters where it had Parameters) instead of copying into its own.
        """
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise _C.DtypeMismatch(f"load_state_dict: expected a dict-like state_dict, got "
                                   f"{type(state_dict).__name__}")
        missing: list[str] = []
        unexpected: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            local_metadata = dict(metadata.get(prefix[:-1], {})) if metadata is not None else {}
            if assign:
                local_metadata["assign"] = True
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing, unexpected,
                                         error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in list(module._load_state_dict_post_hooks.values()):
                if hook(module, incompatible) is not None:
                    raise _C.LucidError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                        "expected to return new values.")

        load(self, state_dict)
        shape_error = any(m.startswith("size mismatch") for m in error_msgs)
        if strict:
            if unexpected:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                error_msgs.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if error_msgs:  # PyTorch's message: every problem, one per line
            err = _C.ShapeMismatch if shape_error else _C.LucidError
            raise err(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(error_msgs))
        return _IncompatibleKeys(missing, unexpected)

    def register_state_dict_pre_hook(self, hook):
        """Registers ``hook(module, prefix, keep_vars)``, called before this module's entries are
        put into a ``state_dict()``. Returns a ``RemovableHandle``."""
        return self._add_hook("_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook):
        """Registers ``hook(module, state_dict, prefix, local_metadata)``, called after this
        module's (and its children's) entries are in the ``state_dict``; it may edit it in place
        and must return None. Returns a ``RemovableHandle``."""
        handle = self._add_hook("_state_dict_hooks", hook)
        self._hooks_public.add(handle.id)
        return handle

    def _register_state_dict_hook(self, hook):
        """PyTorch's older post hook, which may return a new state_dict."""
        return self._add_hook("_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook):
        """Registers ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)``, called before this module loads its entries (it may
        rename or convert them in ``state_dict``). Returns a ``RemovableHandle``."""
        return self._add_hook("_load_state_dict_pre_hooks", hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """PyTorch's older load pre-hook: ``hook(state_dict, prefix, ...)`` without the module
        unless ``with_module``."""
        return self._add_hook("_load_state_dict_pre_hooks", hook if with_module else
                              (lambda module, *args: hook(*args)))

    def register_load_state_dict_post_hook(self, hook):
        """Registers ``hook(module, incompatible_keys)``, called after this module and its
        children loaded; it may edit ``missing_keys``/``unexpected_keys`` in place (clearing
        them silences strict mode) and must return None. Returns a ``RemovableHandle``."""
        return self._add_hook("_load_state_dict_post_hooks", hook)

    # ---- hooks -----------------------------------------------------------------------------

    def _add_hook(self, reg, hook, prepend=False, with_kwargs=False, always_call=False):
        if not callable(hook):
            raise _C.DtypeMismatch(f"{reg.strip('_')}: hook must be callable, got {type(hook).__name__}")
        hooks = self.__dict__[reg]
        def remove():
            hooks.pop(hid, None)
            self._hooks_with_kwargs.discard(hid)
            self._hooks_always_call.discard(hid)
            self._hooks_public.discard(hid)
        handle = RemovableHandle(remove)
        hid = handle.id  # keys the hook: unique among all handles, as PyTorch's
        hooks[hid] = hook
        if prepend:
            hooks.move_to_end(hid, last=False)
        if with_kwargs:
            self._hooks_with_kwargs.add(hid)
        if always_call:
            self._hooks_always_call.add(hid)
        return handle

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Registers ``hook(module, args)`` (``hook(module, args, kwargs)`` with ``with_kwargs``),
        called before ``forward``; it may return new args (a tuple, or one value that is wrapped
        in a tuple), or ``(args, kwargs)`` with ``with_kwargs``. Returns a ``RemovableHandle``.

        >>> import pylucid
        >>> from pylucid import nn
        >>> lin = nn.Identity()
        >>> h = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        >>> lin(pylucid.ones(2)).tolist()
        [2.0, 2.0]
        >>> h.remove()
        """
        return self._add_hook("_forward_pre_hooks", hook, prepend, with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Registers ``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``), called after ``forward``; a returned value replaces the output. With
        ``always_call`` it also runs when forward raised. Returns a ``RemovableHandle``.

        >>> import pylucid
        >>> from pylucid import nn
        >>> relu = nn.ReLU()
        >>> h = relu.register_forward_hook(lambda m, args, out: out + 1)
        >>> relu(pylucid.tensor([-1.0, 2.0])).tolist()
        [1.0, 3.0]
        """
        return self._add_hook("_forward_hooks", hook, prepend, with_kwargs, always_call)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Registers ``hook(module, grad_output)``, called when the gradients of this module's
        outputs are ready; a returned tuple replaces ``grad_output``. Returns a ``RemovableHandle``."""
        return self._add_hook("_backward_pre_hooks", hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """Registers ``hook(module, grad_input, grad_output)``, called when the gradients of this
        module's tensor inputs are computed (``grad_input`` has one entry per positional tensor
        argument, None where it needs no gradient); a returned tuple replaces ``grad_input``.
        Returns a ``RemovableHandle``.

        >>> import pylucid
        >>> from pylucid import nn
        >>> lin = nn.Linear(2, 1)
        >>> seen = []
        >>> h = lin.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
        >>> lin(pylucid.ones(3, 2, requires_grad=True)).sum().backward()
        >>> seen
        [pylucid.Size([3, 1])]
        """
        return self._add_hook("_backward_hooks", hook, prepend)

    # ---- calling and printing ------------------------------------------------------------

    def forward(self, *args, **kwargs):
        raise _C.LucidError(f"{type(self).__name__}: forward() is not defined")

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"] or d["_backward_pre_hooks"]:
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        kw_ids = self._hooks_with_kwargs
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in kw_ids:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise _C.LucidError("forward pre-hook must return None or a tuple of (new_args, "
                                            f"new_kwargs), but got {res!r}")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw = None
        if self._backward_hooks or self._backward_pre_hooks:
            from ._module_backward_hook import BackwardHook

            bw = BackwardHook(self)
            args = bw.setup_inputs(args)
        try:
            out = self.forward(*args, **kwargs)
        except Exception:
            for hid, hook in list(self._forward_hooks.items()):
                if hid in self._hooks_always_call:
                    try:
                        hook(self, args, kwargs, None) if hid in kw_ids else hook(self, args, None)
                    except Exception:  # noqa: S110  (the forward's error is the one to report)
                        pass
            raise
        for hid, hook in list(self._forward_hooks.items()):
            res = hook(self, args, kwargs, out) if hid in kw_ids else hook(self, args, out)
            if res is not None:
                out = res
        if bw is not None:
            out = bw.setup_outputs(out)
        return out

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text shown inside this module's parentheses in ``repr``."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _addindent(repr(m), 2) for name, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))


_HOOK_REGISTRIES = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
                    "_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
                    "_load_state_dict_post_hooks")
