"""``PReLU`` and the pixel (un)shuffle modules, with PyTorch's arguments, parameter names and reprs."""
from .. import functional as F
from ..module import Module
from ..parameter import Parameter

__all__ = ["PReLU", "PixelShuffle", "PixelUnshuffle"]


class PReLU(Module):
    """``x if x > 0 else a * x`` with a learnt slope ``a``: one (``num_parameters=1``) or one per
    channel; ``weight`` starts at ``init``."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        from ..._tensor import full  # noqa: PLC0415
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype, device=device))

    def reset_parameters(self):
        from ...autograd.grad_mode import no_grad  # noqa: PLC0415
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class PixelShuffle(Module):
    """(*, C * r^2, H, W) to (*, C, H * r, W * r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) to (*, C * r^2, H, W)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
