"""pylucid.utils.data: TensorDataset, Subset, ConcatDataset, random_split (lengths and
fractions), the samplers, DataLoader (batching, shuffle reproducible by seed, drop_last,
batch_sampler, iterable datasets, batch_size=None, invalid num_workers) and default_collate
of tensors, numbers, numpy arrays, tuples, dicts and namedtuples, against torch.utils.data where
the result is deterministic."""
import collections

import numpy as np
import pylucid
import pytest
from pylucid.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    random_split,
)


def _ds(n=10):
    return TensorDataset(pylucid.arange(n * 2, dtype=pylucid.float32).reshape(n, 2), pylucid.arange(n))


def test_tensor_dataset_and_errors():
    """Indexing returns one row per tensor; mismatched first dims are refused."""
    ds = _ds()
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and len(ds) == 10
    with pytest.raises(pylucid.ShapeMismatch, match="TensorDataset"):
        TensorDataset(pylucid.zeros(3, 2), pylucid.zeros(4))
    with pytest.raises(TypeError, match="TensorDataset"):
        TensorDataset([1, 2])


def test_loader_batches_in_order_with_drop_last():
    """Sequential batches of batch_size, the last one shorter unless drop_last; len() agrees."""
    dl = DataLoader(_ds(), batch_size=4)
    batches = [y.tolist() for _, y in dl]
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(dl) == 3
    dl = DataLoader(_ds(), batch_size=4, drop_last=True)
    assert [y.tolist() for _, y in dl] == [[0, 1, 2, 3], [4, 5, 6, 7]] and len(dl) == 2


def test_shuffle_is_a_permutation_reproducible_by_seed():
    """shuffle=True visits every index once per epoch, differently each epoch, the same after
    the same manual_seed."""
    def epoch_orders():
        pylucid.manual_seed(3)
        dl = DataLoader(_ds(20), batch_size=6, shuffle=True)
        return [sum((y.tolist() for _, y in dl), []) for _ in range(2)]

    a, b = epoch_orders(), epoch_orders()
    assert a == b
    assert sorted(a[0]) == list(range(20)) and a[0] != a[1] and a[0] != list(range(20))


def test_batch_sampler_sampler_and_errors():
    """batch_sampler replaces batch_size; sampler replaces shuffle; conflicting options and
    a negative worker count are refused with LucidError."""
    bs = BatchSampler(SequentialSampler(range(5)), 2, drop_last=False)
    assert list(bs) == [[0, 1], [2, 3], [4]] and len(bs) == 3
    dl = DataLoader(_ds(), batch_sampler=[[9, 0], [5]])
    assert [y.tolist() for _, y in dl] == [[9, 0], [5]]
    dl = DataLoader(_ds(), sampler=[2, 4, 6], batch_size=2)
    assert [y.tolist() for _, y in dl] == [[2, 4], [6]]
    with pytest.raises(pylucid.LucidError, match="num_workers"):
        DataLoader(_ds(), num_workers=-1)
    assert [y.tolist() for _, y in DataLoader(_ds(), batch_size=4, num_workers=2)] == \
        [y.tolist() for _, y in DataLoader(_ds(), batch_size=4)]
    with pytest.raises(pylucid.LucidError, match="mutually exclusive"):
        DataLoader(_ds(), sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_size"):  # PyTorch's ValueError, still a LucidError
        DataLoader(_ds(), batch_size=0)
    with pytest.raises(pylucid.LucidError, match="batch_size"):
        BatchSampler(SequentialSampler(range(5)), -1, drop_last=False)
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(SequentialSampler(range(5)), 0, drop_last=False)


def test_random_split_lengths_and_fractions():
    """Fractions become floor(n * f) with the remainder spread from the first split; the parts
    partition the dataset; wrong totals are refused."""
    pylucid.manual_seed(0)
    parts = random_split(range(11), [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [6, 3, 2]
    assert sorted(sum((list(p) for p in parts), [])) == list(range(11))
    a, b = random_split(_ds(), [7, 3])
    assert len(a) == 7 and isinstance(a, Subset)
    with pytest.raises(pylucid.ShapeMismatch, match="random_split"):
        random_split(range(5), [2, 2])


def test_collate_rules_match_torch():
    """Numbers, numpy arrays and scalars, tuples, dicts, namedtuples and strings collate as in
    torch (dtypes and structure)."""
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as tcollate

    Point = collections.namedtuple("Point", "x y")
    batches = [
        [1.5, 2.5], [1, 2], [True, False], [np.ones(3, dtype=np.float32), np.zeros(3, dtype=np.float32)],
        [np.float64(1.0), np.float64(2.0)], [(1, 2.0), (3, 4.0)], [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
        [Point(1, 2.0), Point(3, 4.0)], [("s", 1), ("t", 2)],
    ]

    def norm(v):
        if isinstance(v, (pylucid.Tensor, torch.Tensor)):
            return (str(v.dtype).split(".")[-1], v.tolist())
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return (type(v).__name__, [norm(x) for x in v])
        return v

    for b in batches:
        assert norm(default_collate(b)) == norm(tcollate(b)), b
    ts = [pylucid.ones(2), pylucid.zeros(2)]
    assert default_collate(ts).shape == (2, 2)
    with pytest.raises(pylucid.ShapeMismatch, match="default_collate"):
        default_collate([pylucid.ones(2), pylucid.ones(3)])


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], dtype=np.float32), "i": i}


class Stream(IterableDataset):
    def __iter__(self):
        return iter(range(7))

    def __len__(self):
        return 7


def test_custom_map_and_iterable_datasets():
    """A user Dataset of dicts of numpy arrays; an IterableDataset batched in stream order;
    batch_size=None yields single samples; ConcatDataset and Subset index through."""
    dl = DataLoader(Squares(5), batch_size=2)
    first = next(iter(dl))
    assert first["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]] and first["i"].tolist() == [0, 1]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(DataLoader(Stream(), batch_size=3, drop_last=True)) == 2
    assert [v for v in DataLoader(Stream(), batch_size=None)] == list(range(7))
    with pytest.raises(pylucid.LucidError, match="shuffle"):
        DataLoader(Stream(), shuffle=True)
    cat = ConcatDataset([Squares(2), Squares(3)])
    assert len(cat) == 5 and cat[3]["i"] == 1 and cat[-1]["i"] == 2
    assert (Squares(2) + Squares(1))[2]["i"] == 0
    assert Subset(Squares(5), [4, 0])[0]["i"] == 4


def test_random_and_weighted_samplers():
    """RandomSampler permutes (or draws num_samples with replacement); WeightedRandomSampler
    never draws a zero-weight index."""
    pylucid.manual_seed(1)
    assert sorted(RandomSampler(range(8))) == list(range(8))
    draws = list(RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(draws) == 50 and set(draws) <= {0, 1, 2}
    w = list(WeightedRandomSampler([0.0, 1.0, 3.0], 40))
    assert 0 not in w and len(w) == 40
    assert sorted(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
