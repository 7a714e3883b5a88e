"""``pylucid.distributed``: PyTorch's ``torch.distributed`` guard, without distributed training.

pylucid runs in one process: :func:`is_available` and :func:`is_initialized` answer False, so the
usual guard ``if dist.is_available() and dist.is_initialized(): ...`` takes the single-process
branch. Every other name of ``torch.distributed`` (``init_process_group``, ``all_reduce``,
``get_rank``...) raises an AttributeError naming it.

>>> import pylucid.distributed as dist
>>> dist.is_available() and dist.is_initialized()
False
"""
__all__ = ["is_available", "is_initialized", "is_torchelastic_launched"]


def is_available():
    """False: pylucid has no distributed backend (PyTorch's CPU build answers True)."""
    return False


def is_initialized():
    """False: no process group can be created."""
    return False


def is_torchelastic_launched():
    """False: the process was not started by torchrun (pylucid never is)."""
    return False


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module 'pylucid.distributed' has no attribute '{name}'")
    raise AttributeError(f"pylucid.distributed.{name}: distributed training is not supported by pylucid "
                         "(pylucid.distributed.is_available() is False); run the single-process branch")
