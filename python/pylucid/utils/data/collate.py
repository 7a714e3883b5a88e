"""``default_collate`` (PyTorch's rules): a list of samples becomes one batch. Tensors are
stacked; numpy arrays and numpy numbers become stacked tensors; Python floats a float64
tensor, ints an int64 tensor, bools a bool tensor; strings stay as given (the list or tuple of them); dicts are collated per
key; tuples and lists are transposed and collated per position (namedtuples keep their type)."""
import collections.abc

import numpy as np

from ... import _C
from ..._C import Tensor

__all__ = ["default_collate", "default_convert"]


def _stack(ts):
    import pylucid

    shape = tuple(ts[0].shape)
    for i, t in enumerate(ts):
        if tuple(t.shape) != shape:
            raise _C.ShapeMismatch(f"default_collate: stack expects each tensor to be equal size, but got "
                                   f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
    return pylucid.stack(ts, 0)


def default_collate(batch):
    """Merge a list of samples into a batch (see the module docstring)."""
    import pylucid

    if not isinstance(batch, (list, tuple)) or len(batch) == 0:
        raise _C.DtypeMismatch(f"default_collate: expected a non-empty list of samples, got {type(batch).__name__}")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(list(batch))
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "OUS":
            raise _C.DtypeMismatch(f"default_collate: numpy arrays of dtype {elem.dtype} cannot become tensors")
        return _stack([pylucid.as_tensor(np.asarray(b)) for b in batch])
    if isinstance(elem, np.generic):
        return pylucid.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return pylucid.tensor(list(batch), dtype=_C.dtype.bool)
    if isinstance(elem, float):
        return pylucid.tensor(list(batch), dtype=pylucid.float64)
    if isinstance(elem, int):
        return pylucid.tensor(list(batch), dtype=pylucid.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})  # type: ignore[call-arg]
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        n = len(elem)
        if any(len(b) != n for b in batch):
            raise _C.ShapeMismatch("default_collate: each element in list of batch should be of equal size")
        return [default_collate(s) for s in zip(*batch)]
    raise _C.DtypeMismatch(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                           f"found {type(elem).__name__}")


def default_convert(data):
    """The conversion used when automatic batching is off (``batch_size=None``): numpy arrays
    become tensors, containers are converted element by element, everything else is kept."""
    import pylucid

    if isinstance(data, np.ndarray) and data.dtype.kind not in "OUS":
        return pylucid.as_tensor(data)
    if isinstance(data, np.generic):
        return pylucid.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data
