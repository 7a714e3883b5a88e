"""Resizing and channel dropout with PyTorch's signatures: ``interpolate`` (nearest,
nearest-exact, linear, bilinear, trilinear, bicubic, area, and antialiased bilinear/bicubic) and
``dropout1d`` / ``dropout2d``.

``interpolate`` is separable: one pass per spatial dim, last dim first, each an
``index_select`` (nearest), two ``index_select`` blended with per-position weights (linear),
or a product with an ``(out, in)`` weight matrix (bicubic, area, antialias), so its gradient
(and any higher one) comes from those ops. Source indices and weights follow PyTorch's CPU
kernels, computed in the same precision (float32 for nearest and for float32 inputs, float64
for float64 inputs), so the same pixels are picked.
"""
import math
import warnings

import numpy as np

from .. import _C
from .._C import Tensor
from .._tensor import empty, from_numpy, zeros

__all__ = ["dropout1d", "dropout2d", "interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]

_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")


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


def _scale(n_in, n_out, scale, align_corners, ft):
    # PyTorch's area_pixel_compute_scale in precision ft
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)


def _cubic_matrix(n_in, n_out, scale, align_corners, ft):
    """(n_out, n_in) weights of PyTorch's bicubic kernel: Keys' cubic convolution with
    A = -0.75 on the 4 taps around the (unclamped) source coordinate; taps past an edge read the
    edge pixel, so their weights add to it."""
    ratio = _scale(n_in, n_out, scale, align_corners, ft)
    o = np.arange(n_out).astype(ft)
    src = (ratio * o if align_corners else ratio * (o + ft(0.5)) - ft(0.5)).astype(ft)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - i0.astype(ft), ft(0), ft(1)).astype(ft)
    A = ft(-0.75)

    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A

    coeffs = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    m = np.zeros((n_out, n_in), ft)
    for j, c in enumerate(coeffs):
        np.add.at(m, (np.arange(n_out), np.clip(i0 - 1 + j, 0, n_in - 1)), c.astype(ft))
    return m


def _antialias_matrix(n_in, n_out, scale, align_corners, ft, cubic):
    """(n_out, n_in) weights of PyTorch's antialiased resize: when downsampling by ``scale``,
    the filter (triangle, or Keys' cubic with A = -0.5) is stretched by ``scale`` so every
    input pixel contributes; each row is normalised to sum to 1."""
    ratio = _scale(n_in, n_out, scale, align_corners, ft)
    size = 4 if cubic else 2
    support = ft(size * 0.5) * ratio if ratio >= 1 else ft(size * 0.5)
    inv = ft(1) / ratio if ratio >= 1 else ft(1)

    def filt(x):
        x = np.abs(x)
        if not cubic:
            return np.where(x < 1, 1 - x, 0).astype(ft)
        a = ft(-0.5)
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0)).astype(ft)

    m = np.zeros((n_out, n_in), ft)
    for i in range(n_out):
        center = ratio * ft(i + 0.5)
        lo = max(int(center - support + ft(0.5)), 0)
        hi = min(int(center + support + ft(0.5)), n_in)
        w = filt((np.arange(lo, hi).astype(ft) - center + ft(0.5)) * inv)
        total = w.sum(dtype=ft)
        m[i, lo:hi] = w / total if total != 0 else w
    return m


def _area_matrix(n_in, n_out, ft):
    """(n_out, n_in) weights of adaptive average pooling: output o averages the inputs
    floor(o * in / out) .. ceil((o + 1) * in / out) - 1."""
    m = np.zeros((n_out, n_in), ft)
    for o in range(n_out):
        lo, hi = o * n_in // n_out, -(-(o + 1) * n_in // n_out)
        m[o, lo:hi] = ft(1) / ft(hi - lo)
    return m


def _apply_matrix(y, d, m):
    """Contracts dim d of y with the rows of m: y'[.., o, ..] = sum_i m[o, i] y[.., i, ..]."""
    if m.shape[0] == m.shape[1] and np.array_equal(m, np.eye(m.shape[0], dtype=m.dtype)):
        return y
    mt = from_numpy(np.asarray(m.T, order="C")).to(y.dtype)
    if d == y.ndim - 1:
        return y @ mt
    return (y.movedim(d, -1) @ mt).movedim(-1, d)


