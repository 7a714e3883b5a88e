"""3-d pooling with PyTorch's signatures: ``max_pool3d`` (and ``max_pool3d_with_indices``),
``avg_pool3d``, ``adaptive_avg_pool3d`` and ``adaptive_max_pool3d``.

Both are written over the 2-d C++ pooling: the output depths are stacked into the batch, one 2-d
pooling runs per depth tap of the window, and the taps are combined, so the gradients are those of
the 2-d poolings and of the combination:

* max: the tap holding the maximum is picked with ``max`` over the taps and read back with
  ``gather``, so the whole gradient goes to one element, the first maximum in (depth, row,
  column) order as in PyTorch; the indices are flat within each ``D x H x W`` volume.
* avg: 2-d window sums (``divisor_override=1``) added over the depth taps, divided by the
  window's size (with or without the zero padding, or ``divisor_override``), computed per
  output position from the three 1-d window extents as PyTorch does.
"""
import numpy as np

from .. import _C
from .._C import Tensor
from ._functional_conv import pad
from ._functional_pool import _stride, avg_pool2d, max_pool2d_with_indices

__all__ = ["adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "avg_pool3d", "max_pool3d",
           "max_pool3d_with_indices"]


def _triple(v, name, op):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            v = (v[0],) * 3
        if len(v) != 3 or not all(isinstance(e, int) and not isinstance(e, bool) for e in v):
            raise _C.ShapeMismatch(f"{op}: {name} must be an int or a tuple of 3 ints, got {tuple(v)!r}")
        return tuple(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _C.DtypeMismatch(f"{op}: {name} must be an int or a tuple of 3 ints, got {type(v).__name__}")
    return (v, v, v)


def _out_size(n, k, s, p, d, ceil_mode):
    # PyTorch's pooling_output_shape.
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _prepare(input, kernel_size, stride, padding, dilation, ceil_mode, op, is_max):
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dim() not in (4, 5):
        raise _C.ShapeMismatch(f"{op}: non-empty 4D or 5D (batch mode) tensor expected for input, got shape "
                               f"{list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{op}: expected a floating point input, got {input.dtype}")
    k = _triple(kernel_size, "kernel_size", op)
    s = _triple(_stride(stride, kernel_size), "stride", op)
    p = _triple(padding, "padding", op)
    d = _triple(dilation, "dilation", op)
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise _C.LucidError(f"{op}: kernel_size, stride and dilation must be positive, got {k}, {s}, {d}")
    for i in range(3):
        limit = ((k[i] - 1) * d[i] + 1) // 2 if is_max else k[i] // 2
        if p[i] < 0 or p[i] > limit:
            raise _C.ShapeMismatch(f"{op}: pad should be at most half of effective kernel size, but got pad={p[i]}, "
                                   f"kernel_size={k[i]} and dilation={d[i]}")
    x = input.unsqueeze(0) if input.dim() == 4 else input
    sizes = tuple(x.shape[2:])
    out = tuple(_out_size(sizes[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))
    if min(out) < 1 or min(sizes) < 1:
        raise _C.ShapeMismatch(f"{op}: Given input size: {tuple(x.shape[1:])}. Calculated output size: "
                               f"{(x.shape[1],) + out}. Output size is too small")
    return x, k, s, p, d, sizes, out


def _depth_taps(x, k, s, p, d, Do, fill):
    """The input padded in depth with ``fill`` and, per depth tap, the slice of the frames it
    reads for every output depth, batched as (N * Do, C, H, W)."""
    N, C, D, H, W = x.shape
    hi = max(0, (Do - 1) * s[0] + d[0] * (k[0] - 1) + 1 - (D + p[0]))
    xp = pad(x, (0, 0, 0, 0, p[0], hi), value=fill) if (p[0] or hi) else x
    taps = []
    for kd in range(k[0]):
        start = kd * d[0]
        xs = xp[:, :, start:start + s[0] * (Do - 1) + 1:s[0]]
        taps.append(xs.transpose(1, 2).reshape(N * Do, C, H, W))
    return taps


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    """``max_pool3d`` returning ``(output, indices)`` (flat ``d * H * W + h * W + w`` per volume)."""
    x, k, s, p, d, (D, H, W), (Do, Ho, Wo) = _prepare(input, kernel_size, stride, padding, dilation, ceil_mode,
                                                      "max_pool3d", True)
    N, C = x.shape[0], x.shape[1]
    vals, idxs = [], []
    for xs in _depth_taps(x, k, s, p, d, Do, float("-inf")):
        v, i = max_pool2d_with_indices(xs, k[1:], s[1:], p[1:], d[1:], ceil_mode)
        vals.append(v)
        idxs.append(i)
    V = _C.stack(vals, 0)  # (kD, N * Do, C, Ho, Wo)
    arg = V.detach().max(0)[1].unsqueeze(0)
    y = V.gather(0, arg).squeeze(0)
    plane = _C.stack(idxs, 0).gather(0, arg).squeeze(0)
    from .._tensor import arange
    do = arange(Do, dtype=_C.dtype.int64).reshape(1, Do, 1, 1, 1)
    depth = do * s[0] - p[0] + arg.squeeze(0).reshape(N, Do, C, Ho, Wo) * d[0]
    flat = depth * (H * W) + plane.reshape(N, Do, C, Ho, Wo)
    y = y.reshape(N, Do, C, Ho, Wo).transpose(1, 2).contiguous()
    flat = flat.transpose(1, 2).contiguous()
    if input.dim() == 4:
        y, flat = y.squeeze(0), flat.squeeze(0)
    return y, flat


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-d max pooling of ``input`` ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``); sizes are
    ints or triples, ``stride`` defaults to ``kernel_size``, output sizes as :func:`max_pool2d`'s.

    >>> import pylucid
    >>> x = pylucid.arange(64.0).reshape(1, 1, 4, 4, 4)
    >>> pylucid.nn.functional.max_pool3d(x, 2).flatten().tolist()
    [21.0, 23.0, 29.0, 31.0, 53.0, 55.0, 61.0, 63.0]
    """
    y, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (y, idx) if return_indices else y


def _extents(n, k, s, p, out):
    i = np.arange(out)
    start = i * s - p
    end = np.minimum(start + k, n + p)
    size = end - start
    real = np.minimum(end, n) - np.maximum(start, 0)
    return size, real


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """3-d average pooling of ``input`` ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``): each
    window's sum divided by ``divisor_override``, else by its size counting the zero padding
    (``count_include_pad``, the default) or only the real elements.

    >>> import pylucid
    >>> pylucid.nn.functional.avg_pool3d(pylucid.ones(1, 1, 3, 3, 3), 2, padding=1).flatten().tolist()[:2]
    [0.125, 0.25]
    """
    if divisor_override is not None and (isinstance(divisor_override, bool) or divisor_override == 0):
        raise _C.LucidError("avg_pool3d: divisor must be not zero")
    x, k, s, p, d, sizes, (Do, Ho, Wo) = _prepare(input, kernel_size, stride, padding, 1, ceil_mode, "avg_pool3d",
                                                  False)
    N, C = x.shape[0], x.shape[1]
    terms = [avg_pool2d(xs, k[1:], s[1:], p[1:], ceil_mode, True, 1) for xs in _depth_taps(x, k, s, p, d, Do, 0.0)]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    if divisor_override is not None:
        div = np.full((Do, Ho, Wo), float(divisor_override))
    else:
        ext = [_extents(sizes[i], k[i], s[i], p[i], o) for i, o in enumerate((Do, Ho, Wo))]
        j = 0 if count_include_pad else 1
        div = ext[0][j][:, None, None] * ext[1][j][None, :, None] * ext[2][j][None, None, :]
        div = div.astype(np.float64)
    from .._tensor import tensor
    y = total.reshape(N, Do, C, Ho, Wo).transpose(1, 2) / tensor(div).to(total.dtype)
    y = y.contiguous()
    return y.squeeze(0) if input.dim() == 4 else y


def _adaptive_windows(n, o):
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)  # ceil((i + 1) * n / o)
    return start, end


def _output_size3(output_size, sizes, op):
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * 3
    output_size = tuple(output_size)
    if len(output_size) != 3:
        raise _C.ShapeMismatch(f"{op}: output_size must be an int or a tuple of 3, got {output_size!r}")
    out = tuple(sizes[i] if v is None else int(v) for i, v in enumerate(output_size))
    if min(out) < 0:
        raise _C.ShapeMismatch(f"{op}: output_size must be non-negative, got {output_size}")
    return out


def _adaptive_prepare(input, output_size, op):
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.dim() not in (4, 5):
        raise _C.ShapeMismatch(f"{op}: Expected 4D or 5D tensor, but got {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{op}: expected a floating point input, got {input.dtype}")
    x = input.unsqueeze(0) if input.dim() == 4 else input
    sizes = tuple(x.shape[2:])
    if min(sizes) <= 0:
        raise _C.ShapeMismatch(f"{op}: Expected input to have non-zero size for non-batch dimensions, but input has "
                               f"sizes {list(input.shape)}")
    return x, sizes, _output_size3(output_size, sizes, op)


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """Average pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) to ``output_size`` (an int or
    a triple; None keeps a dim): output ``i`` of each dim averages inputs
    ``floor(i n / o)`` to ``ceil((i + 1) n / o)``. The box mean is separable, so it is one
    averaging matrix per dim.

    >>> import pylucid
    >>> pylucid.nn.functional.adaptive_avg_pool3d(pylucid.ones(1, 2, 3, 4, 5), 1).shape
    pylucid.Size([1, 2, 1, 1, 1])
    """
    from .._tensor import tensor
    x, sizes, out = _adaptive_prepare(input, output_size, "adaptive_avg_pool3d")
    y = x
    for d in range(3):
        n, o = sizes[d], out[d]
        start, end = _adaptive_windows(n, o)
        M = np.zeros((o, n))
        for i in range(o):
            M[i, start[i]:end[i]] = 1.0 / (end[i] - start[i])
        y = (y.movedim(2 + d, -1) @ tensor(M.T).to(y.dtype)).movedim(-1, 2 + d)
    y = y.contiguous()
    return y.squeeze(0) if input.dim() == 4 else y


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    """``adaptive_max_pool3d`` returning ``(output, indices)`` (flat ``d * H * W + h * W + w``)."""
    from .._tensor import arange, tensor
    x, sizes, out = _adaptive_prepare(input, output_size, "adaptive_max_pool3d")
    N, C = x.shape[0], x.shape[1]
    D, H, W = sizes
    y = x
    idx = arange(D * H * W, dtype=_C.dtype.int64).reshape(1, 1, D, H, W).expand(N, C, D, H, W)
    # One dim at a time, last first: the first maximum in (d, h, w) order, as PyTorch's scan.
    for d in (2, 1, 0):
        n, o = sizes[d], out[d]
        start, end = _adaptive_windows(n, o)
        L = int((end - start).max()) if o else 1
        take = np.minimum(start[:, None] + np.arange(L)[None, :], (end - 1)[:, None]).reshape(-1)
        yt, it = y.movedim(2 + d, -1), idx.movedim(2 + d, -1)
        lead = tuple(yt.shape[:-1])
        t = tensor(take).reshape(*([1] * len(lead)), -1).expand(*lead, o * L)
        win = yt.gather(-1, t).reshape(*lead, o, L)
        iwin = it.gather(-1, t).reshape(*lead, o, L)
        arg = win.detach().max(-1)[1].unsqueeze(-1)
        y = win.gather(-1, arg).squeeze(-1).movedim(-1, 2 + d)
        idx = iwin.gather(-1, arg).squeeze(-1).movedim(-1, 2 + d)
    y, idx = y.contiguous(), idx.contiguous()
    if input.dim() == 4:
        y, idx = y.squeeze(0), idx.squeeze(0)
    return y, idx


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) to ``output_size`` over the
    windows of :func:`adaptive_avg_pool3d`; the gradient goes to the first maximum of each window
    in (depth, row, column) order, as in PyTorch.

    >>> import pylucid
    >>> x = pylucid.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> pylucid.nn.functional.adaptive_max_pool3d(x, 1).flatten().tolist()
    [7.0]
    """
    y, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (y, idx) if return_indices else y
