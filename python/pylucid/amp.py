"""Automatic mixed precision: ``pylucid.autocast`` and ``GradScaler`` (loss scaling, see
:mod:`pylucid._grad_scaler`).

Inside ``with pylucid.autocast(dtype=pylucid.bfloat16):`` every op applies its schema's
AmpPolicy: Promote ops (matmul, linear) cast floating inputs to the autocast dtype, ForceFP32
ops (norms, softmax, losses, sum/mean) compute in float32 and return float32, KeepInput ops
follow ordinary type promotion. The state is per thread; contexts nest and restore on exit.
"""
import functools

from . import _C
from ._grad_scaler import GradScaler

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "GradScaler"]


def is_autocast_enabled():
    """True inside an enabled ``autocast`` context on this thread."""
    return _C._autocast_state()[0]


def get_autocast_dtype():
    """The dtype Promote ops run in under autocast on this thread."""
    return _C._autocast_state()[1]


class autocast:
    """Context manager (or decorator) enabling mixed precision on this thread.

    Args:
        device_type: ``"cpu"`` (PyTorch's first argument: ``autocast("cpu", dtype=...)``).
        dtype: ``pylucid.float16`` or ``pylucid.bfloat16`` (default: ``get_autocast_dtype("cpu")``,
            which is ``bfloat16`` unless ``set_autocast_dtype`` changed it).
        enabled: ``False`` turns autocast off inside the block (useful when nesting).

    >>> import pylucid
    >>> a = pylucid.ones(2, 2)
    >>> with pylucid.autocast(dtype=pylucid.bfloat16):
    ...     (a @ a).dtype
    pylucid.bfloat16
    """

    def __init__(self, device_type="cpu", dtype=None, enabled=True, cache_enabled=None):
        if isinstance(device_type, _C.dtype):  # pylucid's earlier form: autocast(dtype, ...)
            device_type, dtype = "cpu", device_type
        if device_type not in ("cpu", None):
            raise _C.LucidError(f"autocast: only device_type='cpu' exists, got {device_type!r}")
        self.device = "cpu"
        if dtype is None:  # as PyTorch: the dtype set by set_autocast_dtype (bfloat16 unless changed)
            dtype = _C._autocast_state()[1]
            dtype = dtype if dtype in (_C.dtype.float16, _C.dtype.bfloat16) else _C.dtype.bfloat16
        self.dtype = dtype
        if self.dtype not in (_C.dtype.float16, _C.dtype.bfloat16):
            raise _C.DtypeMismatch(f"autocast: dtype must be pylucid.float16 or pylucid.bfloat16, "
                                   f"got {self.dtype!r}")
        self.enabled = bool(enabled)

    def __enter__(self):
        self._prev = _C._autocast_state()
        _C._set_autocast_state(self.enabled, self.dtype)
        return self

    def __exit__(self, *exc):
        _C._set_autocast_state(*self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(dtype=self.dtype, enabled=self.enabled):
                return fn(*args, **kwargs)
        return wrapper
