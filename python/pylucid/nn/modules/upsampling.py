"""``Upsample``, ``UpsamplingNearest2d`` and ``UpsamplingBilinear2d`` over ``F.interpolate``."""
from typing import Any

from .. import functional as F
from ..module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]


class Upsample(Module):
    """Resizes ``(N, C, *spatial)`` inputs to ``size`` or by ``scale_factor``; see
    :func:`pylucid.nn.functional.interpolate` for the modes and ``align_corners``.

    >>> import pylucid
    >>> up = Upsample(scale_factor=2, mode="nearest")
    >>> up
    Upsample(scale_factor=2.0, mode='nearest')
    >>> up(pylucid.ones(1, 3, 4, 4)).shape
    pylucid.Size([1, 3, 8, 8])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor: Any
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor is not None else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode='nearest')`` for 4-D inputs.

    >>> import pylucid
    >>> UpsamplingNearest2d(scale_factor=2)(pylucid.ones(1, 1, 2, 2)).shape
    pylucid.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode='bilinear', align_corners=True)`` for 4-D inputs.

    >>> import pylucid
    >>> UpsamplingBilinear2d(size=3)(pylucid.ones(1, 1, 2, 2)).shape
    pylucid.Size([1, 1, 3, 3])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
