"""``pylucid.utils.data``: PyTorch's dataset and loader API (``torch.utils.data``) for training
loops in one process: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``Subset``,
``ConcatDataset``, ``random_split``, the samplers, ``DataLoader`` and ``default_collate``.

>>> import pylucid
>>> from pylucid.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(pylucid.arange(10.0).reshape(5, 2), pylucid.tensor([0, 1, 0, 1, 0]))
>>> [tuple(x.shape) for x, y in DataLoader(ds, batch_size=2)]
[(2, 2), (2, 2), (1, 2)]
"""
from .collate import default_collate, default_convert  # noqa: F401
from .dataloader import DataLoader, get_worker_info  # noqa: F401
from .distributed import DistributedSampler  # noqa: F401
from .dataset import (  # noqa: F401
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (  # noqa: F401
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler", "IterableDataset", "RandomSampler",
    "Sampler", "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
    "WeightedRandomSampler", "default_collate", "default_convert", "get_worker_info", "random_split",
]
