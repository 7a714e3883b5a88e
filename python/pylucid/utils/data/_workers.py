"""``DataLoader(num_workers=n)`` in this process, giving the batches PyTorch's workers give.

PyTorch starts ``n`` processes, each seeded from one ``base_seed`` drawn in the main process
(``torch.manual_seed(base_seed + id)``, ``random.seed(base_seed + id)``, numpy from a hash of
both), hands batch ``k`` to worker ``k % n`` and returns the batches in order. Here each worker is
a record of those three generator states, its ``WorkerInfo`` and its (shallow) copy of the
dataset; fetching and collating batch ``k`` runs with worker ``k % n``'s states swapped in and
``get_worker_info()`` answering for it, then the main process's states are put back. So random
augmentation inside ``__getitem__``, ``worker_init_fn`` sharding of an ``IterableDataset`` and the
main process's own later draws all match PyTorch's. An ``IterableDataset`` is iterated once per
worker (each worker's copy), the workers taking turns until each is exhausted, as PyTorch does
(unsharded, every sample comes once per worker).
"""
import copy
import dataclasses
import random
import threading
from typing import Any

import numpy as np

from ... import _random as _rng

__all__ = ["Pool", "WorkerInfo", "get_worker_info"]

_current = threading.local()


@dataclasses.dataclass
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: its ``id`` (0 to ``num_workers - 1``),
    ``num_workers``, its ``seed`` (``base_seed + id``) and its copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """The current worker's :class:`WorkerInfo` while a ``DataLoader`` with ``num_workers > 0``
    fetches a batch (in ``__getitem__``, ``__iter__``, ``collate_fn`` or ``worker_init_fn``);
    None otherwise."""
    return getattr(_current, "info", None)


def _numpy_seed(base_seed, worker_id):
    """PyTorch's numpy seed for a worker: four 32-bit words hashed from the base seed and id."""
    mask = 0xFFFFFFFF
    mult_a, mult_b, mix_l, mix_r = 0x931E8875, 0x58F38DED, 0xCA01F9DD, 0x4973F715
    const = [0x43B0D7E5]

    def hash_(value):
        value = (value ^ const[0]) & mask
        const[0] = (const[0] * mult_a) & mask
        value = (value * const[0]) & mask
        return (value ^ (value >> 16)) & mask

    def mix(x, y):
        r = ((mix_l * x) & mask) - ((mix_r * y) & mask) & mask
        r &= mask
        return (r ^ (r >> 16)) & mask

    pool = [hash_(v) for v in (worker_id, base_seed & mask, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hash_(pool[src]))
    const_b, state = 0x8B51F9DD, []
    for v in pool:
        v = (v ^ const_b) & mask
        const_b = (const_b * mult_b) & mask
        v = (v * const_b) & mask
        state.append((v ^ (v >> 16)) & mask)
    return state


class _Worker:
    """One simulated worker process: its generator states, WorkerInfo and dataset copy."""

    def __init__(self, loader, wid, base_seed):
        seed = base_seed + wid
        dataset = copy.copy(loader.dataset)
        self.info = WorkerInfo(id=wid, num_workers=loader.num_workers, seed=seed, dataset=dataset)
        main = _rng.get_rng_state()
        _rng.manual_seed(seed)
        self.torch_state = _rng.get_rng_state()
        _rng.set_rng_state(main)
        self.py_state = random.Random(seed).getstate()
        self.np_state = np.random.RandomState(_numpy_seed(base_seed, wid)).get_state()
        self.iterator = None
        with self.active():
            if loader.worker_init_fn is not None:
                loader.worker_init_fn(wid)

    def active(self):
        return _Active(self)


class _Active:
    """Swaps a worker's generator states and WorkerInfo in for the duration of a fetch."""

    def __init__(self, worker):
        self.w = worker

    def __enter__(self):
        self.saved = (_rng.get_rng_state(), random.getstate(), np.random.get_state(), get_worker_info())
        _rng.set_rng_state(self.w.torch_state)
        random.setstate(self.w.py_state)
        np.random.set_state(self.w.np_state)
        _current.info = self.w.info

    def __exit__(self, *exc):
        self.w.torch_state = _rng.get_rng_state()
        self.w.py_state = random.getstate()
        self.w.np_state = np.random.get_state()
        _rng.set_rng_state(self.saved[0])
        random.setstate(self.saved[1])
        np.random.set_state(self.saved[2])
        _current.info = self.saved[3]
        return False


class Pool:
    """The workers of one DataLoader iteration (kept across epochs with ``persistent_workers``)."""

    def __init__(self, loader, base_seed):
        self.loader = loader
        self.workers = [_Worker(loader, i, base_seed) for i in range(loader.num_workers)]

    def restart(self):
        """A new epoch on persistent workers: same workers and generator states, fresh iterators."""
        for w in self.workers:
            w.iterator = None

    def batches(self):
        ld = self.loader
        return self._iterable_batches() if ld._iterable else self._map_batches()

    def _map_batches(self):
        ld, n = self.loader, len(self.workers)
        if ld.batch_sampler is None:
            for k, idx in enumerate(ld.sampler):
                w = self.workers[k % n]
                with w.active():
                    out = ld.collate_fn(w.info.dataset[idx])
                yield out
            return
        for k, indices in enumerate(ld.batch_sampler):
            w = self.workers[k % n]
            with w.active():
                data = w.info.dataset
                getitems = getattr(data, "__getitems__", None)
                samples = getitems(indices) if callable(getitems) else [data[i] for i in indices]
                out = ld.collate_fn(samples)
            yield out

    def _fetch(self, w):
        """The next batch (or sample) from worker ``w``'s own iterator; StopIteration when it ends."""
        ld = self.loader
        with w.active():
            if w.iterator is None:
                w.iterator = iter(w.info.dataset)
            if ld.batch_size is None:
                return ld.collate_fn(next(w.iterator))
            batch = []
            for item in w.iterator:
                batch.append(item)
                if len(batch) == ld.batch_size:
                    break
            if not batch or (len(batch) < ld.batch_size and ld.drop_last):
                raise StopIteration
            return ld.collate_fn(batch)

    def _iterable_batches(self):
        for w in self.workers:  # PyTorch's workers create their iterators when they start
            with w.active():
                w.iterator = iter(w.info.dataset)
        # The next task goes to the next worker in turn that is still running, as PyTorch's
        # round-robin over its live workers.
        active, pos = list(self.workers), 0
        while active:
            try:
                out = self._fetch(active[pos])
            except StopIteration:
                active.pop(pos)
                pos = pos % len(active) if active else 0
                continue
            pos = (pos + 1) % len(active)
            yield out
