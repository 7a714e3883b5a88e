"""Containers: ``Sequential`` (chains its modules), ``ModuleList`` and ``ModuleDict`` (hold
modules so their parameters are registered, without defining a forward), ``ParameterList`` and
``ParameterDict`` (the same for parameters)."""
import operator
from typing import Any
from collections import OrderedDict

from ... import _C
from ..._C import Tensor
from ..module import Module, _addindent
from ..parameter import Parameter

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _index(idx, n, cls):
    try:
        idx = operator.index(idx)
    except TypeError:
        raise _C.DtypeMismatch(f"{cls}: index must be an int or a slice, got {type(idx).__name__}") from None
    if not -n <= idx < n:
        raise _C.IndexOutOfRange(f"{cls}: index {idx} is out of range for length {n}")
    return idx % n


class Sequential(Module):
    """Applies its modules in order: ``Sequential(a, b)(x) == b(a(x))``. Also built from an
    ``OrderedDict`` of named modules.

    >>> import pylucid
    >>> from pylucid import nn
    >>> net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    >>> net(pylucid.ones(3, 2)).shape
    pylucid.Size([3, 1])
    >>> net[0]
    Linear(in_features=2, out_features=4, bias=True)
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (OrderedDict, dict)):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_index(idx, len(self), "Sequential")]
        self._modules[key] = _check_module(module, "Sequential")

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        targets = keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "Sequential")]]
        for k in targets:
            del self._modules[k]
        # Renumber so indices stay 0..n-1 (as PyTorch does).
        items = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def append(self, module):
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), _check_module(module, "Sequential"))
        return self

    def extend(self, modules):
        """Append every module of an iterable."""
        for m in modules:
            self.append(m)
        return self

    def pop(self, index):
        """Remove the module at ``index`` and return it."""
        m = self[index]
        del self[index]
        return m

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise _C.DtypeMismatch(f"Sequential: can only add a Sequential, got {type(other).__name__}")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise _C.DtypeMismatch(f"Sequential: can only add a Sequential, got {type(other).__name__}")
        return self.extend(list(other))

    def insert(self, index, module):
        """Insert ``module`` before position ``index``."""
        n = len(self)
        if not -n <= index <= n:
            raise _C.IndexOutOfRange(f"Sequential.insert: index {index} is out of range for length {n}")
        index = index % (n + 1) if index < 0 else index
        items = list(self._modules.values())
        items.insert(index, _check_module(module, "Sequential"))
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m
        return self


def _check_module(m, cls):
    if not isinstance(m, Module):
        raise _C.DtypeMismatch(f"{cls}: expected a Module, got {type(m).__name__}")
    return m


class ModuleList(Module):
    """A list of modules whose parameters are registered with the parent module.

    >>> from pylucid import nn
    >>> layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        self._modules[str(_index(idx, len(self), "ModuleList"))] = _check_module(module, "ModuleList")

    def __delitem__(self, idx):
        items = list(self._modules.values())
        if isinstance(idx, slice):
            del items[idx]
        else:
            del items[_index(idx, len(self), "ModuleList")]
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def append(self, module):
        """Add ``module`` at the end."""
        self._modules[str(len(self))] = _check_module(module, "ModuleList")
        return self

    def extend(self, modules):
        """Append every module of an iterable."""
        if isinstance(modules, Module) and not isinstance(modules, (ModuleList, Sequential)):
            raise _C.DtypeMismatch(f"ModuleList.extend: expected an iterable of Modules, got "
                                   f"{type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``."""
        items = list(self._modules.values())
        items.insert(operator.index(index), _check_module(module, "ModuleList"))
        self._modules.clear()
        for i, m in enumerate(items):
            self._modules[str(i)] = m

    def pop(self, key):
        """Remove the module at index ``key`` and return it."""
        m = self[key]
        del self[key]
        return m

    def __repr__(self):
        # Runs of identical modules print once, as "(0-2): 3 x Tanh()" (PyTorch's format).
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks: list[list[Any]] = [[0, 0, reprs[0]]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1][2]:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2) for a, b, r in blocks]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def forward(self, *args, **kwargs):
        raise _C.LucidError("ModuleList: it has no forward(); iterate over it and call its modules")


