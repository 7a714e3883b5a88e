"""Resizing and channel dropout with PyTorch's signatures: ``interpolate`` (nearest,
nearest-exact, linear, bilinear) and ``dropout1d`` / ``dropout2d``.

``interpolate`` is separable: one pass per spatial dim, last dim first, each an
``index_select`` (nearest) or two ``index_select`` blended with per-position weights (linear),
so its gradient (and any higher one) comes from those ops. Source indices and weights follow
PyTorch's CPU kernels, computed in the same precision (float32 for nearest and for float32
inputs, float64 for float64 inputs), so the same pixels are picked.
"""
import math

import numpy as np

from .. import _C
from .._C import Tensor
from .._tensor import empty, from_numpy, zeros

__all__ = ["dropout1d", "dropout2d", "interpolate"]

_MODES = ("nearest", "nearest-exact", "linear", "bilinear")


def _nearest_index(n_in, n_out, scale, exact):
    # PyTorch's nearest_idx / nearest_exact_idx: the scale is always a float32.
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    o = np.arange(n_out)
    if exact:
        src = np.floor((o + 0.5) * np.float64(s))
    else:
        if n_out == n_in:
            return o
        if n_out == 2 * n_in:
            return o >> 1
        src = np.floor(o.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_weights(n_in, n_out, scale, align_corners, ft):
    """(i0, i1, w0, w1) of PyTorch's compute_source_index_and_lambda, in precision ``ft``."""
    o = np.arange(n_out)
    if n_out == n_in:
        return o, o, np.ones(n_out, ft), np.zeros(n_out, ft)
    if align_corners:
        ratio = ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
        src = ratio * o.astype(ft)
    else:
        ratio = ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)
        src = ratio * (o.astype(ft) + ft(0.5)) - ft(0.5)
        src = np.where(src < 0, ft(0), src).astype(ft)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    w1 = np.clip(src - i0.astype(ft), ft(0), ft(1)).astype(ft)
    i1 = i0 + (i0 < n_in - 1)
    return i0, i1, (ft(1) - w1).astype(ft), w1


