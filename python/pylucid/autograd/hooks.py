"""Hooks on tensors and backward nodes: ``Tensor.register_hook``, ``Node.register_hook`` and
``Node.register_prehook``, each returning a ``RemovableHandle``."""
from .. import _C
from .._C import Tensor

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Returned by the ``register_*hook`` methods: ``remove()`` unregisters the hook (also usable
    as a context manager that removes it on exit). ``id`` is an int unique among handles.

    As PyTorch's ``torch.utils.hooks.RemovableHandle`` it can also be made by user code around a
    dict of hooks: ``h = RemovableHandle(hooks); hooks[h.id] = fn``; ``remove()`` then deletes
    ``h.id`` from that dict (and from ``extra_dict``, a dict or list of dicts, when given). Given a
    callable instead, ``remove()`` calls it once (pylucid's own registries).

    >>> from pylucid.utils.hooks import RemovableHandle
    >>> hooks = {}
    >>> h = RemovableHandle(hooks)
    >>> hooks[h.id] = print
    >>> h.remove()
    >>> hooks
    {}
    """

    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.id: int = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if callable(hooks_dict) and not isinstance(hooks_dict, dict):
            self._remove_fn = hooks_dict
        else:
            dicts = [hooks_dict] + (list(extra_dict) if isinstance(extra_dict, (list, tuple))
                                    else [extra_dict] if extra_dict is not None else [])
            self._remove_fn = lambda: [d.pop(self.id, None) for d in dicts]

    def remove(self):
        """Unregisters the hook; a second call does nothing."""
        if self._remove_fn is not None:
            self._remove_fn()
            self._remove_fn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False


def _tensor_register_hook(self, hook):
    """Registers ``hook(grad) -> Tensor or None``, called with this tensor's gradient each time it
    is computed; a returned Tensor replaces the gradient. Returns a ``RemovableHandle``.

    >>> import pylucid
    >>> x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    >>> h = x.register_hook(lambda g: g * 2)
    >>> (x * 3).sum().backward()
    >>> x.grad.tolist()
    [6.0, 6.0]
    >>> h.remove()
    """
    if not callable(hook):
        raise _C.DtypeMismatch(f"register_hook: hook must be callable, got {type(hook).__name__}")
    hid = _C._add_tensor_hook(self, hook)
    return RemovableHandle(lambda: _C._remove_tensor_hook(self, hid))


def _node_register_hook(self, fn):
    """Registers ``fn(grad_inputs, grad_outputs) -> tuple or None``, called after this node ran
    (``grad_inputs``: one gradient per input of the forward op, ``grad_outputs``: the node's
    incoming gradient); a returned tuple replaces ``grad_inputs``. Returns a ``RemovableHandle``."""
    if not callable(fn):
        raise _C.DtypeMismatch(f"register_hook: hook must be callable, got {type(fn).__name__}")
    hid = _C._add_node_hook(self, fn)
    return RemovableHandle(lambda: _C._remove_node_hook(self, hid))


def _node_register_prehook(self, fn):
    """Registers ``fn(grad_outputs) -> tuple or None``, called before this node runs; a returned
    tuple replaces ``grad_outputs``. Returns a ``RemovableHandle``."""
    if not callable(fn):
        raise _C.DtypeMismatch(f"register_prehook: hook must be callable, got {type(fn).__name__}")
    hid = _C._add_node_prehook(self, fn)
    return RemovableHandle(lambda: _C._remove_node_hook(self, hid))


setattr(Tensor, "register_hook", _tensor_register_hook)
setattr(_C.Node, "register_hook", _node_register_hook)
setattr(_C.Node, "register_prehook", _node_register_prehook)
