"""Devices as PyTorch spells them. pylucid is CPU-only: ``"cpu"``, ``"cpu:0"`` and
``pylucid.device("cpu")`` are accepted wherever PyTorch takes a device, and any other device
raises :class:`pylucid.LucidError` naming it, so device-selection code takes the CPU branch.

>>> import pylucid
>>> d = pylucid.device("cuda" if pylucid.cuda.is_available() else "cpu")
>>> d, str(d), d.type
(device(type='cpu'), 'cpu', 'cpu')
>>> pylucid.zeros(2, device=d).device == "cpu"
True
"""
from . import _C

__all__ = ["device", "set_default_device", "get_default_device"]


def _check_device(dev, op):
    """``None`` or a CPU device spelling passes; anything else is a LucidError naming it."""
    if dev is None or isinstance(dev, device):
        return
    if isinstance(dev, str):
        if dev == "cpu" or dev in ("cpu:0",):
            return
        raise _C.LucidError(f"{op}: pylucid only has the 'cpu' device, got '{dev}'")
    if isinstance(dev, int) and not isinstance(dev, bool):
        raise _C.LucidError(f"{op}: pylucid only has the 'cpu' device, got device ordinal {dev} "
                            "(an accelerator index)")
    raise _C.DtypeMismatch(f"{op}: device must be a str or pylucid.device, got {type(dev).__name__}")


class device:
    """A device (PyTorch's ``torch.device``); only the CPU exists in pylucid.

    Built from ``"cpu"``, ``"cpu:0"``, ``("cpu", 0)`` or another device; ``type`` is ``'cpu'`` and
    ``index`` the ordinal given (``None`` when none was). Compares equal to the string ``"cpu"``.
    Any other device type (``"cuda"``, ``"mps"``, ...) raises :class:`pylucid.LucidError` naming it.
    """

    __slots__ = ("_index",)

    def __init__(self, type, index=None):  # noqa: A002 (PyTorch's argument name)
        if isinstance(type, device):
            self._index = type.index if index is None else index
            return
        if not isinstance(type, str):
            raise _C.DtypeMismatch(f"device: expected a str such as 'cpu', got {builtin_type(type).__name__}")
        name, sep, ordinal = type.partition(":")
        if name != "cpu":
            raise _C.LucidError(f"device: pylucid only has the 'cpu' device, got '{type}'")
        if sep:
            if not ordinal.isdigit():
                raise _C.LucidError(f"device: invalid device string '{type}'")
            if index is not None:
                raise _C.LucidError(f"device: index given twice in device('{type}', {index})")
            index = int(ordinal)
        if index is not None and (not isinstance(index, int) or isinstance(index, bool) or index != 0):
            raise _C.LucidError(f"device: the cpu device has only index 0, got {index!r}")
        self._index = index

    @property
    def type(self):
        """The device type, always ``'cpu'``."""
        return "cpu"

    @property
    def index(self):
        """The device ordinal given at construction (0), or None."""
        return self._index

    def __str__(self):
        return "cpu" if self._index is None else f"cpu:{self._index}"

    def __repr__(self):
        return "device(type='cpu')" if self._index is None else f"device(type='cpu', index={self._index})"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except _C.LucidError:
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self._index == other._index

    def __hash__(self):
        return hash(("cpu", self._index))

    def __reduce__(self):
        return (device, ("cpu", self._index))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


builtin_type = type
_CPU = device("cpu")


def set_default_device(device):  # noqa: F811 (PyTorch's argument name)
    """Sets the device factories use when none is given; only ``"cpu"`` (or None) is accepted."""
    _check_device(device, "set_default_device")


def get_default_device():
    """The device factories use when none is given: ``device(type='cpu')``."""
    return _CPU
