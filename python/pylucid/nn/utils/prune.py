"""``pylucid.nn.utils.prune`` (PyTorch's ``torch.nn.utils.prune``): pruning by masks.

Pruning ``name`` of a module moves the parameter to ``name + "_orig"``, adds a buffer
``name + "_mask"`` and a forward pre-hook (the pruning method itself) that recomputes the plain
attribute ``name = name_orig * name_mask`` before every forward. Pruning the same tensor again
combines the methods in a :class:`PruningContainer`, each new mask computed on what the earlier
ones left; :func:`remove` makes the pruning permanent. The masks PyTorch's methods choose are
chosen here too (the random ones draw from the same generator stream).

>>> import pylucid
>>> from pylucid.nn.utils import prune
>>> lin = pylucid.nn.Linear(4, 2)
>>> _ = prune.l1_unstructured(lin, "weight", amount=0.5)
>>> int((lin.weight == 0).sum()), sorted(n for n, _ in lin.named_buffers())
(4, ['weight_mask'])
"""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ... import _C
from ..._tensor import ones_like, zeros_like

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A pruning technique: ``compute_mask(t, default_mask)`` says which entries of ``t`` to keep.
    An instance is also the forward pre-hook that re-applies its mask."""

    _tensor_name: "str | None" = None
    PRUNING_TYPE = "unstructured"

    def __call__(self, module, inputs):
        setattr(module, str(self._tensor_name), self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask (same shape as ``t``) that prunes ``t`` on top of ``default_mask``."""

    def apply_mask(self, module):
        """``name_orig * name_mask`` of ``module``: the pruned tensor."""
        if self._tensor_name is None:
            raise _C.LucidError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prunes ``module.<name>`` with a new instance of this method (made from ``args`` and
        ``kwargs``), combined with any pruning already on it; returns the method (or container)
        now installed as the hook."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if tuple(importance_scores.shape) != tuple(orig.shape):
                raise _C.ShapeMismatch(f"importance_scores should have the same shape as parameter {name} of "
                                       f"{module}, got {tuple(importance_scores.shape)} vs {tuple(orig.shape)}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` times the mask this method computes for it (``importance_scores`` ranks the
        entries instead of ``t`` when given)."""
        scores = t if importance_scores is None else importance_scores
        if tuple(scores.shape) != tuple(t.shape):
            raise _C.ShapeMismatch(f"importance_scores should have the same shape as tensor t, got "
                                   f"{tuple(scores.shape)} vs {tuple(t.shape)}")
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        """Makes the pruning permanent: ``name`` becomes a Parameter again holding the pruned
        values; ``name_orig`` and ``name_mask`` go away (the hook is removed by :func:`remove`)."""
        if self._tensor_name is None:
            raise _C.LucidError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if self._tensor_name in module.__dict__:
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.detach()
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """The new method, merged with the pruning hook already on ``module.<name>`` (if any) into a
    PruningContainer; the old hook is taken off the module."""
    old, keys = None, []
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(k)
    if len(keys) > 1:
        raise _C.LucidError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                            "Use a PruningContainer.")
    for k in keys:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is not None:
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        else:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container
    return method


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one tensor; its mask is the last method's mask
    computed on the entries (or channels) the earlier ones kept."""

    def __init__(self, *args):
        self._pruning_methods: "tuple[BasePruningMethod, ...]" = ()
        if len(args) == 1 and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Appends ``method`` (which must act on the same tensor name)."""
        if method is not None and not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        if method is not None:
            self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` '
                                     "defined.")
            nd = t.dim()
            dim = method.dim + nd if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {nd}")
            keep = default_mask.sum(dim=[d for d in range(nd) if d != dim]) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(nd))
        elif kind == "global":
            slc = tuple(slice(None) for _ in range(t.dim()))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones (useful to get the ``_orig``/``_mask`` layout)."""

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):  # type: ignore[override]
        return super().apply(module, name)


def _check_amount(amount):
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _n_to_prune(amount, size):
    """``amount`` entries (an int) or ``round(amount * size)`` (a fraction), checked against size."""
    n = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if isinstance(amount, numbers.Integral) and amount > size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
    return n


def _check_structured(t, dim):
    if t.dim() <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {tuple(t.shape)} with {t.dim()} dims")
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _channel_mask(t, dim, keep):
    """Zeros of t's shape with ones on the slices ``keep`` (indices or a bool mask) along ``dim``."""
    mask = zeros_like(t)
    mask[tuple(keep if d == (dim % t.dim()) else slice(None) for d in range(t.dim()))] = 1
    return mask


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (a fraction or a count) chosen at random."""

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n = _n_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if n:
            from ..._random import rand_like
            scores = rand_like(t)
            mask.view(-1)[scores.view(-1).topk(n).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries (a fraction or a count) of smallest absolute value."""

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        n = _n_to_prune(self.amount, t.numel())
        mask = default_mask.clone()
        if n:
            mask.view(-1)[t.abs().reshape(-1).topk(n, largest=False).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):  # type: ignore[override]
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole slices along ``dim`` (channels) chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        n = _n_to_prune(self.amount, size)
        if n == 0:
            return default_mask
        from ..._random import rand
        prob = rand(size)
        threshold = prob.kthvalue(n).values
        return _channel_mask(t, self.dim, prob > threshold) * default_mask.to(t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` slices along ``dim`` of smallest ``n``-norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        from ...linalg import vector_norm
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        n_prune = _n_to_prune(self.amount, size)
        if n_prune == 0:
            return default_mask
        dim = self.dim % t.dim()
        norm = vector_norm(t, self.n, dim=[d for d in range(t.dim()) if d != dim])
        keep = norm.topk(size - n_prune, largest=True).indices
        return _channel_mask(t, dim, keep) * default_mask.to(t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):  # type: ignore[override]
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask (combined with any earlier one)."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise _C.ShapeMismatch(f"default_mask shape {tuple(default_mask.shape)} must match self.mask shape "
                                   f"{tuple(self.mask.shape)}")
        return default_mask * self.mask.to(default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Adds the ``_orig``/``_mask`` reparametrisation without pruning anything; returns module."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prunes ``amount`` random entries of ``module.<name>``; returns module."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prunes the ``amount`` entries of ``module.<name>`` with the smallest absolute value (or
    ``importance_scores``); returns module."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prunes ``amount`` random slices along ``dim`` of ``module.<name>``; returns module."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prunes the ``amount`` slices along ``dim`` of ``module.<name>`` with the smallest
    ``n``-norm; returns module."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prunes the ``(module, name)`` pairs in ``parameters`` together, as one vector: e.g. the
    globally smallest 20% with ``pruning_method=L1Unstructured, amount=0.2``."""
    from .convert_parameters import parameters_to_vector
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)).detach() for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", None) if hasattr(m, n + "_mask")
                                         else ones_like(getattr(m, n)) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final = container.compute_mask(scores, default_mask)
    start = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, mask=final[start:start + p.numel()].view_as(p))
        start += p.numel()


def custom_from_mask(module, name, mask):
    """Prunes ``module.<name>`` where ``mask`` is 0; returns module."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Makes the pruning of ``module.<name>`` permanent and removes its hook; returns module."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or any submodule carries a pruning hook."""
    return any(isinstance(hook, BasePruningMethod) for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())