def _index(a):
    return from_numpy(np.asarray(a, dtype=np.int64, order="C"))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False) -> Tensor:
    """Resizes ``input`` ``(N, C, *spatial)`` to ``size`` or by ``scale_factor`` (exactly one).

    ``mode``: ``'nearest'`` (source index ``floor(dst * in / out)``, PyTorch's rule, 3-D to 5-D
    inputs), ``'nearest-exact'`` (``floor((dst + 0.5) * in / out)``), ``'linear'`` (3-D),
    ``'bilinear'`` (4-D), ``'trilinear'`` (5-D), ``'bicubic'`` (4-D; Keys' cubic convolution with
    ``A = -0.75`` over 4 taps per dim, edge pixels repeated) or ``'area'`` (adaptive average
    pooling to the output size). For the interpolating modes, ``align_corners=True`` maps the
    corner pixels onto each other (``src = dst * (in - 1) / (out - 1)``); the default ``False``
    maps pixel centres (``src = (dst + 0.5) * in / out - 0.5``, clamped at 0 except for
    bicubic). ``antialias=True`` (bilinear and bicubic, 4-D) widens the filter by the
    downsampling factor, as PyTorch. A given ``scale_factor`` sets the output size
    ``floor(in * scale_factor)`` and, unless ``recompute_scale_factor``, is the scale used for
    the source indices, as PyTorch.

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
    if mode not in _INTERPOLATING and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D "
                         "tensor as input")
    if not input.is_floating_point():
        raise _C.DtypeMismatch(f"interpolate: expected a floating input, got {input.dtype}")
    dim = input.ndim - 2
    need = {"linear": (1,), "bilinear": (2,), "bicubic": (2,), "trilinear": (3,)}.get(mode, (1, 2, 3))
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
    if mode == "area":
        if dim < 3:  # PyTorch's area mode is adaptive average pooling to the output size
            from ._functional_pool import adaptive_avg_pool1d, adaptive_avg_pool2d
            return (adaptive_avg_pool1d if dim == 1 else adaptive_avg_pool2d)(input, sizes)
    y = input
    for i in reversed(range(dim)):  # last dim first, as PyTorch blends w then h
        d, n_in, n_out = 2 + i, spatial[i], sizes[i]
        if mode == "area":
            if n_in != n_out:
                y = _apply_matrix(y, d, _area_matrix(n_in, n_out, ft))
            continue
        if antialias:
            y = _apply_matrix(y, d, _antialias_matrix(n_in, n_out, scales[i], align, ft, mode == "bicubic"))
            continue
        if mode == "bicubic":
            y = _apply_matrix(y, d, _cubic_matrix(n_in, n_out, scales[i], align, ft))
            continue
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
        tw0 = from_numpy(np.asarray(w0.reshape(shape), order="C")).to(input.dtype)
        tw1 = from_numpy(np.asarray(w1.reshape(shape), order="C")).to(input.dtype)
        y = y.index_select(d, _index(i0)) * tw0 + y.index_select(d, _index(i1)) * tw1
    return y


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (as in PyTorch, it warns).

    >>> import warnings, pylucid
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     pylucid.nn.functional.upsample(pylucid.ones(1, 1, 2), scale_factor=2).shape
    pylucid.Size([1, 1, 4])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')`` (it warns)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)``
    (it warns)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


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


def _written_back(input, out, inplace):
    """PyTorch's ``inplace=True`` for the dropouts: the result is written into ``input`` (a
    recorded copy, so autograd sees the in-place op) and ``input`` is returned."""
    return input.copy_(out) if inplace and out is not input else out


def dropout1d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout for ``(N, C, L)`` or unbatched ``(C, L)``: each whole channel is zeroed
    with probability ``p`` and the kept ones scaled by ``1 / (1 - p)``.

    >>> import pylucid
    >>> y = pylucid.nn.functional.dropout1d(pylucid.ones(4, 8, 5), p=0.5)
    >>> all(len(set(row)) == 1 for sample in y.tolist() for row in sample)
    True
    """
    if not isinstance(input, Tensor) or input.ndim not in (2, 3):
        got = f"a {input.ndim}D input" if isinstance(input, Tensor) else type(input).__name__
        raise _C.ShapeMismatch(f"dropout1d: Expected 2D or 3D input, but received {got}")
    if input.ndim == 2:
        return _written_back(input, _feature_dropout(input.unsqueeze(0), p, training, "dropout1d").squeeze(0), inplace)
    return _written_back(input, _feature_dropout(input, p, training, "dropout1d"), inplace)


def dropout2d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout for ``(N, C, H, W)``: each whole feature map is zeroed with probability
    ``p`` and the kept ones scaled by ``1 / (1 - p)``. As PyTorch, a 3-D input is read as
    ``(N, C, L)`` (1-d channel dropout), and other ranks drop per ``(dim 0, dim 1)`` entry.

    >>> import pylucid
    >>> y = pylucid.nn.functional.dropout2d(pylucid.ones(2, 3, 4, 4), p=0.0)
    >>> y.shape
    pylucid.Size([2, 3, 4, 4])
    """
    if isinstance(input, Tensor) and input.ndim < 2:
        raise _C.ShapeMismatch(f"dropout2d: expected an input with at least 2 dims, got {input.ndim}-D")
    return _written_back(input, _feature_dropout(input, p, training, "dropout2d"), inplace)
