"""``DataLoader``: iterate a dataset in batches (``torch.utils.data.DataLoader``), in this
process. Map-style datasets are read through a sampler (sequential, or shuffled with
``shuffle=True`` and an optional ``generator``) grouped by a ``BatchSampler``; iterable datasets
are batched in stream order. ``collate_fn`` (default :func:`default_collate`) merges each
batch.

``num_workers > 0`` gives the batches PyTorch's worker processes would, loaded in this process
(see :mod:`pylucid.utils.data._workers`): batch ``k`` is fetched and collated as worker
``k % num_workers`` with that worker's seeds, ``get_worker_info()`` and copy of the dataset."""
from ... import _C
from ..._errors import InvalidValue
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from . import _random, _workers
from ._workers import get_worker_info
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]


class DataLoader:
    """Batches of ``dataset``.

    Args:
        dataset: a map-style dataset (``__getitem__`` and ``__len__``) or an ``IterableDataset``.
        batch_size: samples per batch (``None`` disables batching: samples come one by one,
            converted by :func:`default_convert`).
        shuffle: a new random order each epoch (map-style datasets only).
        sampler: an iterable of indices (instead of ``shuffle``).
        batch_sampler: an iterable of index lists (instead of ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``).
        num_workers: how many worker processes PyTorch would use; batches come in the same order
            and with the same per-worker random seeds, but are loaded in this process.
        collate_fn: merges a list of samples into a batch.
        drop_last: drop the last, incomplete batch.
        generator: the generator ``shuffle`` draws from.

    ``worker_init_fn(worker_id)`` runs once per simulated worker (per epoch unless
    ``persistent_workers``). ``pin_memory``, ``timeout``, ``multiprocessing_context``,
    ``prefetch_factor``, ``pin_memory_device`` and ``in_order`` are accepted for compatibility
    and have no effect (batches always come in order; there is no device memory).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if not isinstance(num_workers, int) or num_workers < 0:
            raise _C.LucidError(f"DataLoader: num_workers option should be a non-negative integer, got {num_workers!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor option could only be specified in multiprocessing.let "
                             "num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers == 0 and persistent_workers:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        if timeout < 0:
            raise _C.LucidError("DataLoader: timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.generator = generator
        self._pool = None  # the persistent workers' state, kept across epochs
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise _C.LucidError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                    f"shuffle={shuffle}")
            if sampler is not None:
                raise _C.LucidError("DataLoader with IterableDataset: expected unspecified sampler option")
            if batch_sampler is not None:
                raise _C.LucidError("DataLoader with IterableDataset: expected unspecified batch_sampler option")
        else:
            if not hasattr(dataset, "__getitem__"):
                raise _C.DtypeMismatch(f"DataLoader: dataset must have __getitem__ (map-style) or be an "
                                       f"IterableDataset, got {type(dataset).__name__}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise _C.LucidError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise _C.LucidError("DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                                    "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise _C.LucidError("DataLoader: batch_size=None option disables auto-batching and is mutually "
                                "exclusive with drop_last")
        if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                                       or batch_size <= 0):
            raise InvalidValue(f"DataLoader: batch_size should be a positive integer value, but got "
                                f"batch_size={batch_size}")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if (batch_size is not None or batch_sampler is not None) else default_convert
        self.collate_fn = collate_fn

    def __iter__(self):
        # NOTE: PyTorch's loader iterator draws a base seed (for worker seeding) from the loader's
        # generator, or the global one, each time an epoch starts; drawing it here too keeps a
        # seeded program's later random numbers (and its shuffles) equal to PyTorch's.
        if self.num_workers > 0:
            if self.persistent_workers and self._pool is not None:
                self._pool.restart()
            else:
                self._pool = _workers.Pool(self, _random.seed_draw(self.generator))
            return self._pool.batches()
        _random.seed_draw(self.generator)
        return self._batches()

    def _batches(self):
        ds = self.dataset
        if self._iterable:
            if self.batch_size is None:
                for item in ds:
                    yield self.collate_fn(item)
                return
            batch = []
            for item in ds:
                batch.append(item)
                if len(batch) == self.batch_size:
                    yield self.collate_fn(batch)
                    batch = []
            if batch and not self.drop_last:
                yield self.collate_fn(batch)
            return
        if self.batch_sampler is None:
            for idx in self.sampler:
                yield self.collate_fn(ds[idx])
            return
        getitems = getattr(ds, "__getitems__", None)
        for indices in self.batch_sampler:
            samples = getitems(indices) if callable(getitems) else [ds[i] for i in indices]
            yield self.collate_fn(samples)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
