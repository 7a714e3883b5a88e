"""Padding layers over ``F.pad``: ``ZeroPad1d/2d``, ``ConstantPad1d/2d``, ``ReflectionPad1d/2d``,
``ReplicationPad1d/2d`` and ``CircularPad1d/2d``, with PyTorch's arguments and ``repr``. An int
pads every side; a tuple lists ``(left, right[, top, bottom])``. Errors name the layer."""
from ... import _C
from ..module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
           "ReplicationPad1d", "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d"]


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        if isinstance(padding, (tuple, list)):
            self.padding = tuple(padding)
        else:
            self.padding = (padding,) * (2 * self._dims)

    def forward(self, input):
        return _C._pad(input, self.padding, self._mode, float(getattr(self, "value", 0.0)), type(self).__name__)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _C.DtypeMismatch(f"{type(self).__name__}: value must be a number, got {type(value).__name__}")
        self.value = value

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with ``value``: ``padding`` is an int or ``(left, right)``.

    >>> import pylucid
    >>> ConstantPad1d(1, 3.5)(pylucid.zeros(1, 2)).tolist()
    [[3.5, 0.0, 0.0, 3.5]]
    """


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with ``value``: ``padding`` is an int or ``(left, right, top, bottom)``.

    >>> import pylucid
    >>> ConstantPad2d((1, 0, 0, 1), 2.0)(pylucid.zeros(1, 1, 1)).tolist()
    [[[2.0, 0.0], [2.0, 2.0]]]
    """

    _dims = 2


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros: ``padding`` is an int or ``(left, right)``.

    >>> import pylucid
    >>> ZeroPad1d((2, 0))(pylucid.ones(1, 2)).tolist()
    [[0.0, 0.0, 1.0, 1.0]]
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros: ``padding`` is an int or ``(left, right, top, bottom)``.

    >>> import pylucid
    >>> ZeroPad2d(1)(pylucid.ones(1, 3, 4, 4)).shape
    pylucid.Size([1, 3, 6, 6])
    """

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    """Mirrors ``(C, W)`` or ``(N, C, W)`` at its ends without repeating the edge (pad < size).

    >>> import pylucid
    >>> ReflectionPad1d(2)(pylucid.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]]
    """

    _mode = "reflect"


class ReflectionPad2d(_PadNd):
    """Mirrors the last two dims of a 3-D or 4-D input without repeating the edge.

    >>> import pylucid
    >>> ReflectionPad2d(1)(pylucid.ones(1, 2, 3, 3)).shape
    pylucid.Size([1, 2, 5, 5])
    """

    _dims = 2
    _mode = "reflect"


class ReplicationPad1d(_PadNd):
    """Repeats the edge values of ``(C, W)`` or ``(N, C, W)``.

    >>> import pylucid
    >>> ReplicationPad1d((1, 2))(pylucid.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 1.0, 2.0, 2.0, 2.0]]
    """

    _mode = "replicate"


class ReplicationPad2d(_PadNd):
    """Repeats the edge values of the last two dims of a 3-D or 4-D input.

    >>> import pylucid
    >>> ReplicationPad2d(2)(pylucid.ones(2, 3, 3)).shape
    pylucid.Size([2, 7, 7])
    """

    _dims = 2
    _mode = "replicate"


class CircularPad1d(_PadNd):
    """Wraps ``(C, W)`` or ``(N, C, W)`` around (pad <= size).

    >>> import pylucid
    >>> CircularPad1d(1)(pylucid.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """

    _mode = "circular"


class CircularPad2d(_PadNd):
    """Wraps the last two dims of a 3-D or 4-D input around (periodic boundary).

    >>> import pylucid
    >>> CircularPad2d(1)(pylucid.ones(1, 1, 2, 2)).shape
    pylucid.Size([1, 1, 4, 4])
    """

    _dims = 2
    _mode = "circular"
