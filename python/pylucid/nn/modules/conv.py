"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``, with
PyTorch's arguments, parameter shapes, initialisation, ``state_dict`` keys and ``repr``."""
import math
from typing import Any

from ... import _C
from ..._tensor import empty
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _int(name, v, layer, minimum):
    if isinstance(v, bool) or not isinstance(v, int):
        raise _C.DtypeMismatch(f"{layer}: {name} must be an int, got {type(v).__name__}")
    if v < minimum:
        raise _C.LucidError(f"{layer}: {name} must be at least {minimum}, got {v}")
    return v


def _tuple(name, v, n, layer, minimum):
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise _C.ShapeMismatch(f"{layer}: {name} must be an int or a tuple of {n} ints, got {tuple(v)!r}")
        return tuple(_int(name, e, layer, minimum) for e in v)
    return (_int(name, v, layer, minimum),) * n


def _check_device(device, layer):
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise _C.LucidError(f"{layer}: pylucid runs on the CPU only, got device {device!r}")


class _ConvNd(Module):
    _dims = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        layer, n = type(self).__name__, self._dims
        _check_device(device, layer)
        _int("in_channels", in_channels, layer, 0)
        _int("out_channels", out_channels, layer, 0)
        _int("groups", groups, layer, 1)
        if in_channels % groups != 0:
            raise _C.ShapeMismatch(f"{layer}: in_channels ({in_channels}) must be divisible by groups ({groups})")
        if out_channels % groups != 0:
            raise _C.ShapeMismatch(f"{layer}: out_channels ({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise _C.LucidError(f"{layer}: padding_mode must be one of {list(_PADDING_MODES)}, got {padding_mode!r}")
        self.kernel_size = _tuple("kernel_size", kernel_size, n, layer, 1)
        self.stride = _tuple("stride", stride, n, layer, 1)
        self.dilation = _tuple("dilation", dilation, n, layer, 1)
        pad_t: tuple = (0,) * n
        self.padding: Any  # a tuple of ints, or the string given
        if isinstance(padding, str):
            if self._transposed or padding not in ("same", "valid"):
                raise _C.LucidError(f"{layer}: invalid padding string {padding!r}, expected 'same' or 'valid'")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise _C.LucidError(f"{layer}: padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            pad_t = _tuple("padding", padding, n, layer, 0)
            self.padding = pad_t
        self.output_padding = _tuple("output_padding", output_padding, n, layer, 0)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.transposed = self._transposed
        self.padding_mode = padding_mode
        if padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0] * n
        elif padding == "same":
            rp = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                rp += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = rp
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(pad_t) for _ in range(2)]
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(empty(*shape, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Re-draw the parameters as PyTorch does: ``kaiming_uniform_(weight, a=sqrt(5))`` and
        bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        n = self._dims
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * n:
            s += ", padding={padding}"
        if self.dilation != (1,) * n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, 0, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        name = type(self).__name__
        if self.padding_mode != "zeros":
            x = _C._pad(input, self._reversed_padding_repeated_twice, self.padding_mode, 0.0, name)
            return _C._conv(x, weight, bias, self.stride, 0, self.dilation, self.groups, self._dims, name)
        return _C._conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups, self._dims, name)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over ``(N, C_in, L)`` (or unbatched ``(C_in, L)``) inputs.

    ``weight``: ``(out_channels, in_channels / groups, kernel_size)``; ``bias``:
    ``(out_channels,)``. ``padding`` is an int, a tuple, ``'same'`` or ``'valid'``;
    ``padding_mode`` is ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    >>> import pylucid
    >>> conv = Conv1d(4, 8, 3, padding=1)
    >>> conv(pylucid.ones(2, 4, 10)).shape
    pylucid.Size([2, 8, 10])
    """

    _dims = 1


class Conv2d(_Conv):
    """2-d convolution over ``(N, C_in, H, W)`` (or unbatched ``(C_in, H, W)``) inputs.

    ``weight``: ``(out_channels, in_channels / groups, kH, kW)``; ``bias``: ``(out_channels,)``;
    both initialised as PyTorch (``kaiming_uniform_(a=sqrt(5))``, bias U(-1/sqrt(fan_in),
    1/sqrt(fan_in))). ``padding`` is an int, a pair, ``'same'`` or ``'valid'``; ``padding_mode``
    is ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    >>> import pylucid
    >>> conv = Conv2d(1, 6, 5, padding=2)
    >>> conv
    Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2))
    >>> conv(pylucid.ones(8, 1, 28, 28)).shape
    pylucid.Size([8, 6, 28, 28])
    """

    _dims = 2


class Conv3d(_Conv):
    """3-d convolution over ``(N, C_in, D, H, W)`` (or unbatched ``(C_in, D, H, W)``) inputs.

    ``weight``: ``(out_channels, in_channels / groups, kD, kH, kW)``; ``bias``:
    ``(out_channels,)``; initialised as PyTorch. ``padding`` is an int, a triple, ``'same'`` or
    ``'valid'``; ``padding_mode`` is ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
    Computed by :func:`pylucid.nn.functional.conv3d` (batched 2-d convolutions per depth tap).

    >>> import pylucid
    >>> conv = Conv3d(2, 4, 3, padding=1)
    >>> conv
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
    >>> conv(pylucid.ones(1, 2, 4, 5, 6)).shape
    pylucid.Size([1, 4, 4, 5, 6])
    """

    _dims = 3

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            x = _C._pad(input, self._reversed_padding_repeated_twice, self.padding_mode, 0.0, type(self).__name__)
            return F.conv3d(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class _ConvTranspose(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise _C.LucidError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, output_padding, groups,
                         bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output ``output_size`` (PyTorch's rule)."""
        if output_size is None:
            return self.output_padding
        n, name = self._dims, type(self).__name__
        output_size = list(output_size)
        if len(output_size) == n + 2 or (len(output_size) == n + 1 and input.ndim == n + 1):
            output_size = output_size[-n:]
        if len(output_size) != n:
            raise _C.ShapeMismatch(f"{name}: output_size must have {n} or {n + 2} elements, got {len(output_size)}")
        spatial = input.shape[-n:]
        res = []
        for d in range(n):
            lo = ((spatial[d] - 1) * self.stride[d] - 2 * self.padding[d]
                  + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            hi = lo + self.stride[d] - 1
            if not lo <= output_size[d] <= hi:
                raise _C.ShapeMismatch(f"{name}: requested an output size of {output_size}, but valid sizes range "
                                       f"from {lo} to {hi} (for an input of {list(spatial)})")
            res.append(output_size[d] - lo)
        return tuple(res)

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return _C._conv_transpose(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                  self.dilation, self._dims, type(self).__name__)


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-d convolution (the input-gradient of ``Conv1d``).

    ``weight``: ``(in_channels, out_channels / groups, kernel_size)``; output length
    ``(L - 1) stride - 2 padding + dilation (kernel_size - 1) + output_padding + 1``.
    ``forward(input, output_size=None)`` can pick ``output_padding`` from a requested size.

    >>> import pylucid
    >>> up = ConvTranspose1d(4, 2, 2, stride=2)
    >>> up(pylucid.ones(1, 4, 5)).shape
    pylucid.Size([1, 2, 10])
    """

    _dims = 1


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-d convolution ("deconvolution"), e.g. for upsampling in a decoder.

    ``weight``: ``(in_channels, out_channels / groups, kH, kW)``; each output size is
    ``(H - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``.

    >>> import pylucid
    >>> up = ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
    >>> up(pylucid.ones(1, 8, 7, 7)).shape
    pylucid.Size([1, 4, 14, 14])
    """

    _dims = 2


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-d convolution: ``weight`` ``(in_channels, out_channels / groups, kD, kH, kW)``;
    each output size is ``(in - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``.
    Computed by :func:`pylucid.nn.functional.conv_transpose3d`.

    >>> import pylucid
    >>> up = ConvTranspose3d(4, 2, 2, stride=2)
    >>> up(pylucid.ones(1, 4, 3, 3, 3)).shape
    pylucid.Size([1, 2, 6, 6, 6])
    """

    _dims = 3

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                  self.dilation)
