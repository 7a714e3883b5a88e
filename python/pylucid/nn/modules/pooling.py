"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d`` and
``AdaptiveMaxPool1d/2d/3d``, with PyTorch's arguments, attributes and ``repr``. Errors name the
layer (``MaxPool2d: ...``)."""
from ... import _C
from .._functional_pool import _stride
from ..module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d", "MaxPool1d", "MaxPool2d",
           "MaxPool3d"]


class _MaxPoolNd(Module):
    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = _stride(stride, kernel_size)
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        y, idx = _C._pool(input, "max", self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                          True, None, self._dims, type(self).__name__)
        return (y, idx) if self.return_indices else y

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling over ``(N, C, L)`` (or ``(C, L)``); see :func:`pylucid.nn.functional.max_pool1d`.

    >>> import pylucid
    >>> MaxPool1d(2)(pylucid.tensor([[[1.0, 3.0, 2.0, 5.0]]])).tolist()
    [[[3.0, 5.0]]]
    """

    _dims = 1


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling over ``(N, C, H, W)`` (or ``(C, H, W)``); see
    :func:`pylucid.nn.functional.max_pool2d`. ``stride`` defaults to ``kernel_size``.

    >>> import pylucid
    >>> pool = MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(pylucid.ones(8, 6, 24, 24)).shape
    pylucid.Size([8, 6, 12, 12])
    """

    _dims = 2


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling over ``(N, C, D, H, W)`` (or ``(C, D, H, W)``); see
    :func:`pylucid.nn.functional.max_pool3d`. ``stride`` defaults to ``kernel_size``.

    >>> import pylucid
    >>> MaxPool3d(2)(pylucid.ones(1, 2, 4, 4, 4)).shape
    pylucid.Size([1, 2, 2, 2, 2])
    """

    _dims = 3

    def forward(self, input):
        from .._functional_pool3d import max_pool3d_with_indices
        y, idx = max_pool3d_with_indices(input, self.kernel_size, self.stride, self.padding, self.dilation,
                                         self.ceil_mode)
        return (y, idx) if self.return_indices else y


class AvgPool1d(Module):
    """1-d average pooling over ``(N, C, L)`` (or ``(C, L)``); see
    :func:`pylucid.nn.functional.avg_pool1d`. Sizes are kept as 1-tuples, as PyTorch.

    >>> import pylucid
    >>> AvgPool1d(2)(pylucid.tensor([[[1.0, 3.0, 2.0, 6.0]]])).tolist()
    [[[2.0, 4.0]]]
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()

        def single(v):
            return tuple(v) if isinstance(v, (tuple, list)) else (v,)

        self.kernel_size = single(kernel_size)
        self.stride = single(_stride(stride, kernel_size))
        self.padding = single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return _C._pool(input, "avg", self.kernel_size, self.stride, self.padding, 1, self.ceil_mode,
                        self.count_include_pad, None, 1, "AvgPool1d")[0]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """2-d average pooling over ``(N, C, H, W)`` (or ``(C, H, W)``); see
    :func:`pylucid.nn.functional.avg_pool2d` (``count_include_pad``, ``divisor_override``).

    >>> import pylucid
    >>> AvgPool2d(2)(pylucid.ones(1, 2, 4, 4)).shape
    pylucid.Size([1, 2, 2, 2])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = _stride(stride, kernel_size)
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return _C._pool(input, "avg", self.kernel_size, self.stride, self.padding, 1, self.ceil_mode,
                        self.count_include_pad, self.divisor_override, 2, "AvgPool2d")[0]

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """3-d average pooling over ``(N, C, D, H, W)`` (or ``(C, D, H, W)``); see
    :func:`pylucid.nn.functional.avg_pool3d` (``count_include_pad``, ``divisor_override``).

    >>> import pylucid
    >>> AvgPool3d(2)(pylucid.ones(1, 2, 4, 4, 4)).shape
    pylucid.Size([1, 2, 2, 2, 2])
    """

    def forward(self, input):
        from .._functional_pool3d import avg_pool3d
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                          self.divisor_override)


