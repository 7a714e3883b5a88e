"""Functional convolutions and padding: ``conv1d``, ``conv2d``, ``conv_transpose1d``,
``conv_transpose2d`` and ``pad``, with PyTorch's signatures.

Each convolution is one C++ op (im2col + one BLAS GEMM per group over the batch) whose backward
node, ``ConvolutionBackward``, returns the gradients of input, weight and bias. Size arguments
take an int or a tuple with one int per spatial dim.
"""

from .. import _C
from .._C import Tensor

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "pad"]


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """1-d cross-correlation of ``input`` ``(N, C_in, L)`` (or unbatched ``(C_in, L)``) with
    ``weight`` ``(C_out, C_in / groups, k)``, plus ``bias`` ``(C_out,)``.

    ``padding`` is an int, a 1-tuple, ``'valid'`` (none) or ``'same'`` (output length equals the
    input's; stride must be 1). Output length: ``(L + 2 p - d (k - 1) - 1) // s + 1``.

    >>> import pylucid
    >>> x = pylucid.ones(1, 1, 5)
    >>> w = pylucid.ones(1, 1, 3)
    >>> pylucid.nn.functional.conv1d(x, w).tolist()
    [[[3.0, 3.0, 3.0]]]
    """
    return _C._conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """2-d cross-correlation of ``input`` ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``)
    with ``weight`` ``(C_out, C_in / groups, kH, kW)``, plus ``bias`` ``(C_out,)``.

    ``stride``, ``padding`` and ``dilation`` are ints or pairs; ``padding`` may also be
    ``'valid'`` or ``'same'`` (stride 1 only; an odd total padding puts the extra row/column at
    the end, as PyTorch). ``groups`` splits the channels into independent convolutions
    (``groups == C_in`` is a depthwise convolution).

    >>> import pylucid
    >>> x = pylucid.ones(1, 1, 4, 4)
    >>> w = pylucid.ones(2, 1, 3, 3)
    >>> pylucid.nn.functional.conv2d(x, w, padding=1).shape
    pylucid.Size([1, 2, 4, 4])
    """
    return _C._conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 1-d convolution (the gradient of ``conv1d`` with respect to its input):
    ``input`` ``(N, C_in, L)``, ``weight`` ``(C_in, C_out / groups, k)``. Output length:
    ``(L - 1) s - 2 p + d (k - 1) + output_padding + 1``.

    >>> import pylucid
    >>> x = pylucid.ones(1, 1, 3)
    >>> w = pylucid.ones(1, 1, 2)
    >>> pylucid.nn.functional.conv_transpose1d(x, w, stride=2).tolist()
    [[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]]
    """
    return _C._conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                              "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 2-d convolution ("deconvolution"): ``input`` ``(N, C_in, H, W)``, ``weight``
    ``(C_in, C_out / groups, kH, kW)``; each output size is
    ``(H - 1) s - 2 p + d (k - 1) + output_padding + 1``.

    >>> import pylucid
    >>> x = pylucid.ones(1, 2, 3, 3)
    >>> w = pylucid.ones(2, 4, 2, 2)
    >>> pylucid.nn.functional.conv_transpose2d(x, w, stride=2).shape
    pylucid.Size([1, 4, 6, 6])
    """
    return _C._conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                              "conv_transpose2d")


def pad(input, pad, mode="constant", value=None) -> Tensor:
    """Pads the last ``len(pad) // 2`` dims (at most 3): ``pad`` lists ``(low, high)`` pairs
    starting from the last dim, as PyTorch. ``mode`` is ``'constant'`` (fill with ``value``,
    default 0; negative padding crops), ``'reflect'`` (mirror without repeating the edge; pad <
    size), ``'replicate'`` (repeat the edge) or ``'circular'`` (wrap around; pad <= size).

    >>> import pylucid
    >>> x = pylucid.tensor([[[1.0, 2.0, 3.0]]])
    >>> pylucid.nn.functional.pad(x, (2, 1), mode="reflect").tolist()
    [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
    """
    if mode != "constant" and value is not None and value != 0:
        raise _C.LucidError(f"pad: padding mode {mode!r} doesn't take in a value argument")
    if value is None:
        value = 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _C.DtypeMismatch(f"pad: value must be a number, got {type(value).__name__}")
    if not isinstance(mode, str):
        raise _C.DtypeMismatch(f"pad: mode must be a string, got {type(mode).__name__}")
    return _C._pad(input, pad, mode, float(value), "pad")
