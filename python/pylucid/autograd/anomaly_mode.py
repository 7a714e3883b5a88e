"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``, as in PyTorch.

While enabled, every backward node records the Python stack of the forward call that created it,
and the engine checks each gradient a node returns: a NaN raises a ``LucidError`` naming the node
(e.g. ``DivBackward``), the forward op and where it was called.
"""
import functools

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return _C._is_anomaly_enabled()


class _AnomalyContext:
    _mode = True

    def __enter__(self):
        self._prev = _C._is_anomaly_enabled()
        _C._set_anomaly_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self._prev)
        return False

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _C._is_anomaly_enabled()
            _C._set_anomaly_enabled(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _C._set_anomaly_enabled(prev)
        return wrapper


class detect_anomaly(_AnomalyContext):
    """Context manager (or decorator) that turns anomaly detection on: a backward node that returns
    NaN raises an error naming the node and the forward op that created it.

    >>> import pylucid
    >>> x = pylucid.tensor([0.0], requires_grad=True)
    >>> with detect_anomaly():
    ...     y = (x / x).sum()
    ...     try:
    ...         y.backward()
    ...     except pylucid.LucidError as e:
    ...         print(str(e).splitlines()[0][:60])
    Function 'DivBackward0' returned nan values in its 1th outpu
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan


class set_detect_anomaly(_AnomalyContext):
    """Turns anomaly detection on or off (at once, and restored on exit when used with ``with``)."""

    def __init__(self, mode, check_nan=True):
        self._prev = _C._is_anomaly_enabled()
        self._mode = bool(mode)
        self.check_nan = check_nan
        _C._set_anomaly_enabled(self._mode)

    def __enter__(self):
        return self
