"""Index encodings: ``one_hot``."""
from .. import _C
from .._tensor import arange

__all__ = ["one_hot"]


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape ``(*tensor.shape, num_classes)`` with a 1 at each element's class
    (num_classes=-1: the largest class + 1). Classes must lie in [0, num_classes).

    >>> import pylucid
    >>> pylucid.nn.functional.one_hot(pylucid.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if not isinstance(tensor, _C.Tensor):
        raise _C.DtypeMismatch(f"one_hot: expected a Tensor, got {type(tensor).__name__}")
    if tensor.dtype != _C.dtype.int64:
        raise _C.DtypeMismatch(f"one_hot: is only applicable to index tensors of dtype int64, got {tensor.dtype}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise _C.DtypeMismatch(f"one_hot: num_classes must be an int, got {type(num_classes).__name__}")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise _C.LucidError("one_hot: can not infer the number of classes from an empty tensor")
    else:
        if tensor.min().item() < 0:
            raise _C.LucidError("one_hot: Class values must be non-negative.")
        top = tensor.max().item()
        if num_classes == -1:
            num_classes = top + 1
        elif top >= num_classes:
            raise _C.LucidError("one_hot: Class values must be smaller than num_classes.")
    if num_classes < 0:
        raise _C.LucidError(f"one_hot: num_classes must be -1 or non-negative, got {num_classes}")
    return (tensor.unsqueeze(-1) == arange(num_classes)).long()
