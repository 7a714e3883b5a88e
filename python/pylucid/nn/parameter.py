"""``Parameter``: a leaf Tensor that a Module registers as learnable; ``Buffer``: one it registers as state."""
from .. import _C
from .._C import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    It shares memory with ``data`` and requires grad unless ``requires_grad=False``.

    >>> import pylucid
    >>> p = Parameter(pylucid.zeros(3))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C._empty((0,), None)
        if not isinstance(data, Tensor):
            raise _C.DtypeMismatch(f"Parameter: expected a Tensor, got {type(data).__name__}")
        super().__init__(data.detach(), requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    __str__ = __repr__



class Buffer(Tensor):
    """A Tensor to keep as module state that is not learnt: assigning one to a Module attribute
    registers it as a buffer (``persistent=False`` keeps it out of ``state_dict``), as
    ``register_buffer`` does. The module stores the tensor itself (a plain Tensor), as PyTorch's.

    >>> import pylucid
    >>> class M(pylucid.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.mask = Buffer(pylucid.ones(2), persistent=False)
    >>> [n for n, _ in M().named_buffers()], list(M().state_dict())
    (['mask'], [])
    """

    def __init__(self, data=None, *, persistent=True):
        if data is None:
            data = _C._empty((0,), None)
        if not isinstance(data, Tensor):
            raise _C.DtypeMismatch(f"Buffer: expected a Tensor, got {type(data).__name__}")
        super().__init__(data.detach(), False)
        self.persistent = persistent
