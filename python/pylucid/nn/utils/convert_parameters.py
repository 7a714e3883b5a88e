"""Flatten parameters into one vector and back."""
from ... import _C
from ..._C import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated, in order, into one 1-D tensor (a
    differentiable copy, not a view).

    >>> import pylucid
    >>> parameters_to_vector([pylucid.ones(2, 2), pylucid.zeros(3)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    """
    return _C.cat([p.reshape(-1) for p in parameters], 0)


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D tensor ``vec`` into ``parameters`` (in place, without
    recording a gradient): the inverse of :func:`parameters_to_vector`.

    Raises:
        DtypeMismatch: ``vec`` is not a Tensor.
        ShapeMismatch: ``vec`` is not 1-D, or its length is not the parameters' total size.

    >>> import pylucid
    >>> a, b = pylucid.zeros(2), pylucid.zeros(1)
    >>> vector_to_parameters(pylucid.tensor([1.0, 2.0, 3.0]), [a, b])
    >>> a.tolist(), b.tolist()
    ([1.0, 2.0], [3.0])
    """
    if not isinstance(vec, Tensor):
        raise _C.DtypeMismatch(f"vector_to_parameters: expected a Tensor, got {type(vec).__name__}")
    if vec.ndim != 1:
        raise _C.ShapeMismatch(f"vector_to_parameters: expected a 1-D vector, got shape {list(vec.shape)}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if total != vec.shape[0]:
        raise _C.ShapeMismatch(f"vector_to_parameters: vector has {vec.shape[0]} elements, the parameters "
                               f"have {total}")
    offset = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(p.shape))
            offset += n