class _AdaptivePool(Module):
    _dims = 2
    _kind = "avg"

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if self._kind == "max":
            self.return_indices = return_indices

    def forward(self, input):
        y, idx = _C._adaptive_pool(input, self._kind, self.output_size, self._dims, type(self).__name__)
        return (y, idx) if self._kind == "max" and self.return_indices else y

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of ``(N, C, L)`` to a fixed length; see
    :func:`pylucid.nn.functional.adaptive_avg_pool1d`.

    >>> import pylucid
    >>> AdaptiveAvgPool1d(3)(pylucid.ones(2, 4, 10)).shape
    pylucid.Size([2, 4, 3])
    """

    _dims = 1

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling of ``(N, C, H, W)`` to a fixed size (``None`` keeps a dim); see
    :func:`pylucid.nn.functional.adaptive_avg_pool2d`.

    >>> import pylucid
    >>> AdaptiveAvgPool2d((1, 1))(pylucid.ones(2, 4, 7, 7)).shape
    pylucid.Size([2, 4, 1, 1])
    """

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    """Max pooling of ``(N, C, L)`` to a fixed length; ``return_indices`` also returns the argmax.

    >>> import pylucid
    >>> AdaptiveMaxPool1d(2)(pylucid.tensor([[[1.0, 5.0, 3.0, 4.0]]])).tolist()
    [[[5.0, 4.0]]]
    """

    _dims = 1
    _kind = "max"


class AdaptiveMaxPool2d(_AdaptivePool):
    """Max pooling of ``(N, C, H, W)`` to a fixed size (``None`` keeps a dim); see
    :func:`pylucid.nn.functional.adaptive_max_pool2d`.

    >>> import pylucid
    >>> y, idx = AdaptiveMaxPool2d(2, return_indices=True)(pylucid.ones(1, 3, 5, 5))
    >>> y.shape, idx.dtype
    (pylucid.Size([1, 3, 2, 2]), pylucid.int64)
    """

    _kind = "max"


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling of ``(N, C, D, H, W)`` to a fixed size (``None`` keeps a dim); see
    :func:`pylucid.nn.functional.adaptive_avg_pool3d`.

    >>> import pylucid
    >>> AdaptiveAvgPool3d(1)(pylucid.ones(2, 4, 3, 5, 5)).shape
    pylucid.Size([2, 4, 1, 1, 1])
    """

    _dims = 3

    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        from .._functional_pool3d import adaptive_avg_pool3d
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptivePool):
    """Max pooling of ``(N, C, D, H, W)`` to a fixed size (``None`` keeps a dim); see
    :func:`pylucid.nn.functional.adaptive_max_pool3d`.

    >>> import pylucid
    >>> AdaptiveMaxPool3d((1, 2, 2))(pylucid.ones(1, 2, 3, 4, 4)).shape
    pylucid.Size([1, 2, 1, 2, 2])
    """

    _dims = 3
    _kind = "max"

    def forward(self, input):
        from .._functional_pool3d import adaptive_max_pool3d_with_indices
        y, idx = adaptive_max_pool3d_with_indices(input, self.output_size)
        return (y, idx) if self.return_indices else y


class FractionalMaxPool2d(Module):
    """2-d fractional max pooling (:func:`pylucid.nn.functional.fractional_max_pool2d`) to
    ``output_size`` or ``output_ratio``; new random window offsets every call unless
    ``_random_samples`` is given."""

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = output_size
        self.output_ratio = output_ratio
        if output_size is None and output_ratio is None:
            raise ValueError("FractionalMaxPool2d requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio, output_ratio)
            if not (0 < ratio[0] < 1 and 0 < ratio[1] < 1):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
            self.output_ratio = ratio

    def forward(self, input):
        from .._functional_fractional import fractional_max_pool2d  # noqa: PLC0415
        return fractional_max_pool2d(input, self.kernel_size, self.output_size, self.output_ratio,
                                     self.return_indices, _random_samples=self._random_samples)
