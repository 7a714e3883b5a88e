"""``pylucid.distributed``: PyTorch's ``torch.distributed`` guard, without distributed training.

pylucid runs in one process: :func:`is_available` and :func:`is_initialized` answer False, so the
usual guard ``if dist.is_available() and dist.is_initialized(): ...`` takes the single-process
branch. The functions scripts import at the top (``init_process_group``, ``destroy_process_group``,
``get_rank``, ``all_reduce``...) exist so that the import works, and raise a ValueError naming
themselves when called (PyTorch raises ValueError for a call without a process group); every other
name raises an AttributeError naming it.

>>> import pylucid.distributed as dist
>>> dist.is_available() and dist.is_initialized()
False
"""
from .._errors import InvalidValue

__all__ = ["all_gather", "all_reduce", "barrier", "broadcast", "destroy_process_group", "gather", "get_backend",
           "get_rank", "get_world_size", "init_process_group", "is_available", "is_initialized",
           "is_torchelastic_launched", "new_group", "reduce", "scatter"]


def is_available():
    """False: pylucid has no distributed backend (PyTorch's CPU build answers True)."""
    return False


def is_initialized():
    """False: no process group can be created."""
    return False


def is_torchelastic_launched():
    """False: the process was not started by torchrun (pylucid never is)."""
    return False


def _unsupported(name):
    def call(*args, **kwargs):
        raise InvalidValue(f"pylucid.distributed.{name}: distributed training is not supported by pylucid "
                           "(pylucid.distributed.is_available() is False); take the single-process branch")
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Raises: pylucid has no process groups (PyTorch's ``torch.distributed.{name}``)."
    return call


init_process_group = _unsupported("init_process_group")
destroy_process_group = _unsupported("destroy_process_group")
new_group = _unsupported("new_group")
get_rank = _unsupported("get_rank")
get_world_size = _unsupported("get_world_size")
get_backend = _unsupported("get_backend")
barrier = _unsupported("barrier")
all_reduce = _unsupported("all_reduce")
all_gather = _unsupported("all_gather")
broadcast = _unsupported("broadcast")
reduce = _unsupported("reduce")
gather = _unsupported("gather")
scatter = _unsupported("scatter")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module 'pylucid.distributed' has no attribute '{name}'")
    raise AttributeError(f"pylucid.distributed.{name}: distributed training is not supported by pylucid "
                         "(pylucid.distributed.is_available() is False); take the single-process branch")
