"""Functional convolutions and padding: ``conv1d``, ``conv2d``, ``conv3d``, ``conv_transpose1d``,
``conv_transpose2d``, ``conv_transpose3d`` and ``pad``, with PyTorch's signatures.

Each convolution is one C++ op (im2col + one BLAS GEMM per group over the batch) whose backward
node, ``ConvolutionBackward``, returns the gradients of input, weight and bias. Size arguments
take an int or a tuple with one int per spatial dim.
"""

from .. import _C
from .._C import Tensor

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "pad"]


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


def _triple(v, name, op):
    if isinstance(v, (tuple, list)):
        if len(v) != 3 or not all(isinstance(e, int) and not isinstance(e, bool) for e in v):
            raise _C.ShapeMismatch(f"{op}: {name} must be an int or a tuple of 3 ints, got {tuple(v)!r}")
        return tuple(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _C.DtypeMismatch(f"{op}: {name} must be an int or a tuple of 3 ints, got {type(v).__name__}")
    return (v, v, v)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """3-d cross-correlation of ``input`` ``(N, C_in, D, H, W)`` (or unbatched ``(C_in, D, H, W)``)
    with ``weight`` ``(C_out, C_in / groups, kD, kH, kW)``, plus ``bias`` ``(C_out,)``.

    ``stride``, ``padding`` and ``dilation`` are ints or triples; ``padding`` may also be
    ``'valid'`` or ``'same'`` (stride 1 only). Computed as one batched ``conv2d`` per depth tap of
    the kernel (the output depths stacked into the batch), summed, so its gradients are conv2d's.

    >>> import pylucid
    >>> x = pylucid.ones(1, 2, 4, 5, 5)
    >>> w = pylucid.ones(3, 2, 3, 3, 3)
    >>> pylucid.nn.functional.conv3d(x, w, padding=1).shape
    pylucid.Size([1, 3, 4, 5, 5])
    """
    op = "conv3d"
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise _C.DtypeMismatch(f"{op}: input and weight must be Tensors, got {type(input).__name__} and "
                               f"{type(weight).__name__}")
    if input.dim() not in (4, 5):
        raise _C.ShapeMismatch(f"{op}: Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of "
                               f"size: {list(input.shape)}")
    if weight.dim() != 5:
        raise _C.ShapeMismatch(f"{op}: weight must be 5-D (C_out, C_in / groups, kD, kH, kW), got {list(weight.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise _C.LucidError(f"{op}: non-positive groups is not supported, got {groups!r}")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    N, C, D, H, W = x.shape
    O, Cg, kD, kH, kW = weight.shape
    if C != Cg * groups:
        raise _C.ShapeMismatch(f"{op}: Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                               f"{list(x.shape)} to have {Cg * groups} channels, but got {C} channels instead")
    if O % groups != 0:
        raise _C.ShapeMismatch(f"{op}: out channels {O} must be divisible by groups {groups}")
    if bias is not None and (not isinstance(bias, Tensor) or tuple(bias.shape) != (O,)):
        raise _C.ShapeMismatch(f"{op}: bias must be a Tensor of shape [{O}], got "
                               f"{list(bias.shape) if isinstance(bias, Tensor) else type(bias).__name__}")
    s = _triple(stride, "stride", op)
    dl = _triple(dilation, "dilation", op)
    if min(s) < 1:
        raise _C.LucidError(f"{op}: non-positive stride is not supported, got {s}")
    if min(dl) < 1:
        raise _C.LucidError(f"{op}: dilation should be greater than zero, got {dl}")
    k = (kD, kH, kW)
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0, 0, 0)
        elif padding == "same":
            if any(v != 1 for v in s):
                raise _C.LucidError(f"{op}: padding='same' is not supported for strided convolutions")
            lo = tuple(dl[i] * (k[i] - 1) // 2 for i in range(3))
            hi = tuple(dl[i] * (k[i] - 1) - lo[i] for i in range(3))
        else:
            raise _C.LucidError(f"{op}: Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    else:
        lo = hi = _triple(padding, "padding", op)
        if min(lo) < 0:
            raise _C.LucidError(f"{op}: negative padding is not supported, got {lo}")
    if lo != hi or lo[0]:
        x = pad(x, (lo[2], hi[2], lo[1], hi[1], lo[0], hi[0]))
        hw_pad = (0, 0)
    else:
        hw_pad = (lo[1], lo[2])
    Dp = x.shape[2]
    sizes = [Dp, x.shape[3] + 2 * hw_pad[0], x.shape[4] + 2 * hw_pad[1]]
    for i in range(3):
        if sizes[i] < dl[i] * (k[i] - 1) + 1:
            raise _C.ShapeMismatch(f"{op}: Calculated padded input size per channel: ({sizes[0]} x {sizes[1]} x "
                                   f"{sizes[2]}). Kernel size: ({kD} x {kH} x {kW}). Kernel size can't be greater "
                                   "than actual input size")
    Do = (Dp - dl[0] * (kD - 1) - 1) // s[0] + 1
    terms = []
    for kd in range(kD):
        start = kd * dl[0]
        xs = x[:, :, start:start + s[0] * (Do - 1) + 1:s[0]]
        xs = xs.transpose(1, 2).reshape(N * Do, C, x.shape[3], x.shape[4])
        terms.append(conv2d(xs, weight[:, :, kd], None, s[1:], hw_pad, dl[1:], groups))
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    out = out.reshape(N, Do, O, out.shape[-2], out.shape[-1]).transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, O, 1, 1, 1)
    out = out.contiguous()
    return out.squeeze(0) if unbatched else out


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Transposed 3-d convolution: ``input`` ``(N, C_in, D, H, W)`` (or unbatched), ``weight``
    ``(C_in, C_out / groups, kD, kH, kW)``; each output size is
    ``(in - 1) s - 2 p + d (k - 1) + output_padding + 1``. Computed as one batched
    ``conv_transpose2d`` per depth tap, each placed at its output depths (every ``s``-th, offset
    by the tap), summed and cropped by the depth padding.

    >>> import pylucid
    >>> x = pylucid.ones(1, 2, 3, 3, 3)
    >>> w = pylucid.ones(2, 4, 2, 2, 2)
    >>> pylucid.nn.functional.conv_transpose3d(x, w, stride=2).shape
    pylucid.Size([1, 4, 6, 6, 6])
    """
    op = "conv_transpose3d"
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise _C.DtypeMismatch(f"{op}: input and weight must be Tensors, got {type(input).__name__} and "
                               f"{type(weight).__name__}")
    if input.dim() not in (4, 5):
        raise _C.ShapeMismatch(f"{op}: Expected 4D (unbatched) or 5D (batched) input to conv_transpose3d, but got "
                               f"input of size: {list(input.shape)}")
    if weight.dim() != 5:
        raise _C.ShapeMismatch(f"{op}: weight must be 5-D (C_in, C_out / groups, kD, kH, kW), got "
                               f"{list(weight.shape)}")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input
    N, C, D, H, W = x.shape
    Ci, Og, kD, kH, kW = weight.shape
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise _C.LucidError(f"{op}: non-positive groups is not supported, got {groups!r}")
    if C != Ci:
        raise _C.ShapeMismatch(f"{op}: Given transposed=1, weight of size {list(weight.shape)}, expected input"
                               f"{list(x.shape)} to have {Ci} channels, but got {C} channels instead")
    O = Og * groups
    if bias is not None and (not isinstance(bias, Tensor) or tuple(bias.shape) != (O,)):
        raise _C.ShapeMismatch(f"{op}: bias must be a Tensor of shape [{O}], got "
                               f"{list(bias.shape) if isinstance(bias, Tensor) else type(bias).__name__}")
    s = _triple(stride, "stride", op)
    p = _triple(padding, "padding", op)
    opad = _triple(output_padding, "output_padding", op)
    dl = _triple(dilation, "dilation", op)
    if min(s) < 1 or min(dl) < 1 or min(p) < 0 or min(opad) < 0:
        raise _C.LucidError(f"{op}: stride and dilation must be positive and padding non-negative, got stride {s}, "
                            f"padding {p}, dilation {dl}")
    for i in range(3):
        if opad[i] >= max(s[i], dl[i]):
            raise _C.LucidError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                                f"output_padding={opad}, stride={s}, dilation={dl}")
    Do = (D - 1) * s[0] - 2 * p[0] + dl[0] * (kD - 1) + opad[0] + 1
    if Do <= 0:
        raise _C.ShapeMismatch(f"{op}: the output depth {Do} is not positive (input depth {D}, kernel {kD}, stride "
                               f"{s[0]}, padding {p[0]})")
    xs = x.transpose(1, 2).reshape(N * D, C, H, W)
    full = (D - 1) * s[0] + dl[0] * (kD - 1) + 1 + opad[0]
    span = (D - 1) * s[0] + 1
    terms = []
    for kd in range(kD):
        y = conv_transpose2d(xs, weight[:, :, kd], None, s[1:], p[1:], opad[1:], groups, dl[1:])
        Ho, Wo = y.shape[-2], y.shape[-1]
        y = y.reshape(N, D, O, Ho, Wo).transpose(1, 2)  # (N, O, D, Ho, Wo)
        if s[0] > 1:  # input depth i lands at i * s: s - 1 zero frames between
            from .._tensor import zeros
            gap = zeros(*y.shape, dtype=y.dtype)
            y = _C.stack([y] + [gap] * (s[0] - 1), 3).reshape(N, O, D * s[0], Ho, Wo)[:, :, :span]
        lo = kd * dl[0]
        terms.append(pad(y, (0, 0, 0, 0, lo, full - span - lo)))
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    out = out[:, :, p[0]:p[0] + Do]
    if bias is not None:
        out = out + bias.reshape(1, O, 1, 1, 1)
    out = out.contiguous()
    return out.squeeze(0) if unbatched else out
