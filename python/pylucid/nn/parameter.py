"""``Parameter``: a leaf Tensor that a Module registers as learnable."""
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

