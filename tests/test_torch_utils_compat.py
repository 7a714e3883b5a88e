"""PyTorch's utility modules scripts use around the model: the ``distributed`` guard,
``utils.hooks.RemovableHandle`` (what every register_*hook returns), checked against PyTorch."""
import collections

import pylucid
import pylucid.distributed as dist
import pytest
from pylucid.utils.hooks import RemovableHandle


def test_distributed_guard():
    assert dist.is_available() is False and dist.is_initialized() is False
    assert not (dist.is_available() and dist.is_initialized())
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    assert rank == 0 and pylucid.distributed is dist


@pytest.mark.parametrize("name", ["init_process_group", "all_reduce", "get_rank", "ReduceOp"])
def test_distributed_names_raise(name):
    with pytest.raises(AttributeError, match=f"distributed.{name}: distributed training is not supported"):
        getattr(dist, name)
    assert not hasattr(dist, name)


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
