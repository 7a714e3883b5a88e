"""Parametrizations, as ``torch.nn.utils.parametrize``: ``register_parametrization(module,
"weight", p)`` replaces the parameter ``weight`` by a property computing ``p(original)`` on every
access, the original (or the tensors ``p.right_inverse`` splits it into) kept as parameters
``parametrizations.weight.original`` (``original0``, ``original1``, ...), so ``state_dict`` keys
and optimizers see what PyTorch's do.

>>> import pylucid
>>> from pylucid.nn.utils import parametrize
>>> class Symmetric(pylucid.nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).transpose(0, 1)
>>> layer = pylucid.nn.Linear(3, 3)
>>> _ = parametrize.register_parametrization(layer, "weight", Symmetric())
>>> bool((layer.weight == layer.weight.T).all()), [n for n, _ in layer.named_parameters()]
(True, ['bias', 'parametrizations.weight.original'])
"""
from contextlib import contextmanager

from ... import _C
from ..._C import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization", "remove_parametrizations",
           "type_before_parametrizations"]

_cache_depth = 0
_cache: dict = {}


@contextmanager
def cached():
    """Inside ``with cached():`` each parametrized tensor is computed once, on first access, and
    reused (PyTorch's ``parametrize.cached``: e.g. a recurrent weight read at every time step);
    the cache is dropped when the outermost block exits."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def type_before_parametrizations(module):
    """The class of ``module`` before parametrizations were registered on it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def _check_parametrized(z, original, what):
    """PyTorch's consistency checks of a parametrization (skipped with ``unsafe=True``)."""
    if not isinstance(z, Tensor):
        raise ValueError(f"A {what or 'parametrization '}must return a tensor. Got {type(z).__name__}.")
    if z.dtype != original.dtype:
        raise ValueError(f"Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized dtype: {original.dtype}\nparametrized dtype: {z.dtype}")
    if tuple(z.shape) != tuple(original.shape):
        raise ValueError(f"Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                         f"flag is enabled.\nunparametrized shape: {tuple(original.shape)}\nparametrized shape: "
                         f"{tuple(z.shape)}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the original tensor(s)."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        new = original
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:  # as PyTorch: taken to be the identity here
                        pass
        self.is_tensor = isinstance(new, Tensor)
        if self.is_tensor:
            with no_grad():  # the same Parameter object, so optimizers built before still see it
                if isinstance(original, Parameter) and tuple(new.shape) == tuple(original.shape):
                    original.copy_(new)
                    self.original = original
                else:
                    self.original = Parameter(new.detach().clone(), original.requires_grad)
            self.ntensors = 1
        else:
            self.ntensors = len(new)
            for i, t in enumerate(new):
                setattr(self, f"original{i}", Parameter(t.detach().clone(), original.requires_grad))
        if not unsafe:
            # PyTorch evaluates the parametrization once to check it (a spectral_norm in training
            # mode takes its 16th power-iteration step here).
            _check_parametrized(self(), original, "")

    def right_inverse(self, value):
        """Sets the original tensor(s) so that the parametrized tensor becomes ``value``."""
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    value = m.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for i, t in enumerate(value):
                    getattr(self, f"original{i}").copy_(t)

    def forward(self):
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has parametrizations (on ``tensor_name``, when given)."""
    p = module.__dict__.get("_modules", {}).get("parametrizations")
    return p is not None and (tensor_name is None or tensor_name in p._modules)


def _inject_class(module):
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {"__module__": cls.__module__})
    module.parametrizations = ModuleDict()


def _inject_property(module, name):
    def get(self):
        if not _cache_depth:
            return self.parametrizations[name]()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = self.parametrizations[name]()
        return _cache[key]

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    setattr(module.__class__, name, property(get, set_))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes ``module.<tensor_name>`` the result of ``parametrization`` applied to the original
    tensor (chained after earlier parametrizations of the same tensor); returns ``module``."""
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            _check_parametrized(x, y, "")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    _check_parametrized(z, y, "parametrization.right_inverse ")
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    original = getattr(module, tensor_name, None)
    if not isinstance(original, Tensor):
        raise _C.ShapeMismatch(f"register_parametrization: module '{type(module).__name__}' has no parameter or "
                               f"buffer with name '{tensor_name}'")
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        _inject_class(module)
    module.parametrizations[tensor_name] = plist
    _inject_property(module, tensor_name)
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Removes the parametrizations of ``tensor_name``: the tensor becomes a plain parameter again,
    holding the parametrized value (or the original with ``leave_parametrized=False``)."""
    if not is_parametrized(module, tensor_name):
        raise _C.ShapeMismatch(f"remove_parametrizations: module {type(module).__name__} does not have a "
                               f"parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    with no_grad():
        value = getattr(module, tensor_name) if leave_parametrized or not plist.is_tensor else plist.original
    delattr(module.__class__, tensor_name)
    del module.parametrizations._modules[tensor_name]
    module.register_parameter(tensor_name, Parameter(value.detach().clone()))
    if not module.parametrizations._modules:
        del module._modules["parametrizations"]
        module.__class__ = module.__class__.__bases__[0]
    return module
