"""Fractional max pooling (Graham, 2014) with PyTorch's signature and windows:
``fractional_max_pool2d`` and the ``FractionalMaxPool2d`` layer.

Each (sample, channel) draws two uniforms ``u`` (``_random_samples``, by default
``rand(N, C, 2)`` in the input's dtype, as PyTorch draws them); along a dim of input size ``n``,
output size ``m`` and pool size ``k`` the windows start at
``int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (n - k) / (m - 1)`` computed in the
input's dtype, and the last one at ``n - k`` (PyTorch's ``generate_intervals``; ``u[0]`` is for
the width, ``u[1]`` for the height). The output is each window's maximum, read with ``gather``
so the gradient goes to the maximum's position; the indices are flat ``h * W + w``.
"""
import numpy as np

from .. import _C
from .._C import Tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices"]

_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16}


def _pair(v):
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise _C.ShapeMismatch(f"fractional_max_pool2d: expected an int or a pair, got {v!r}")
        return tuple(v)
    return (v, v)


def _intervals(samples, n, m, k, np_dtype):
    """(rows, m) window starts for the uniforms ``samples`` (rows,), in the input's precision."""
    u = samples.astype(np_dtype)
    out = np.empty((len(u), m), dtype=np.int64)
    if m > 1:
        alpha = np_dtype(n - k) / np_dtype(m - 1)
        base = (u * alpha).astype(np.float64).astype(np.int64)  # C++ static_cast<int> truncates
        for i in range(m - 1):
            out[:, i] = ((np_dtype(i) + u) * alpha).astype(np.float64).astype(np.int64) - base
    if m > 0:
        out[:, m - 1] = n - k
    return out


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=True, _random_samples=None):
    """:func:`fractional_max_pool2d` returning ``(output, indices)``."""
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"fractional_max_pool2d: input must be a Tensor, got {type(input).__name__}")
    if input.dim() not in (3, 4):
        raise _C.ShapeMismatch(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    kh, kw = _pair(kernel_size)
    ih, iw = input.shape[-2], input.shape[-1]
    if output_size is None:
        ratio = _pair(output_ratio)
        output_size = (int(ih * ratio[0]), int(iw * ratio[1]))
    oh, ow = _pair(output_size)
    if oh + kh - 1 > ih:
        raise _C.LucidError(f"fractional_max_pool2d(): pool height {kh} too large relative to input height {ih}")
    if ow + kw - 1 > iw:
        raise _C.LucidError(f"fractional_max_pool2d(): pool width {kw} too large relative to input width {iw}")
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[0], x.shape[1]
    if _random_samples is None:
        from .._random import rand  # noqa: PLC0415
        _random_samples = rand(n, c, 2, dtype=input.dtype)
    if tuple(_random_samples.shape) != (n, c, 2):
        raise _C.ShapeMismatch(f"fractional_max_pool2d(): expected _random_samples of shape {[n, c, 2]}, got "
                               f"{list(_random_samples.shape)}")
    np_dtype = _NP.get(str(input.dtype).split(".")[-1], np.float32)
    s = _random_samples.detach().to(_C.dtype.float64).numpy().reshape(n * c, 2)
    starts_w = _intervals(s[:, 0], iw, ow, kw, np_dtype)  # (n*c, ow)
    starts_h = _intervals(s[:, 1], ih, oh, kh, np_dtype)  # (n*c, oh)
    # Flat input positions of every window tap: (n*c, oh, ow, kh*kw), taps in row-major order.
    dh, dw = np.meshgrid(np.arange(kh), np.arange(kw), indexing="ij")
    rows = starts_h[:, :, None, None] + dh.reshape(1, 1, 1, -1)
    cols = starts_w[:, None, :, None] + dw.reshape(1, 1, 1, -1)
    taps = (rows * iw + cols).reshape(n, c, oh * ow * kh * kw)
    from .._tensor import from_numpy  # noqa: PLC0415
    vals = x.reshape(n, c, ih * iw).gather(2, from_numpy(taps)).reshape(n, c, oh, ow, kh * kw)
    out, arg = vals.max(-1)  # the first maximum of each window, as PyTorch's scan keeps it
    idx = from_numpy(taps.reshape(n, c, oh, ow, kh * kw)).gather(4, arg.unsqueeze(-1)).squeeze(-1)
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-d fractional max pooling of ``input`` ``(N, C, H, W)`` (or ``(C, H, W)``) to
    ``output_size``, or to ``output_ratio`` (each in (0, 1)) times the input size, with
    ``kernel_size`` windows at pseudo-random fractional strides; ``return_indices`` also
    returns the flat positions of the maxima."""
    out, idx = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, True,
                                                  _random_samples)
    return (out, idx) if return_indices else out
