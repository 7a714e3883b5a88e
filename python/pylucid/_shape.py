"""Views, indexing and joining: the module-level functions of the C++ shape ops.

The Tensor methods (``reshape``, ``permute``, ``T``, ``__getitem__``, ``masked_fill``, ...) are
defined by the extension itself; this module re-exports the free functions under PyTorch's names.

>>> import pylucid
>>> x = pylucid.arange(6).reshape(2, 3)
>>> pylucid.cat([x, x], dim=1).shape
pylucid.Size([2, 6])
>>> x[:, [2, 0]].tolist()
[[2, 0], [5, 3]]
"""
from . import _C
from ._C import Tensor

__all__ = [
    "broadcast_to",
    "cat",
    "chunk",
    "clone",
    "concat",
    "concatenate",
    "flatten",
    "gather",
    "index_select",
    "masked_fill",
    "moveaxis",
    "movedim",
    "narrow",
    "nonzero",
    "permute",
    "reshape",
    "scatter_add",
    "select",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "swapdims",
    "t",
    "transpose",
    "tril",
    "triu",
    "unbind",
    "unflatten",
    "unsqueeze",
    "where",
]

reshape = _C.reshape
flatten = _C.flatten
unflatten = _C.unflatten
squeeze = _C.squeeze
unsqueeze = _C.unsqueeze
permute = _C.permute
transpose = _C.transpose
swapaxes = _C.swapaxes
swapdims = _C.swapdims
t = _C.t
movedim = _C.movedim
moveaxis = _C.moveaxis
broadcast_to = _C.broadcast_to
narrow = _C.narrow
select = _C.select
split = _C.split
chunk = _C.chunk
unbind = _C.unbind
clone = _C.clone
index_select = _C.index_select
gather = _C.gather
scatter_add = _C.scatter_add
nonzero = _C.nonzero
cat = _C.cat
stack = _C.stack
where = _C.where
tril = _C.tril
triu = _C.triu
masked_fill = _C.masked_fill


def concat(tensors, dim=0) -> Tensor:
    """Alias of :func:`cat`."""
    return _C.cat(tensors, dim)


def concatenate(tensors, axis=0) -> Tensor:
    """Alias of :func:`cat` with numpy's argument name."""
    return _C.cat(tensors, axis)