class ModuleDict(Module):
    """An ordered dict of modules (string keys) whose parameters are registered with the parent.

    >>> from pylucid import nn
    >>> heads = nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.Identity()})
    >>> list(heads.keys())
    ['a', 'b']
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        if key not in self._modules:
            raise KeyError(key)
        return self._modules[key]

    def __setitem__(self, key, module):
        if key in self._modules:
            self._modules[key] = _check_module(module, "ModuleDict")
        else:
            self.add_module(key, _check_module(module, "ModuleDict"))

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """(key, module) pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def pop(self, key):
        """Remove ``key`` and return its module."""
        m = self[key]
        del self[key]
        return m

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def update(self, modules):
        """Add modules from a mapping or an iterable of (key, module) pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for entry in items:
            try:
                k, m = entry
            except (TypeError, ValueError):
                raise _C.LucidError("ModuleDict.update: expected a mapping or (key, module) pairs") from None
            self[k] = m

    def forward(self, *args, **kwargs):
        raise _C.LucidError("ModuleDict: it has no forward(); index it and call its modules")


def _as_parameter(value, cls):
    if isinstance(value, Parameter) or value is None:
        return value
    if isinstance(value, Tensor):
        return Parameter(value, value.dtype.is_floating_point)
    raise _C.DtypeMismatch(f"{cls}: expected a Parameter or a Tensor, got {type(value).__name__}")


def _param_line(key, p, legacy_type=False):
    """One entry of a ParameterList (``[pylucid.float32 of size 2x3]``) or, with ``legacy_type``,
    of a ParameterDict, which PyTorch prints with the legacy type name (``[pylucid.FloatTensor ...]``)."""
    if isinstance(p, Tensor):
        size = "x".join(str(d) for d in p.shape)
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{p.type() if legacy_type else p.dtype} of size {size}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters registered with the parent module (tensors given are wrapped in
    Parameters); its state_dict keys are ``"0"``, ``"1"``, ...

    >>> import pylucid
    >>> from pylucid import nn
    >>> ps = nn.ParameterList([nn.Parameter(pylucid.ones(2)) for _ in range(3)])
    >>> len(ps), list(ps.state_dict())
    (3, ['0', '1', '2'])
    """

    def __init__(self, values=None):
        super().__init__()
        if values is not None:
            self.extend(values)

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self._parameters.values())[idx])
        return self._parameters[str(_index(idx, len(self), "ParameterList"))]

    def __setitem__(self, idx, param):
        self._parameters[str(_index(idx, len(self), "ParameterList"))] = _as_parameter(param, "ParameterList")

    def __iadd__(self, params):
        return self.extend(params)

    def append(self, value):
        """Add ``value`` (a Parameter, or a Tensor made one) at the end."""
        self._parameters[str(len(self))] = _as_parameter(value, "ParameterList")
        return self

    def extend(self, values):
        """Append every parameter of an iterable."""
        if isinstance(values, Tensor):
            raise _C.DtypeMismatch("ParameterList.extend: expected an iterable of Parameters, got a Tensor")
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(_param_line(k, p) for k, p in enumerate(self))

    def forward(self, *args, **kwargs):
        raise _C.LucidError("ParameterList: it has no forward(); index it for its parameters")


class ParameterDict(Module):
    """An ordered dict of parameters (string keys) registered with the parent module; tensors
    given are wrapped in Parameters. A plain dict is added in sorted key order, an
    ``OrderedDict`` in its own order, as PyTorch.

    >>> import pylucid
    >>> from pylucid import nn
    >>> pd = nn.ParameterDict({"b": nn.Parameter(pylucid.ones(2)), "a": pylucid.zeros(3)})
    >>> list(pd.keys())
    ['a', 'b']
    """

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        if key not in self._parameters:
            raise KeyError(key)
        return self._parameters[key]

    def __setitem__(self, key, value):
        if key in self._parameters:
            self._parameters[key] = _as_parameter(value, "ParameterDict")
        else:
            self.register_parameter(key, _as_parameter(value, "ParameterDict"))

    def __delitem__(self, key):
        del self._parameters[key]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key):
        return key in self._parameters

    def keys(self):
        """The keys, in insertion order."""
        return self._parameters.keys()

    def items(self):
        """(key, parameter) pairs, in insertion order."""
        return self._parameters.items()

    def values(self):
        """The parameters, in insertion order."""
        return self._parameters.values()

    def get(self, key, default=None):
        """The parameter under ``key``, or ``default``."""
        return self._parameters.get(key, default)

    def pop(self, key):
        """Remove ``key`` and return its parameter."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """Remove and return the last inserted (key, parameter) pair."""
        return self._parameters.popitem()

    def setdefault(self, key, default=None):
        """The parameter under ``key``, first setting it to ``default`` when absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        """Remove every parameter."""
        self._parameters.clear()

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict(self._parameters))

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with ``keys`` all set to ``default``."""
        return ParameterDict(OrderedDict((k, default) for k in keys))

    def update(self, parameters):
        """Add parameters from a mapping (a plain dict in sorted key order) or (key, value) pairs."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif hasattr(parameters, "items"):
            items = sorted(parameters.items())
        else:
            items = parameters
        for entry in items:
            try:
                k, v = entry
            except (TypeError, ValueError):
                raise _C.LucidError("ParameterDict.update: expected a mapping or (key, parameter) pairs") from None
            self[k] = v

    def extra_repr(self):
        return "\n".join(_param_line(k, p, legacy_type=True) for k, p in self.items())

    def forward(self, *args, **kwargs):
        raise _C.LucidError("ParameterDict: it has no forward(); index it for its parameters")
