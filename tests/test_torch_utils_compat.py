"""PyTorch's utility modules scripts use around the model, checked against PyTorch: the
``distributed`` guard, ``utils.hooks.RemovableHandle`` (what every register_*hook returns), the
storage views, ``multiprocessing`` (spawn, sharing strategies) and ``utils.benchmark``."""
import collections

import numpy as np
import pylucid
import pylucid.distributed as dist
import pytest
from pylucid.utils.hooks import RemovableHandle


def test_distributed_guard():
    assert dist.is_available() is False and dist.is_initialized() is False
    assert not (dist.is_available() and dist.is_initialized())
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    assert rank == 0 and pylucid.distributed is dist


@pytest.mark.parametrize("name", ["ReduceOp", "all_to_all", "DistributedSampler"])
def test_other_distributed_names_raise(name):
    with pytest.raises(AttributeError, match=f"distributed.{name}: distributed training is not supported"):
        getattr(dist, name)
    assert not hasattr(dist, name)


def test_distributed_functions_import_and_raise_when_called():
    from pylucid.distributed import (  # nanoGPT's top-level import
        destroy_process_group,
        init_process_group,
    )
    for fn in (init_process_group, destroy_process_group, dist.get_rank, dist.all_reduce):
        with pytest.raises(ValueError, match=f"distributed.{fn.__name__}: distributed training is not supported"):
            fn("gloo") if fn is init_process_group else fn()
    with pytest.raises(RuntimeError, match="get_world_size"):
        dist.get_world_size()


def test_hook_handles_are_removable_handles():
    x = pylucid.ones(2, requires_grad=True)
    lin = pylucid.nn.Linear(2, 2)
    handles = [x.register_hook(lambda g: g), lin.register_forward_hook(lambda *a: None),
               lin.register_full_backward_hook(lambda *a: None), lin.register_forward_pre_hook(lambda *a: None)]
    assert all(isinstance(h, RemovableHandle) and isinstance(h.id, int) for h in handles)
    assert len({h.id for h in handles}) == len(handles)
    calls = []
    with lin.register_forward_hook(lambda m, i, o: calls.append(o.shape)):
        lin(pylucid.ones(1, 2))
    lin(pylucid.ones(1, 2))
    assert calls == [(1, 2)]
    for h in handles:
        h.remove()
        h.remove()


def test_handle_over_a_user_dict_as_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.hooks import RemovableHandle as TorchHandle
    for cls in (RemovableHandle, TorchHandle):
        hooks, extra = collections.OrderedDict(), collections.OrderedDict()
        h = cls(hooks, extra_dict=extra)
        hooks[h.id], extra[h.id] = print, True
        other = cls(hooks)
        assert other.id == h.id + 1
        hooks[other.id] = repr
        with h:
            assert list(hooks.values()) == [print, repr]
        assert (dict(hooks), dict(extra)) == ({other.id: repr}, {})
    assert torch is not None


def _storage_facts(lib):
    a = lib.arange(10.0)
    b = a[2:5]
    t = a.view(2, 5).t()
    u, ub = a.untyped_storage(), b.untyped_storage()
    s = b.storage()
    return [u.data_ptr() == ub.data_ptr() == t.untyped_storage().data_ptr(), u == ub, u.nbytes(), u.size(), len(u),
            u.element_size(), u.tolist()[4:8], b.data_ptr() - ub.data_ptr(), str(s.dtype).split(".")[-1], s.size(),
            len(s), s.element_size(), s.nbytes(), s.data_ptr() == u.data_ptr(), s[3], s.tolist(),
            lib.is_storage(s), lib.is_storage(u), lib.is_storage(b), lib.arange(3.0).expand(4, 3).untyped_storage().nbytes(),
            a.clone().untyped_storage() == u, str(lib.arange(2.0).storage()).replace("torch.", "pylucid.")]


def test_storage_matches_torch():
    torch = pytest.importorskip("torch")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # storage() is deprecated in both
        assert _storage_facts(pylucid) == _storage_facts(torch)


def test_storage_without_torch():
    x = pylucid.ones(2, 3, dtype=pylucid.float64)
    row = x[1]
    u = row.untyped_storage()
    assert u.data_ptr() == x.data_ptr() and u.nbytes() == 48 and isinstance(u, pylucid.UntypedStorage)
    assert row.data_ptr() - u.data_ptr() == 3 * 8
    import pylucid._storage as st
    st._warned.clear()
    with pytest.warns(UserWarning, match="untyped_storage"):
        s = x.storage()
    assert isinstance(s, pylucid.TypedStorage) and s.untyped() == u and s.tolist() == [1.0] * 6
    assert pylucid.ones(2, dtype=pylucid.bfloat16).storage().tolist() == [1.0, 1.0]


