"""``pylucid.nn.attention``: choosing the kernel of :func:`~pylucid.nn.functional.scaled_dot_product_attention`.

PyTorch picks among several attention kernels; ``sdpa_kernel`` limits the choice within a ``with``
block. pylucid's CPU build has one implementation, which counts as both the math kernel and the CPU
flash kernel: it runs whenever ``MATH`` or ``FLASH_ATTENTION`` is allowed (the flash kernel only
on 4-d inputs without dropout, as PyTorch's CPU one), and with neither allowed the call raises
as PyTorch's does.

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> from pylucid.nn.attention import SDPBackend, sdpa_kernel
>>> q = pylucid.ones(1, 2, 3, 4)
>>> with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):
...     F.scaled_dot_product_attention(q, q, q).shape
pylucid.Size([1, 2, 3, 4])
"""
import contextlib
import enum

from ._functional_attention import _SDP_ENABLED

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.Enum):
    """The attention kernels PyTorch knows (its members and values)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# SDPBackend -> its switch in the state scaled_dot_product_attention reads.
_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
         SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def _sdp_state(enabled):
    """Sets the kernel switches to ``enabled`` (name -> bool) for the block, then restores them."""
    saved = dict(_SDP_ENABLED)
    _SDP_ENABLED.update(enabled)
    try:
        yield {}
    finally:
        _SDP_ENABLED.update(saved)


def sdpa_kernel(backends, set_priority=False):
    """Context manager: inside it, scaled_dot_product_attention may use only ``backends``.

    Args:
        backends: an :class:`SDPBackend` or a list of them. Other list items are ignored, as
            PyTorch ignores them.
        set_priority: PyTorch's order of preference among the listed kernels; pylucid has one
            kernel, so the order changes nothing.

    Raises:
        AssertionError: ``backends`` is neither an SDPBackend nor a list (PyTorch's check).
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    chosen = [backends] if isinstance(backends, SDPBackend) else backends
    return _sdp_state({flag: backend in chosen for backend, flag in _FLAG.items()})
