"""Datasets: ``Dataset`` (map-style: ``__getitem__`` and ``__len__``), ``IterableDataset``
(``__iter__``), ``TensorDataset``, ``Subset``, ``ConcatDataset``, ``ChainDataset``,
``StackDataset`` and ``random_split``, as in ``torch.utils.data``."""
import bisect
import math

from ... import _C
from ..._C import Tensor
from . import _random

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset", "Subset", "TensorDataset",
           "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.
    ``a + b`` concatenates two datasets."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of Dataset must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``. The DataLoader batches items
    in the order the iterator yields them (no sampler, no shuffle)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of IterableDataset must define __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``; all tensors share their first dimension.

    >>> import pylucid
    >>> ds = TensorDataset(pylucid.zeros(4, 3), pylucid.arange(4))
    >>> len(ds), ds[1][1].item()
    (4, 1)
    """

    def __init__(self, *tensors):
        if not tensors:
            raise _C.LucidError("TensorDataset: needs at least one tensor")
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise _C.DtypeMismatch(f"TensorDataset: argument {i} is a {type(t).__name__}, expected a Tensor")
            if t.ndim == 0:
                raise _C.ShapeMismatch(f"TensorDataset: tensor {i} is 0-d; each tensor needs a first dimension")
        n = tensors[0].shape[0]
        for i, t in enumerate(tensors):
            if t.shape[0] != n:
                raise _C.ShapeMismatch(f"TensorDataset: size mismatch between tensors: tensor 0 has {n} rows, "
                                       f"tensor {i} has {t.shape[0]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Samples are tuples (positional datasets) or dicts (keyword datasets) of the datasets'
    samples at the same index; all datasets have the same length."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise _C.LucidError("StackDataset: supported either tuple-like (positional) or dict-like (keyword) "
                                "input, but both were given")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise _C.LucidError("StackDataset: at least one dataset should be passed")
        self._length = len(datasets[0])
        if any(len(d) != self._length for d in datasets):
            raise _C.ShapeMismatch("StackDataset: size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after another (map-style datasets only)."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise _C.LucidError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise _C.LucidError("ConcatDataset: does not support IterableDataset (use ChainDataset)")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise IndexError(f"ConcatDataset: index {idx} is out of range for length {len(self)}")
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        if d >= len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} is out of range for length {len(self)}")
        return self.datasets[d][idx - (self.cumulative_sizes[d - 1] if d > 0 else 0)]


class ChainDataset(IterableDataset):
    """Iterable datasets chained one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices`` (in that order)."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random ``Subset`` s of the given ``lengths``, or of
    the given fractions (summing to 1: ``floor(n * f)`` each, the remainder handed out one by one
    from the first), as PyTorch does.

    >>> import pylucid
    >>> a, b = random_split(range(10), [0.7, 0.3])
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    lengths = list(lengths)
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise _C.LucidError(f"random_split: fraction at index {i} is not between 0 and 1")
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(not isinstance(x, int) or x < 0 for x in lengths):
        raise _C.LucidError(f"random_split: lengths must be non-negative ints or fractions summing to 1, got "
                            f"{lengths}")
    if sum(lengths) != n:
        raise _C.ShapeMismatch(f"random_split: sum of input lengths ({sum(lengths)}) does not equal the length of "
                               f"the input dataset ({n})")
    perm = _random.randperm(n, generator)
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out
