"""``pylucid.accelerator``: PyTorch's device-agnostic accelerator API, for scripts that pick
their device with ``torch.accelerator.current_accelerator().type if
torch.accelerator.is_available() else "cpu"``. pylucid runs on the CPU only, so there is no
accelerator: ``is_available()`` is False, ``current_accelerator()`` is None and
``device_count()`` is 0; the calls that need a device raise as PyTorch's do without one.

>>> import pylucid
>>> pylucid.accelerator.is_available(), pylucid.accelerator.current_accelerator()
(False, None)
"""
from . import _C

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize", "empty_cache"]


def _no_accelerator():
    return _C.LucidError("Cannot access accelerator device when none is available.")


def is_available():
    """False: pylucid has no accelerator."""
    return False


def current_accelerator(check_available=False):
    """None: there is no accelerator device."""
    return None


def device_count():
    """0: there are no accelerator devices."""
    return 0


def current_device_index():
    """Raises (as PyTorch does without an accelerator)."""
    raise _no_accelerator()


def set_device_index(device):
    """Raises (as PyTorch does without an accelerator)."""
    raise _no_accelerator()


def synchronize(device=None):
    """Raises (as PyTorch does without an accelerator)."""
    raise _no_accelerator()


def empty_cache():
    """Does nothing: there is no accelerator memory."""