def _index(a):
    return from_numpy(np.ascontiguousarray(a, dtype=np.int64))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False) -> Tensor:
    """Resizes ``input`` ``(N, C, *spatial)`` to ``size`` or by ``scale_factor`` (exactly one).

    ``mode``: ``'nearest'`` (source index ``floor(dst * in / out)``, PyTorch's rule, 3-D to 5-D
    inputs), ``'nearest-exact'`` (``floor((dst + 0.5) * in / out)``), ``'linear'`` (3-D) or
    ``'bilinear'`` (4-D). For the linear modes, ``align_corners=True`` maps the corner pixels
    onto each other (``src = dst * (in - 1) / (out - 1)``); the default ``False`` maps pixel
    centres (``src = (dst + 0.5) * in / out - 0.5``, clamped at 0). A given ``scale_factor``
    sets the output size ``floor(in * scale_factor)`` and, unless ``recompute_scale_factor``,
    is the scale used for the source indices, as PyTorch.

    >>> import pylucid
    >>> x = pylucid.tensor([[[1.0, 2.0]]])
    >>> pylucid.nn.functional.interpolate(x, scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> pylucid.nn.functional.interpolate(x, size=4, mode="linear").tolist()
    [[[1.0, 1.25, 1.75, 2.0]]]
    >>> pylucid.nn.functional.interpolate(x, size=3, mode="linear", align_corners=True).tolist()
    [[[1.0, 1.5, 2.0]]]
    """
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"interpolate: expected a Tensor input, got {type(input).__name__}")
    if not isinstance(mode, str) or mode not in _MODES:
        raise _C.LucidError(f"interpolate: mode {mode!r} is not supported (expected one of {', '.join(_MODES)})")
    if antialias:
        raise _C.LucidError("interpolate: antialias=True is not supported")
    if mode in ("nearest", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear")
    if not input.is_floating_point():
        raise _C.DtypeMismatch(f"interpolate: expected a floating input, got {input.dtype}")
    dim = input.ndim - 2
    need = {"linear": (1,), "bilinear": (2,)}.get(mode, (1, 2, 3))
    if dim not in need:
        raise _C.ShapeMismatch(f"interpolate: got {input.ndim}-D input, but {mode} mode needs "
                               f"{' or '.join(str(d + 2) for d in need)}-D input (N, C, *spatial)")
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales: list = [None] * dim
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * dim
        if len(sizes) != dim:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {spatial} and output size of {list(sizes)}")
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        for s in sizes:
            if isinstance(s, bool) or not isinstance(s, int):
                raise _C.DtypeMismatch(f"interpolate: size must be ints, got {type(s).__name__}")
    elif scale_factor is not None:
        factors = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * dim
        if len(factors) != dim:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {spatial} and scale_factor of {list(factors)}")
        for f in factors:
            if isinstance(f, bool) or not isinstance(f, (int, float)) or not math.isfinite(f):
                raise _C.DtypeMismatch(f"interpolate: scale_factor must be finite numbers, got {f!r}")
        sizes = [math.floor(float(n) * f) for n, f in zip(spatial, factors)]
        if not recompute_scale_factor:
            scales = [float(f) for f in factors]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if any(s <= 0 for s in sizes) or any(n <= 0 for n in spatial):
        raise _C.ShapeMismatch(f"interpolate: input and output sizes should be greater than 0, but got input "
                               f"{spatial} and output {sizes}")
    align = bool(align_corners)
    ft = np.float64 if input.dtype == _C.dtype.float64 else np.float32
    y = input
    for i in reversed(range(dim)):  # last dim first, as PyTorch blends w then h
        d, n_in, n_out = 2 + i, spatial[i], sizes[i]
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_index(n_in, n_out, scales[i], mode == "nearest-exact")
            if n_in != n_out or not np.array_equal(idx, np.arange(n_out)):
                y = y.index_select(d, _index(idx))
            continue
        i0, i1, w0, w1 = _linear_weights(n_in, n_out, scales[i], align, ft)
        if not w1.any():
            if n_in != n_out or not np.array_equal(i0, np.arange(n_out)):
                y = y.index_select(d, _index(i0))
            continue
        shape = (n_out,) + (1,) * (input.ndim - 1 - d)
        tw0 = from_numpy(np.ascontiguousarray(w0.reshape(shape))).to(input.dtype)
        tw1 = from_numpy(np.ascontiguousarray(w1.reshape(shape))).to(input.dtype)
        y = y.index_select(d, _index(i0)) * tw0 + y.index_select(d, _index(i1)) * tw1
    return y


def _feature_dropout(input, p, training, name):
    # PyTorch's feature_dropout: one Bernoulli(1 - p) draw per (N, C), scaled by 1 / (1 - p).
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{name}: dropout probability has to be between 0 and 1, but got {p!r}")
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"{name}: expected a Tensor input, got {type(input).__name__}")
    if not input.is_floating_point():
        raise _C.DtypeMismatch(f"{name}: expected a floating input, got {input.dtype}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * zeros((), dtype=input.dtype)
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    noise = empty(shape, dtype=input.dtype).bernoulli_(1.0 - p) / (1.0 - p)
    return input * noise


def dropout1d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout for ``(N, C, L)`` or unbatched ``(C, L)``: each whole channel is zeroed
    with probability ``p`` and the kept ones scaled by ``1 / (1 - p)``.

    >>> import pylucid
    >>> y = pylucid.nn.functional.dropout1d(pylucid.ones(4, 8, 5), p=0.5)
    >>> all(len(set(row)) == 1 for sample in y.tolist() for row in sample)
    True
    """
    if inplace:
        raise _C.LucidError("dropout1d: inplace=True is not supported")
    if not isinstance(input, Tensor) or input.ndim not in (2, 3):
        got = f"a {input.ndim}D input" if isinstance(input, Tensor) else type(input).__name__
        raise _C.ShapeMismatch(f"dropout1d: Expected 2D or 3D input, but received {got}")
    if input.ndim == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, "dropout1d").squeeze(0)
    return _feature_dropout(input, p, training, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout for ``(N, C, H, W)``: each whole feature map is zeroed with probability
    ``p`` and the kept ones scaled by ``1 / (1 - p)``. As PyTorch, a 3-D input is read as
    ``(N, C, L)`` (1-d channel dropout), and other ranks drop per ``(dim 0, dim 1)`` entry.

    >>> import pylucid
    >>> y = pylucid.nn.functional.dropout2d(pylucid.ones(2, 3, 4, 4), p=0.0)
    >>> y.shape
    pylucid.Size([2, 3, 4, 4])
    """
    if inplace:
        raise _C.LucidError("dropout2d: inplace=True is not supported")
    if isinstance(input, Tensor) and input.ndim < 2:
        raise _C.ShapeMismatch(f"dropout2d: expected an input with at least 2 dims, got {input.ndim}-D")
    return _feature_dropout(input, p, training, "dropout2d")
