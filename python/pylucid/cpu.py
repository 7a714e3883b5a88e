"""``pylucid.cpu`` (PyTorch's ``torch.cpu``): the one device pylucid has. ``is_available()`` is
True, ``device_count()`` is 1; ``pylucid.cpu.amp`` holds ``autocast`` and the deprecated
``GradScaler`` spelling (``GradScaler('cpu')``)."""
import sys as _sys
import types as _types

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available():
    """True: pylucid runs on the CPU."""
    return True


def device_count():
    """1."""
    return 1


def current_device():
    """``"cpu"``, as PyTorch's ``torch.cpu.current_device()``."""
    return "cpu"


def synchronize(device=None):
    """A no-op: CPU work is synchronous."""


amp = _types.ModuleType("pylucid.cpu.amp", "``torch.cpu.amp``: ``autocast`` and ``GradScaler`` on the CPU.")


def _init_amp():
    import warnings

    from ._grad_scaler import cpu_GradScaler
    from .amp import autocast as _autocast

    class autocast(_autocast):
        """``torch.cpu.amp.autocast(enabled=True, dtype=bfloat16, cache_enabled=True)``: deprecated in
        PyTorch for ``torch.amp.autocast('cpu', ...)``, which it is."""

        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                          "args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(dtype=dtype, enabled=enabled)

    setattr(amp, "GradScaler", cpu_GradScaler)  # noqa: B010
    setattr(amp, "autocast", autocast)  # noqa: B010
    setattr(amp, "__all__", ["GradScaler", "autocast"])  # noqa: B010
    _sys.modules[amp.__name__] = amp


_init_amp()
