"""Spatial transformers with PyTorch's signatures: ``affine_grid`` (a batch of affine maps to a
sampling grid) and ``grid_sample`` (read an image at those points: ``bilinear``/``trilinear``,
``nearest`` and, for 4-D inputs, ``bicubic``; ``zeros``, ``border`` or ``reflection`` padding).

``grid_sample`` is written with vectorised pylucid ops: the grid becomes pixel coordinates
(PyTorch's unnormalise / clip / reflect, with the same gradients, including the zero gradient of
a clipped coordinate at and beyond the border), every interpolation tap is one ``gather`` from the
flattened image, and the taps are blended with weights that are functions of the grid. So the
gradients to ``input`` and to ``grid`` (and any higher one) are those ops' gradients. The
arithmetic follows PyTorch's CPU kernel step by step (same order of float operations), so a
float32 result matches PyTorch's to rounding.
"""
import warnings

import numpy as np

from .. import _C
from .._C import Tensor
from .._tensor import from_numpy as _from_numpy, linspace, ones, zeros

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")


def _warn_align_corners(stacklevel=3):
    warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.", UserWarning, stacklevel=stacklevel)


# ---- affine_grid -------------------------------------------------------------------------

def _linspace_from_neg_one(theta, n, align_corners):
    if n <= 1:
        return zeros(1, dtype=theta.dtype)
    r = linspace(-1.0, 1.0, n, dtype=theta.dtype)
    if not align_corners:
        r = r * (n - 1) / n
    return r


