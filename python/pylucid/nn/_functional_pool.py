"""Functional pooling with PyTorch's signatures: ``max_pool1d/2d``, ``avg_pool1d/2d``,
``adaptive_avg_pool1d/2d`` and ``adaptive_max_pool1d/2d``.

Each is one C++ op whose backward node (``PoolBackward``, named after the pooling, e.g.
``MaxPool2DWithIndicesBackward``) applies the transpose of the pooling's linear map: a
scatter-add at the saved argmax indices for max pooling, the window averages spread back for
average pooling. Size arguments take an int or a tuple with one int per spatial dim.
"""

from .. import _C
from .._C import Tensor

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "avg_pool1d", "avg_pool2d", "max_pool1d",
           "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices"]


def _stride(stride, kernel_size):
    # PyTorch: a missing (None or empty) stride is the kernel size.
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return kernel_size
    return stride


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``max_pool1d`` returning ``(output, indices)`` (indices into the last dim, int64)."""
    return _C._pool(input, "max", kernel_size, _stride(stride, kernel_size), padding, dilation, ceil_mode, True,
                    None, 1, "max_pool1d")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-d max pooling of ``input`` ``(N, C, L)`` (or unbatched ``(C, L)``).

    Window ``i`` covers ``i * stride - padding + j * dilation`` for ``j < kernel_size`` (padding
    counts as ``-inf``); ``stride`` defaults to ``kernel_size``; the output length is
    ``floor((L + 2 padding - dilation (kernel_size - 1) - 1) / stride) + 1``, or its ceiling when
    ``ceil_mode`` (without a last window starting in the right padding). ``padding`` may be at
    most half the effective kernel. With ``return_indices``, also returns the argmax positions.

    >>> import pylucid
    >>> x = pylucid.tensor([[[1.0, 3.0, 2.0, 5.0, 4.0]]])
    >>> pylucid.nn.functional.max_pool1d(x, 2).tolist()
    [[[3.0, 5.0]]]
    >>> pylucid.nn.functional.max_pool1d(x, 2, ceil_mode=True).tolist()
    [[[3.0, 5.0, 4.0]]]
    """
    y, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (y, idx) if return_indices else y


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``max_pool2d`` returning ``(output, indices)`` (flat ``h * W + w`` per plane, int64)."""
    return _C._pool(input, "max", kernel_size, _stride(stride, kernel_size), padding, dilation, ceil_mode, True,
                    None, 2, "max_pool2d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-d max pooling of ``input`` ``(N, C, H, W)`` (or unbatched ``(C, H, W)``).

    ``kernel_size``, ``stride`` (default: ``kernel_size``), ``padding`` and ``dilation`` are
    ints or pairs; each output size is ``floor((in + 2 p - d (k - 1) - 1) / s) + 1`` (the
    ceiling with ``ceil_mode``, dropping a last window that would start in the right padding).
    With ``return_indices``, returns ``(output, indices)``, the indices flat within each
    ``H x W`` plane, as PyTorch. A NaN in a window is its maximum.

    >>> import pylucid
    >>> x = pylucid.arange(16.0).reshape(1, 1, 4, 4)
    >>> pylucid.nn.functional.max_pool2d(x, 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    y, idx = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (y, idx) if return_indices else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    """1-d average pooling of ``input`` ``(N, C, L)`` (or unbatched ``(C, L)``).

    Output length as :func:`max_pool1d` (no dilation). ``count_include_pad`` divides by the
    window size including the zero padding (else by the number of real elements).

    >>> import pylucid
    >>> x = pylucid.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> pylucid.nn.functional.avg_pool1d(x, 2).tolist()
    [[[1.5, 3.5]]]
    """
    return _C._pool(input, "avg", kernel_size, _stride(stride, kernel_size), padding, 1, ceil_mode,
                    count_include_pad, None, 1, "avg_pool1d")[0]


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """2-d average pooling of ``input`` ``(N, C, H, W)`` (or unbatched ``(C, H, W)``).

    Output sizes as :func:`max_pool2d` (no dilation). Each window's sum is divided by
    ``divisor_override`` when given, else by the window size, counting the zero padding when
    ``count_include_pad`` (PyTorch's default) and only the real elements otherwise.

    >>> import pylucid
    >>> x = pylucid.ones(1, 1, 3, 3)
    >>> pylucid.nn.functional.avg_pool2d(x, 2, stride=2, padding=1, count_include_pad=True).tolist()
    [[[[0.25, 0.5], [0.5, 1.0]]]]
    """
    return _C._pool(input, "avg", kernel_size, _stride(stride, kernel_size), padding, 1, ceil_mode,
                    count_include_pad, divisor_override, 2, "avg_pool2d")[0]


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Average pooling of ``(N, C, L)`` (or ``(C, L)``) to length ``output_size``: output ``i``
    averages ``[floor(i L / out), ceil((i + 1) L / out))``.

    >>> import pylucid
    >>> x = pylucid.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
    >>> pylucid.nn.functional.adaptive_avg_pool1d(x, 2).tolist()
    [[[2.0, 4.0]]]
    """
    return _C._adaptive_pool(input, "avg", output_size, 1, "adaptive_avg_pool1d")[0]


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) to ``output_size`` (an int, or a
    pair where ``None`` keeps that input size); windows as :func:`adaptive_avg_pool1d` per dim.
    ``adaptive_avg_pool2d(x, 1)`` is global average pooling.

    >>> import pylucid
    >>> pylucid.nn.functional.adaptive_avg_pool2d(pylucid.ones(2, 3, 7, 5), 1).shape
    pylucid.Size([2, 3, 1, 1])
    """
    return _C._adaptive_pool(input, "avg", output_size, 2, "adaptive_avg_pool2d")[0]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool1d`` returning ``(output, indices)``."""
    return _C._adaptive_pool(input, "max", output_size, 1, "adaptive_max_pool1d")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of ``(N, C, L)`` (or ``(C, L)``) to length ``output_size``, with the windows
    of :func:`adaptive_avg_pool1d`; ``return_indices`` also returns the argmax positions.

    >>> import pylucid
    >>> x = pylucid.tensor([[[1.0, 5.0, 3.0, 4.0, 2.0]]])
    >>> pylucid.nn.functional.adaptive_max_pool1d(x, 2).tolist()
    [[[5.0, 4.0]]]
    """
    y, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (y, idx) if return_indices else y


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool2d`` returning ``(output, indices)`` (flat ``h * W + w`` per plane)."""
    return _C._adaptive_pool(input, "max", output_size, 2, "adaptive_max_pool2d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) to ``output_size`` (an int, or a pair
    where ``None`` keeps that input size); ``return_indices`` also returns the argmax positions.

    >>> import pylucid
    >>> x = pylucid.arange(16.0).reshape(1, 1, 4, 4)
    >>> pylucid.nn.functional.adaptive_max_pool2d(x, (1, 2)).tolist()
    [[[[13.0, 15.0]]]]
    """
    y, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (y, idx) if return_indices else y
