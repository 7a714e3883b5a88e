"""``pylucid.cuda``: pylucid has no CUDA device, so ``is_available()`` is False and
``device_count()`` is 0; the seeding functions PyTorch scripts call unconditionally are no-ops,
as they are in PyTorch on a machine without a GPU.

>>> import pylucid
>>> pylucid.cuda.is_available(), pylucid.cuda.device_count()
(False, 0)
"""
import sys as _sys
import types as _types

__all__ = ["amp", "is_available", "device_count", "manual_seed", "manual_seed_all", "synchronize",
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


# ``torch.cuda.amp``: its GradScaler and autocast warn that CUDA is not available and disable
# themselves, as PyTorch's do on a machine without a GPU (scripts construct them unconditionally).
amp = _types.ModuleType("pylucid.cuda.amp", "``torch.cuda.amp``: ``GradScaler`` and ``autocast`` (disabled: there is no CUDA device).")


def _init_amp():
    from ._grad_scaler import cuda_autocast, cuda_GradScaler
    setattr(amp, "GradScaler", cuda_GradScaler)  # noqa: B010
    setattr(amp, "autocast", cuda_autocast)  # noqa: B010
    setattr(amp, "__all__", ["GradScaler", "autocast"])  # noqa: B010
    _sys.modules[amp.__name__] = amp


_init_amp()
