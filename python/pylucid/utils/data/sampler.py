"""Samplers: which indices a DataLoader visits, in what order, and how they are grouped in
batches (``torch.utils.data``'s ``SequentialSampler``, ``RandomSampler``,
``SubsetRandomSampler``, ``WeightedRandomSampler``, ``BatchSampler``). Random ones draw from
pylucid's generator (``pylucid.manual_seed``) or from ``generator=``."""
from ... import _C
from ..._errors import InvalidValue
from . import _random

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]


class Sampler:
    """Base class: an iterable of indices (or of lists of indices, for batch samplers)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices (each epoch a new one), or ``num_samples`` indices
    drawn with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise _C.DtypeMismatch(f"RandomSampler: replacement should be a boolean value, but got {replacement!r}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise _C.LucidError(f"RandomSampler: num_samples should be a positive integer value, but got "
                                f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        """How many indices one pass yields (the dataset's length unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        import pylucid

        n = len(self.data_source)
        gen = _random.epoch_generator(self.generator)
        if self.replacement:
            # PyTorch draws in chunks of 32 (the same numbers as one draw of num_samples).
            for _ in range(self.num_samples // 32):
                yield from pylucid.randint(0, n, (32,), generator=gen).tolist()
            yield from pylucid.randint(0, n, (self.num_samples % 32,), generator=gen).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from pylucid.randperm(n, generator=gen).tolist()
        yield from pylucid.randperm(n, generator=gen).tolist()[: self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _random.randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probability proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise _C.LucidError(f"WeightedRandomSampler: num_samples should be a positive integer value, but got "
                                f"num_samples={num_samples}")
        weights = weights.tolist() if hasattr(weights, "tolist") else list(weights)
        if any(w < 0 for w in weights) or not weights or sum(weights) <= 0:
            raise _C.LucidError("WeightedRandomSampler: weights must be non-negative with a positive sum")
        self.weights, self.num_samples, self.replacement, self.generator = weights, num_samples, replacement, generator

    def __iter__(self):
        import pylucid

        if not self.replacement and self.num_samples > sum(w > 0 for w in self.weights):
            raise _C.LucidError("WeightedRandomSampler: cannot draw more samples than non-zero weights without "
                                "replacement")
        # PyTorch's draw: multinomial over float64 weights (pylucid's multinomial is torch-exact).
        w = pylucid.tensor(self.weights, dtype=pylucid.float64)
        kw = {"generator": self.generator} if self.generator is not None else {}
        return iter(pylucid.multinomial(w, self.num_samples, self.replacement, **kw).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise InvalidValue(f"BatchSampler: batch_size should be a positive integer value, but got "
                                f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise _C.DtypeMismatch(f"BatchSampler: drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
