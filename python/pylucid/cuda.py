"""``pylucid.cuda``: pylucid has no CUDA device, so ``is_available()`` is False and
``device_count()`` is 0; the seeding functions PyTorch scripts call unconditionally are no-ops,
as they are in PyTorch on a machine without a GPU.

>>> import pylucid
>>> pylucid.cuda.is_available(), pylucid.cuda.device_count()
(False, 0)
"""
__all__ = ["is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize",
           "empty_cache", "is_bf16_supported"]


def is_available():
    """False: pylucid runs on the CPU only."""
    return False


def device_count():
    """0: there are no CUDA devices."""
    return 0


def is_bf16_supported(including_emulation=True):
    """False: there is no CUDA device."""
    return False


def manual_seed(seed):
    """Does nothing (no CUDA generator exists), as in PyTorch without a GPU."""


def manual_seed_all(seed):
    """Does nothing (no CUDA generator exists), as in PyTorch without a GPU."""


def synchronize(device=None):
    """Does nothing: CPU work is synchronous."""


def empty_cache():
    """Does nothing: there is no CUDA memory."""
