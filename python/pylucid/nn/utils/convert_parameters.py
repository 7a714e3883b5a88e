"""Flatten parameters into one vector and back."""
from ... import _C
from ..._C import Tensor
from ...autograd.grad_mode import no_grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-D tensor (differentiable)."""
    return _C.cat([p.reshape(-1) for p in parameters], 0)


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D tensor ``vec`` into ``parameters`` (in place)."""
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
