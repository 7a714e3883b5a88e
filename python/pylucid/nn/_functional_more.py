"""``prelu`` and the pixel (un)shuffles, written with differentiable ops.

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> F.prelu(pylucid.tensor([-2.0, 3.0]), pylucid.tensor([0.25])).tolist()
[-0.5, 3.0]
>>> F.pixel_shuffle(pylucid.arange(8.0).reshape(1, 4, 1, 2), 2).shape
pylucid.Size([1, 1, 2, 4])
"""
from .. import _C
from .._C import Tensor

__all__ = ["prelu", "pixel_shuffle", "pixel_unshuffle"]


def prelu(input, weight) -> Tensor:
    """``x if x > 0 else weight * x``, with one learnt slope (weight of size 1) or one per channel
    (dim 1 of input; weight of size C)."""
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"prelu: expected a Tensor for {name}, got {type(t).__name__}")
    c = weight.numel()
    if c != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if c != channels:
            raise _C.ShapeMismatch(f"prelu: mismatch of parameter numbers and input channel size: found "
                                   f"{c} parameters and {channels} channels (input of shape {tuple(input.shape)})")
        w = weight.reshape(1, c, *([1] * (input.ndim - 2)))
    else:
        w = weight.reshape(())
    return _C.where(input > 0, input, w * input)


def _check_4d(op, input, factor, name):
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor, got {type(input).__name__}")
    if isinstance(factor, bool) or not isinstance(factor, int) or factor <= 0:
        raise ValueError(f"{op}: {name} must be a positive int, got {factor!r}")
    if input.ndim < 3:
        raise _C.ShapeMismatch(f"{op}: expected an input with at least 3 dims (*, C, H, W), got shape "
                               f"{tuple(input.shape)}")


def pixel_shuffle(input, upscale_factor) -> Tensor:
    """(*, C * r^2, H, W) to (*, C, H * r, W * r): each group of r^2 channels becomes an r x r block."""
    _check_4d("pixel_shuffle", input, upscale_factor, "upscale_factor")
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise _C.ShapeMismatch(f"pixel_shuffle: expected the channel dim ({c}) to be divisible by the square "
                               f"of upscale_factor ({r * r})")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor) -> Tensor:
    """The inverse of :func:`pixel_shuffle`: (*, C, H * r, W * r) to (*, C * r^2, H, W)."""
    _check_4d("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise _C.ShapeMismatch(f"pixel_unshuffle: expected height ({h}) and width ({w}) to be divisible by "
                               f"downscale_factor ({r})")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
