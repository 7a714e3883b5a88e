"""Grad-mode context managers (also usable as decorators), as in PyTorch."""
import functools

from .. import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]

is_grad_enabled = _C.is_grad_enabled


class _GradModeContext:
    _mode = True

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Context manager (or decorator) that records no graph: ops inside return tensors with
    ``requires_grad=False``.

    >>> import pylucid
    >>> x = pylucid.ones(2, requires_grad=True)
    >>> with pylucid.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """
    _mode = False


class enable_grad(_GradModeContext):
    """Context manager (or decorator) that turns graph recording back on inside ``no_grad``."""
    _mode = True


class set_grad_enabled(_GradModeContext):
    """Sets grad mode on or off: at once when called, and restored on exit when used with ``with``."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self._mode = bool(mode)
        _C._set_grad_enabled(self._mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