def _spawned_square(rank, base, queue):
    queue.put((rank, (pylucid.arange(3.0) + base * rank).pow(2).sum().item()))


def _spawned_raise(rank):
    if rank == 1:
        raise ValueError(f"rank {rank} failed")


def test_multiprocessing_spawn_and_strategies():
    import pylucid.multiprocessing as mp
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
        with pytest.raises(AssertionError, match="invalid sharing strategy"):
            mp.set_sharing_strategy("shm")
    finally:
        mp.set_sharing_strategy("file_descriptor")
    queue = mp.get_context("spawn").SimpleQueue()
    assert mp.spawn(_spawned_square, args=(2.0, queue), nprocs=2) is None
    assert sorted(queue.get() for _ in range(2)) == [(0, 5.0), (1, 29.0)]
    with pytest.raises(mp.ProcessRaisedException, match="rank 1 failed") as err:
        mp.spawn(_spawned_raise, nprocs=2)
    assert err.value.error_index == 1
    ctx = mp.spawn(_spawned_raise, nprocs=1, join=False)
    while not ctx.join():
        pass
    assert mp.Queue is not None and mp.cpu_count() >= 1


def _printed(benchmark, task_spec, number_per_run, raw_times, **labels):
    m = benchmark.Measurement(number_per_run, raw_times, task_spec(stmt="f()", setup="pass", **labels))
    return str(m).split("\n", 1)[1].replace("torch.", "pylucid."), (m.mean, m.median, m.iqr, m.times, m.meets_confidence())


@pytest.mark.parametrize("raw", [[3.3e-8], [2.5e-4, 2.6e-4, 3.9e-4, 2.4e-4, 2.5e-4], [1.23456], [123.456],
                                 [1.5e-2, 1.0e-2], [1e-2, 1.05e-2, 1.3e-2], [1, 1.02, 1.03, 1.3], [1, 1, 1.01, 1.5, 1.6]],
                         ids=str)
@pytest.mark.parametrize("labels", [{"num_threads": 4}, {"label": "L", "sub_label": "S", "description": "D", "num_threads": 1}],
                         ids=str)
def test_measurement_prints_as_torch(raw, labels):
    torch = pytest.importorskip("torch")
    from pylucid.utils import benchmark
    from torch.utils.benchmark.utils.common import TaskSpec

    ours = _printed(benchmark, benchmark.TaskSpec, 10, raw, **labels)
    theirs = _printed(torch.utils.benchmark, TaskSpec, 10, raw, **labels)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1][:3], theirs[1][:3], rtol=1e-12)
    assert ours[1][3:] == theirs[1][3:]


def test_timer_without_torch():
    from pylucid.utils.benchmark import Timer
    calls = []
    x = pylucid.ones(50)
    t = Timer("x.sum(); calls.append(1)", setup="calls.clear()", globals={"x": x, "calls": calls}, label="sum",
              sub_label="ones", description="d", num_threads=1)
    m = t.timeit(20)
    assert m.number_per_run == 20 and len(m.times) == 1 and m.median > 0 and m.title == "sum: ones"
    assert str(m).splitlines()[1:3] == ["sum: ones", "d"] and "1 measurement, 20 runs , 1 thread" in str(m)
    blocks = []
    m = t.blocked_autorange(callback=lambda n, sec: blocks.append((n, sec)), min_run_time=0.02)
    assert len(m.raw_times) == len(blocks) and sum(m.raw_times) >= 0.02 and m.number_per_run == blocks[0][0]
    m = t.adaptive_autorange(threshold=0.5, max_run_time=1.0)
    assert len(m.raw_times) >= 4 or sum(m.raw_times) >= 1.0
    assert pylucid.get_num_threads() >= 1
    with pytest.raises(ValueError, match="Python statements only"):
        Timer("x", language="c++")


def test_ddp_import_works_and_construction_raises():
    from pylucid.nn.parallel import DistributedDataParallel as DDP
    model = pylucid.nn.Linear(2, 2)
    assert not isinstance(model, DDP)
    with pytest.raises(ValueError, match="DistributedDataParallel: distributed training is not supported"):
        DDP(model, device_ids=[0])
