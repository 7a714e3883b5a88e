"""``DistributedSampler``: the slice of a dataset one of ``num_replicas`` processes reads, as
PyTorch's (same shuffle for a ``seed`` and ``set_epoch``, same padding or dropping to an even
split). pylucid runs in one process and has no process group, so ``num_replicas`` and ``rank``
must be given; the sampler is then usable for sharding by hand or for testing a script that
will later run distributed."""
import math

from ... import _C
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices ``rank, rank + num_replicas, ...`` of a (per-epoch shuffled) order, padded by
    repeating the first indices (or trimmed with ``drop_last``) to split evenly.

    >>> s = DistributedSampler(range(10), num_replicas=3, rank=2, shuffle=False)
    >>> list(s), len(s)
    ([2, 5, 8, 1], 4)
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group. (pylucid runs in one process: pass num_replicas and rank.)")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        import pylucid

        n = len(self.dataset)
        if self.shuffle:
            g = pylucid.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = pylucid.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise _C.LucidError(f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})")
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, which (with ``seed``) decides the shuffle, so every replica shuffles alike."""
        self.epoch = epoch