def affine_grid(theta, size, align_corners=None):
    """PyTorch's ``F.affine_grid``: for ``theta`` ``(N, 2, 3)`` and ``size`` ``(N, C, H, W)``, the
    grid ``(N, H, W, 2)`` of the points ``theta @ (x, y, 1)`` with ``x``, ``y`` the normalised
    output pixel coordinates (``(N, 3, 4)`` and ``(N, C, D, H, W)`` give ``(N, D, H, W, 3)``).
    Differentiable in ``theta``."""
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if not isinstance(theta, Tensor):
        raise _C.DtypeMismatch(f"affine_grid: theta must be a Tensor, got {type(theta).__name__}")
    if not theta.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"affine_grid: Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise _C.ShapeMismatch(f"affine_grid: Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                                   f"{size}. Got {list(theta.shape)}.")
        spatial = size[2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise _C.ShapeMismatch(f"affine_grid: Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                                   f"{size}. Got {list(theta.shape)}.")
        spatial = size[2:]
    else:
        raise _C.LucidError(f"affine_grid: affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
                            f"transforms, respectively. Got size {size}.")
    if theta.shape[0] != size[0]:
        raise _C.ShapeMismatch(f"affine_grid: theta has batch size {theta.shape[0]} but size asks for {size[0]}")
    if min(size) <= 0:
        raise _C.ShapeMismatch(f"affine_grid: Expected non-zero, positive output size. Got {size}")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", UserWarning, stacklevel=2)
    N, k = size[0], len(spatial)
    # base[..., j] is the coordinate along spatial dim k-1-j (x = width first), then a column of ones.
    cols = []
    for j in range(k):
        d = k - 1 - j
        r = _linspace_from_neg_one(theta, spatial[d], align_corners)
        shape = [1] * k
        shape[d] = spatial[d]
        cols.append(r.reshape(shape).expand(*spatial))
    cols.append(ones(tuple(spatial), dtype=theta.dtype))
    base = _C.stack(cols, -1).reshape(1, -1, k + 1).expand(N, -1, k + 1)
    grid = base.bmm(theta.transpose(1, 2))
    return grid.reshape(N, *spatial, k)


# ---- grid_sample -------------------------------------------------------------------------

_LONG_DOUBLE_EXACT = np.finfo(np.longdouble).nmant >= 63


def _fused_scale_shift(a, scale, shift):
    """``a * scale - shift`` rounded once, as the fused multiply-add the compiler makes of
    PyTorch's vectorised ``(c + 1) * scale - 0.5``; differentiable as the plain expression.
    NOTE: rounding the product first moves points that land on a pixel (x = k) to k - 1 ulp and
    so to the cell on the left. The exact value is formed in float64 (float32 and half inputs:
    the product of a 24-bit value and a small scale is exact there) or in x86 extended precision
    (float64 inputs); without it, float64 keeps the two roundings."""
    plain = a * scale - shift
    d = a.detach()
    if d.dtype == _C.dtype.float64:
        if not _LONG_DOUBLE_EXACT:
            return plain
        exact = _from_numpy((d.numpy().astype(np.longdouble) * scale - shift).astype(np.float64))
    else:
        exact = (d.to(_C.dtype.float64) * scale - shift).to(d.dtype)
    # plain and exact are at most an ulp apart, so exact - plain is exact and so is the sum
    # (an infinite or NaN coordinate keeps its plain value).
    return plain + (exact - plain.detach()).nan_to_num(0.0)


def _unnormalize(c, n, align_corners, k):
    # NOTE: 4-D inputs run PyTorch's vectorised CPU kernel, which unnormalises as
    # (c + 1) * scale - 0.5 (scale n / 2; aligned: (c + 1) * ((n - 1) / 2)); 5-D inputs its scalar
    # kernel's ((c + 1) * n - 1) / 2. The roundings differ, and where a point lands on a pixel
    # (an identity affine_grid) they decide which cell it is read from and so its grid gradient.
    if k == 2:
        return (c + 1) * ((n - 1) / 2) if align_corners else _fused_scale_shift(c + 1, n / 2, 0.5)
    if align_corners:
        return ((c + 1) / 2) * (n - 1)
    return ((c + 1) * n - 1) / 2


def _clip(c, n):
    # min(n-1, max(c, 0)), gradient 1 strictly inside (0, n-1) and 0 elsewhere, as PyTorch's
    # clip_coordinates_set_grad; a NaN coordinate clips to 0, as in PyTorch's kernel.
    inside = (c > 0) & (c < n - 1)
    return _C.where(inside, c, c.detach().nan_to_num(0.0).clamp(0, n - 1))


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return c * 0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = c - lo
    sign = (d >= 0).to(c.dtype) * 2 - 1
    a = d * sign
    flips = (a / span).detach().floor()
    extra = a - flips * span  # fmod(a, span) for a >= 0
    even = _C.remainder(flips, 2) == 0
    return _C.where(even, extra + lo, (span - extra) + lo)


def _reflect_2d(c, n, align_corners):
    # The vectorised kernel's reflection: |c - low| folded by twice the span, then the nearer of
    # extra and twice_span - extra (the gradient sign follows the same choice).
    if align_corners:
        if n <= 1:
            return c * 0
        low, twice_span = 0.0, float(2 * (n - 1))
    else:
        low, twice_span = -0.5, float(2 * n)
    d = c - low if low else c
    a = d * ((d >= 0).to(c.dtype) * 2 - 1)
    extra = a - (a / twice_span).detach().trunc() * twice_span
    reflected = twice_span - extra
    out = _C.where(extra > reflected, reflected, extra)
    return out + low if low else out


def _pad_coordinates(c, n, padding_mode, align_corners, k):
    if padding_mode == "border":
        return _clip(c, n)
    if padding_mode == "reflection":
        if k == 2:
            c = _reflect_2d(c, n, align_corners)
        else:
            c = _reflect(c, 0, 2 * (n - 1)) if align_corners else _reflect(c, -1, 2 * n - 1)
        return _clip(c, n)
    return c


def _check_grid_sample(input, grid, mode, padding_mode):
    if not isinstance(input, Tensor) or not isinstance(grid, Tensor):
        raise _C.DtypeMismatch(f"grid_sample: input and grid must be Tensors, got {type(input).__name__} and "
                               f"{type(grid).__name__}")
    if mode not in _MODES:
        raise _C.LucidError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                            f"but got: '{mode}'")
    if padding_mode not in _PADDING:
        raise _C.LucidError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                            f"'reflection', but got: '{padding_mode}'")
    if not input.dtype.is_floating_point or not grid.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"grid_sample: expected floating point input and grid, got {input.dtype} and "
                               f"{grid.dtype}")
    if input.dtype != grid.dtype:
        raise _C.DtypeMismatch(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                               f"{input.dtype} and grid has {grid.dtype}")
    if input.dim() not in (4, 5):
        raise _C.ShapeMismatch(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
                               f"but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.dim() != input.dim():
        raise _C.ShapeMismatch(f"grid_sampler(): expected grid to have the same number of dimensions as input "
                               f"({input.dim()}), but got grid with sizes {list(grid.shape)}")
    k = input.dim() - 2
    if grid.shape[0] != input.shape[0]:
        raise _C.ShapeMismatch(f"grid_sampler(): expected grid and input to have same batch size, but got input "
                               f"with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != k:
        raise _C.ShapeMismatch(f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid "
                               f"with sizes {list(grid.shape)}")
    for d in range(2, input.dim()):
        if input.shape[d] <= 0:
            raise _C.ShapeMismatch(f"grid_sampler(): expected input to have non-empty spatial dimensions, but "
                                   f"input has sizes {list(input.shape)} with dimension {d} being empty")
    if mode == "bicubic" and k != 2:
        raise _C.ShapeMismatch(f"grid_sampler(): bicubic interpolation only supports 4D input, got "
                               f"{list(input.shape)}")


def _sum(terms):
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def _cubic_coeffs(t):
    # PyTorch's get_cubic_upsample_coefficients with A = -0.75, for taps at -1, 0, 1, 2.
    A = -0.75

    def near(x):  # |x| <= 1
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """PyTorch's ``F.grid_sample``: ``input`` ``(N, C, H, W)`` read at the normalised points of
    ``grid`` ``(N, H_out, W_out, 2)`` (``x`` then ``y``, ``-1`` and ``1`` the edges), giving
    ``(N, C, H_out, W_out)``; 5-D inputs take a ``(N, D_out, H_out, W_out, 3)`` grid.
    Differentiable in ``input`` and ``grid`` (``nearest`` gives ``grid`` no gradient)."""
    _check_grid_sample(input, grid, mode, padding_mode)
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    N, C = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])
    k = len(sizes)
    out_spatial = list(grid.shape[1:-1])
    Q = 1
    for s in out_spatial:
        Q *= s
    P = 1
    for s in sizes:
        P *= s
    flat = input.reshape(N, C, P)
    g = grid.reshape(N, 1, Q, k)
    # coords[j]: the source coordinate along spatial dim k-1-j (grid[..., 0] is x, the last dim).
    strides = [1] * k
    for d in range(k - 2, -1, -1):
        strides[d] = strides[d + 1] * sizes[d + 1]

    def tap(idx, valid):
        """input at integer positions idx[j] (one per grid column), 0 where not valid."""
        lin = idx[0].clamp(0, sizes[k - 1] - 1) * strides[k - 1]
        for j in range(1, k):
            lin = lin + idx[j].clamp(0, sizes[k - 1 - j] - 1) * strides[k - 1 - j]
        vals = flat.gather(2, lin.long().expand(N, C, Q))
        return vals if valid is None else vals.masked_fill(~valid, 0.0)

    def in_bounds(idx):
        ok = (idx[0] >= 0) & (idx[0] <= sizes[k - 1] - 1)
        for j in range(1, k):
            ok = ok & (idx[j] >= 0) & (idx[j] <= sizes[k - 1 - j] - 1)
        return ok

    if mode == "bicubic":
        coords = [_unnormalize(g[..., j], sizes[k - 1 - j], align_corners, k) for j in range(k)]
        base = [c.detach().floor() for c in coords]
        wx = _cubic_coeffs(coords[0] - base[0])
        wy = _cubic_coeffs(coords[1] - base[1])
        rows = []
        for b in range(4):
            cols = []
            for a in range(4):
                idx = [_pad_coordinates(base[0] + (a - 1), sizes[1], padding_mode, align_corners, k),
                       _pad_coordinates(base[1] + (b - 1), sizes[0], padding_mode, align_corners, k)]
                idx = [i.detach().trunc() for i in idx]  # PyTorch casts the padded tap to int64
                cols.append(tap(idx, in_bounds(idx)) * wx[a])
            rows.append(_sum(cols) * wy[b])
        return _sum(rows).reshape(N, C, *out_spatial)

    coords = [_pad_coordinates(_unnormalize(g[..., j], sizes[k - 1 - j], align_corners, k), sizes[k - 1 - j],
                               padding_mode, align_corners, k) for j in range(k)]
    if mode == "nearest":
        idx = [c.detach().round() for c in coords]  # nearbyint: ties to even
        out = tap(idx, in_bounds(idx))
        if grid.requires_grad:
            # The grid gets a zero gradient, as in PyTorch (a where that never picks it).
            never = zeros(N, 1, Q, dtype=_C.dtype.bool)
            out = _C.where(never, g[..., 0], out)
        return out.reshape(N, C, *out_spatial)

    lo = [c.detach().floor() for c in coords]
    terms = []
    for corner in range(1 << k):
        bits = [(corner >> j) & 1 for j in range(k)]
        idx = [lo[j] + bits[j] for j in range(k)]
        # Per dim: the far corner minus the point (bit 0) or the point minus the near corner (bit 1);
        # the 2-D kernel forms the first as 1 - (point - near corner).
        if k == 2:
            factors = [coords[j] - lo[j] if bits[j] else 1 - (coords[j] - lo[j]) for j in range(k)]
        else:
            factors = [coords[j] - lo[j] if bits[j] else (lo[j] + 1) - coords[j] for j in range(k)]
        w = factors[0]
        for f in factors[1:]:
            w = w * f
        terms.append(tap(idx, in_bounds(idx)) * w)
    return _sum(terms).reshape(N, C, *out_spatial)
