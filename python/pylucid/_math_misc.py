"""More of PyTorch's top-level functions that data-handling and model code reaches for, composed
from differentiable pylucid ops (so they have gradients where PyTorch's do): statistics
(``median``, ``quantile``, ``nanmean``, ``nansum``, ``cov``, ``corrcoef``, ``aminmax``,
``count_nonzero``, ``cummax``/``cummin``, ``logcumsumexp``, ``diff``, ``trapezoid``), shaping
(``rot90``, ``atleast_*d``, ``hstack``/``vstack``/``dstack``/``column_stack``, ``tensor_split``,
``block_diag``, ``diag_embed``, ``diagflat``, ``ravel``, ``take_along_dim``, ``Tensor.unfold``),
index builders (``triu_indices``, ``tril_indices``, ``cartesian_prod``, ``combinations``,
``bucketize``, ``isin``, ``argwhere``), elementwise extras (``sinc``, ``xlogy``, ``fmax``,
``fmin``, ``heaviside``, ``float_power``), products (``inner``, ``mv``, ``addmv``, ``addr``,
``dist``), ``logspace`` and ``finfo``/``iinfo``.

>>> import pylucid
>>> pylucid.median(pylucid.tensor([3.0, 1.0, 4.0, 1.0])).item()
1.0
>>> pylucid.arange(6).unfold(0, 3, 2).tolist()
[[0, 1, 2], [2, 3, 4]]
>>> pylucid.triu_indices(3, 3).tolist()
[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]
"""
import builtins as _builtins
import itertools as _itertools
import math as _math
from typing import NamedTuple

import numpy as _np

from . import _C
from ._C import Tensor, dtype
from ._math_more import lerp
from ._tensor import _tensor_arg
from ._tensor_str import return_type_repr

__all__ = [
    "median", "nanmedian", "quantile", "nanquantile", "nanmean", "nansum", "cov", "corrcoef", "aminmax",
    "count_nonzero", "cummax", "cummin", "logcumsumexp", "diff", "trapezoid", "trapz", "rot90", "atleast_1d",
    "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack", "tensor_split",
    "block_diag", "diag_embed", "diagflat", "ravel", "take_along_dim", "msort", "triu_indices", "tril_indices",
    "cartesian_prod", "combinations", "bucketize", "isin", "argwhere", "sinc", "xlogy", "fmax", "fmin",
    "heaviside", "float_power", "absolute", "inner", "mv", "addmv", "addr", "dist", "logspace", "finfo", "iinfo",
    "dropout", "layer_norm", "group_norm", "batch_norm",
]
# PyTorch also exposes these nn.functional ops at the top level with the same signature
# (torch.conv2d, torch.max_pool2d, torch.selu, ...): installed by _functional_aliases().
_SAME_AS_FUNCTIONAL = ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d",
                       "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "pixel_shuffle",
                       "pixel_unshuffle", "channel_shuffle", "selu", "celu", "threshold", "hardshrink", "bilinear",
                       "cosine_similarity", "pairwise_distance")


def _long(a):
    return _C._from_numpy(_np.ascontiguousarray(_np.asarray(a, dtype=_np.int64)))


def _dim(d, n, op):
    if isinstance(d, bool) or not isinstance(d, int):
        raise _C.DtypeMismatch(f"{op}: dim must be an int, got {type(d).__name__}")
    m = max(n, 1)
    if not -m <= d < m:
        raise _C.IndexOutOfRange(f"{op}: dim {d} out of range for a tensor with {n} dims")
    return d % m


class _median_t(NamedTuple):
    values: Tensor
    indices: Tensor


class _nanmedian_t(NamedTuple):
    values: Tensor
    indices: Tensor


class _cummax_t(NamedTuple):
    values: Tensor
    indices: Tensor


class _cummin_t(NamedTuple):
    values: Tensor
    indices: Tensor


class _aminmax_t(NamedTuple):
    min: Tensor
    max: Tensor


# PyTorch's torch.return_types names, printed as PyTorch prints them.
for _t, _n in ((_median_t, "median"), (_nanmedian_t, "nanmedian"), (_cummax_t, "cummax"), (_cummin_t, "cummin"),
               (_aminmax_t, "aminmax")):
    _t.__name__ = _t.__qualname__ = _n
    _t.__module__ = "pylucid.return_types"
    setattr(_t, "__repr__", return_type_repr)  # noqa: B010


# ---- statistics ----------------------------------------------------------------------------

def _median(input, dim, keepdim, op, ignore_nan):
    _tensor_arg(input, op)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _dim(dim, input.dim(), op)
    if x.dim() == 0:
        x = x.reshape(1)
    n = x.shape[d]
    if n == 0:
        raise _C.IndexOutOfRange(f"{op}: cannot compute the median of an empty dimension")
    values, indices = _C.sort(x, d, stable=True)  # NaNs sort last
    if ignore_nan:
        count = (~x.isnan()).sum(d, keepdim=True)
        pos = ((count - 1).clamp(min=0) // 2)
    else:
        has_nan = x.isnan().any(d, keepdim=True)
        pos = _C._full(tuple(has_nan.shape), float((n - 1) // 2), dtype.int64).masked_fill(has_nan, n - 1)
    v, i = values.gather(d, pos), indices.gather(d, pos)
    if dim is None:
        return v.reshape(())
    if not keepdim:
        v, i = v.squeeze(d), i.squeeze(d)
    return (_nanmedian_t if ignore_nan else _median_t)(v, i)


def median(input, dim=None, keepdim=False):
    """The lower of the two middle values (NaN if there is one): over all elements (a 0-d tensor),
    or along ``dim`` as a named tuple ``(values, indices)``; differentiable."""
    return _median(input, dim, keepdim, "median", False)


def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` ignoring NaNs."""
    return _median(input, dim, keepdim, "nanmedian", True)


def _quantile(input, q, dim, keepdim, interpolation, op, ignore_nan):
    _tensor_arg(input, op)
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"{op}: input tensor must be either float or double dtype")
    scalar_q = not isinstance(q, Tensor)
    qs = _np.atleast_1d(_np.asarray(q.detach().numpy() if isinstance(q, Tensor) else q, dtype=_np.float64))
    if qs.ndim > 1 or ((qs < 0) | (qs > 1)).any():
        raise _C.ShapeMismatch(f"{op}: q must be a scalar or 1D tensor with values in [0, 1]")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise _C.ShapeMismatch(f"{op}: interpolation must be one of linear, lower, higher, midpoint or nearest")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _dim(dim, input.dim(), op)
    x = x.movedim(d, -1)
    values = _C.sort(x, -1).values
    n = x.shape[-1]
    nan = x.isnan()
    count = (~nan).sum(-1, keepdim=True).to(input.dtype) if ignore_nan else \
        _C._full(tuple(x.shape[:-1]) + (1,), float(n), input.dtype)
    outs = []
    for qv in qs:
        rank = qv * (count - 1)
        if interpolation == "lower":
            rank = rank.floor()
        elif interpolation == "higher":
            rank = rank.ceil()
        elif interpolation == "nearest":
            rank = rank.round()
        lo = rank.floor().clamp(min=0).to(dtype.int64)
        hi = rank.ceil().clamp(min=0).to(dtype.int64)
        below, above = values.gather(-1, lo), values.gather(-1, hi)
        w = (hi != lo).to(input.dtype) * 0.5 if interpolation == "midpoint" else rank - lo.to(input.dtype)
        r = lerp(below, above, w)
        if not ignore_nan:
            r = r.masked_fill(nan.any(-1, keepdim=True), float("nan"))
        else:
            r = r.masked_fill(count == 0, float("nan"))
        outs.append(r.squeeze(-1))
    out = _C.stack(outs, 0)
    if keepdim:
        out = out.unsqueeze(d + 1) if dim is not None else out.reshape((len(qs),) + (1,) * input.dim())
    return out[0] if scalar_q else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles (a number or 1-d tensor in [0, 1]) over all elements or along ``dim``,
    interpolating between order statistics as PyTorch does (``"linear"``, ``"lower"``,
    ``"higher"``, ``"midpoint"``, ``"nearest"``); a tensor ``q`` adds a leading dim."""
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaNs."""
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", True)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum treating NaNs as zero."""
    _tensor_arg(input, "nansum")
    x = input.masked_fill(input.isnan(), 0) if input.dtype.is_floating_point else input
    s = x.sum() if dim is None else x.sum(dim, keepdim=keepdim)
    return s if dtype is None else s.to(dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the non-NaN elements."""
    _tensor_arg(input, "nanmean")
    count = (~input.isnan()).sum() if dim is None else (~input.isnan()).sum(dim, keepdim=keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), with optional integer frequency and float observation weights."""
    _tensor_arg(input, "cov")
    if input.dim() > 2:
        raise _C.ShapeMismatch(f"cov: expected input to have two or fewer dimensions but got {input.dim()}")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    if not x.dtype.is_floating_point:
        x = x.float()
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        n = x.shape[1]
        avg = x.mean(1, keepdim=True)
        norm = n - correction
    else:
        wsum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / wsum
        norm = wsum - correction if aweights is None else \
            wsum - correction * (w * aweights.to(x.dtype)).sum() / wsum
    xc = x - avg
    c = (xc * w if w is not None else xc) @ xc.transpose(0, 1)
    c = c / (norm if not isinstance(norm, (int, float)) else _builtins.max(norm, 0))
    return c.squeeze() if input.dim() < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt()
    c = c / stddev.unsqueeze(1)
    c = c / stddev.unsqueeze(0)
    return c.clamp(-1, 1)


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over all elements or along ``dim``, a named tuple."""
    _tensor_arg(input, "aminmax")
    if dim is None:
        lo, hi = input.min(), input.max()
        if keepdim:
            lo, hi = lo.reshape((1,) * input.dim()), hi.reshape((1,) * input.dim())
        return _aminmax_t(lo, hi)
    return _aminmax_t(input.amin(dim, keepdim=keepdim), input.amax(dim, keepdim=keepdim))


def count_nonzero(input, dim=None):
    """How many elements are nonzero, in total or along ``dim`` (an int or tuple)."""
    nz = _tensor_arg(input, "count_nonzero") != 0
    return nz.sum() if dim is None else nz.sum(dim)


def _cumext(input, dim, op, better):
    _tensor_arg(input, op)
    d = _dim(dim, input.dim(), op)
    x = input.detach()
    a = _np.moveaxis((x.float() if x.dtype in (dtype.float16, dtype.bfloat16) else x).numpy(), d, -1)
    if a.ndim == 0:
        a = a.reshape(1)
    n = a.shape[-1]
    idx = _np.zeros(a.shape, dtype=_np.int64)
    best = a[..., 0].copy()
    for j in range(1, n):  # PyTorch's rule: a later equal value (or a NaN) takes over the index
        take = better(a[..., j], best) | (a[..., j] == best) | _np.isnan(a[..., j])
        take &= ~_np.isnan(best) | _np.isnan(a[..., j])
        best = _np.where(take, a[..., j], best)
        idx[..., j] = _np.where(take, j, idx[..., j - 1])
    indices = _long(_np.moveaxis(idx, -1, d).reshape(tuple(input.shape)))
    return indices, input.gather(d, indices) if input.dim() else input.clone()


def cummax(input, dim):
    """The running maximum along ``dim`` and where it was found, a named tuple
    ``(values, indices)``; differentiable in values."""
    indices, values = _cumext(input, dim, "cummax", _np.greater)
    return _cummax_t(values, indices)


def cummin(input, dim):
    """The running minimum along ``dim`` and where it was found, ``(values, indices)``."""
    indices, values = _cumext(input, dim, "cummin", _np.less)
    return _cummin_t(values, indices)


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably; differentiable."""
    _tensor_arg(input, "logcumsumexp")
    d = _dim(dim, input.dim(), "logcumsumexp")
    m = input.detach().amax(d, keepdim=True) if input.dim() else input.detach()
    m = m.masked_fill(~m.isfinite(), 0)
    return (input - m).exp().cumsum(d).log() + m


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` joined first)."""
    _tensor_arg(input, "diff")
    d = _dim(dim, input.dim(), "diff")
    parts = [t for t in (prepend, input, append) if t is not None]
    x = _C.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        x = (x.narrow(d, 1, m - 1) - x.narrow(d, 0, m - 1)) if x.dtype != dtype.bool else \
            (x.narrow(d, 1, m - 1) != x.narrow(d, 0, m - 1))
    return x


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``, with sample points ``x`` or spacing ``dx`` (default 1)."""
    _tensor_arg(y, "trapezoid")
    d = _dim(dim, y.dim(), "trapezoid")
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    avg = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2
    if x is None:
        return avg.sum(d) * (1.0 if dx is None else dx)
    if isinstance(x, Tensor):
        step = diff(x, dim=-1 if x.dim() == 1 else d)
        if x.dim() == 1 and y.dim() > 1:
            shape = [1] * y.dim()
            shape[d] = n - 1
            step = step.reshape(shape)
        return (avg * step).sum(d)
    return avg.sum(d) * x


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


# ---- shaping ----------------------------------------------------------------------------------

def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards
    the second); differentiable."""
    from ._compat import flip
    _tensor_arg(input, "rot90")
    if len(dims) != 2:
        raise _C.ShapeMismatch(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    d0, d1 = (_dim(d, input.dim(), "rot90") for d in dims)
    if d0 == d1 or input.dim() < 2:
        raise _C.ShapeMismatch(f"rot90: expected rotation dims to be different and a tensor of at least 2 dims, "
                               f"got dims {tuple(dims)} for {input.dim()} dims")
    k %= 4
    if k == 1:
        return flip(input, (d1,)).transpose(d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(input, (d0,)).transpose(d0, d1)
    return input.clone()


def _atleast(n, tensors, op):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    ts = [tensors[0]] if single else list(tensors[0]) if len(tensors) == 1 else list(tensors)
    out = []
    for t in ts:
        _tensor_arg(t, op)
        if t.dim() == 0:
            t = t.reshape((1,) * n)
        elif t.dim() == 1 and n >= 2:
            t = t.unsqueeze(0) if n == 2 else t.reshape(1, -1, 1)
        elif t.dim() == 2 and n == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if single else tuple(out)


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (a tuple for several)."""
    return _atleast(1, tensors, "atleast_1d")


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims (1-d ``(n,)`` becomes ``(1, n)``)."""
    return _atleast(2, tensors, "atleast_2d")


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` ``(m, n, 1)``)."""
    return _atleast(3, tensors, "atleast_3d")


def hstack(tensors):
    """Joined column-wise (along dim 1, or dim 0 for 1-d tensors)."""
    ts = atleast_1d(*tensors)
    return _C.cat(list(ts), 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    """Joined row-wise (1-d tensors become rows)."""
    return _C.cat(list(atleast_2d(*tensors)), 0)


row_stack = vstack


def dstack(tensors):
    """Joined depth-wise (along dim 2, after atleast_3d)."""
    return _C.cat(list(atleast_3d(*tensors)), 2)


def column_stack(tensors):
    """1-d (and 0-d) tensors as columns, joined with 2-d ones along dim 1."""
    cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]
    return _C.cat(cols, 1)


def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` split along ``dim``: into ``n`` nearly equal parts (the first ones one
    longer), or at the given indices."""
    _tensor_arg(input, "tensor_split")
    d = _dim(dim, input.dim(), "tensor_split")
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise _C.ShapeMismatch(f"tensor_split: number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        bounds = [0] + [_builtins.min(_builtins.max(int(i), 0), size) for i in indices_or_sections] + [size]
    return tuple(input.narrow(d, a, _builtins.max(b - a, 0)) for a, b in zip(bounds[:-1], bounds[1:]))


def block_diag(*tensors):
    """The tensors (0-, 1- or 2-d) placed along the diagonal of one matrix, zeros elsewhere."""
    mats = [t.reshape(1, 1) if t.dim() == 0 else t.reshape(1, -1) if t.dim() == 1 else t for t in tensors]
    if not mats:
        return _C._full((1, 0), 0.0, dtype.float32)
    cols = _builtins.sum(m.shape[1] for m in mats)
    rows, left = [], 0
    out_dtype = mats[0].dtype
    for m in mats:
        if m.dtype.is_floating_point and not out_dtype.is_floating_point:
            out_dtype = m.dtype
    for m in mats:
        r, c = m.shape
        parts = [_C._full((r, left), 0.0, out_dtype), m.to(out_dtype), _C._full((r, cols - left - c), 0.0, out_dtype)]
        rows.append(_C.cat(parts, 1))
        left += c
    return _C.cat(rows, 0)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals (``offset``, in the plane of ``dim1``/``dim2``) hold the last dim of
    ``input``; differentiable."""
    from ._index_ext import index_add
    _tensor_arg(input, "diag_embed")
    n = input.shape[-1]
    m = n + abs(offset)
    r = _np.arange(n) + _builtins.max(-offset, 0)
    c = _np.arange(n) + _builtins.max(offset, 0)
    batch = tuple(input.shape[:-1])
    out = _C._full(batch + (m * m,), 0.0, input.dtype)
    out = index_add(out, len(batch), _long(r * m + c), input).reshape(batch + (m, m))
    nd = out.dim()
    d1, d2 = dim1 % nd, dim2 % nd
    if (d1, d2) != (nd - 2, nd - 1):
        out = out.movedim((nd - 2, nd - 1), (d1, d2))
    return out


def diagflat(input, offset=0):
    """A 2-d tensor with the flattened input on its ``offset`` diagonal."""
    return diag_embed(_tensor_arg(input, "diagflat").reshape(-1), offset)


def ravel(input):
    """The elements of ``input`` as a 1-d tensor."""
    return _tensor_arg(input, "ravel").reshape(-1)


def take_along_dim(input, indices, dim=None):
    """Values of ``input`` at ``indices`` along ``dim`` (input and indices broadcast in the other
    dims), or from the flattened input when ``dim`` is None; differentiable."""
    _tensor_arg(input, "take_along_dim")
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    d = _dim(dim, input.dim(), "take_along_dim")
    if input.dim() != indices.dim():
        raise _C.ShapeMismatch("take_along_dim: input and indices should have the same number of dimensions")
    shape_i, shape_x = list(indices.shape), list(input.shape)
    for k in range(input.dim()):
        if k != d:
            b = _builtins.max(shape_i[k], shape_x[k])
            shape_i[k] = shape_x[k] = b
    shape_x[d], shape_i[d] = input.shape[d], indices.shape[d]
    return input.expand(*shape_x).gather(d, indices.expand(*shape_i))


def msort(input):
    """``input`` sorted along dim 0 (values only)."""
    return _C.sort(_tensor_arg(input, "msort"), 0).values


# ---- index builders ---------------------------------------------------------------------------

def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, N)`` coordinates of the upper triangle (from diagonal ``offset``) of a
    ``row x col`` matrix, row by row."""
    r, c = _np.triu_indices(row, offset, col)
    return _long(_np.stack([r, c]))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The ``(2, N)`` coordinates of the lower triangle (to diagonal ``offset``) of a ``row x col``
    matrix, row by row."""
    r, c = _np.tril_indices(row, offset, col)
    return _long(_np.stack([r, c]))


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-d tensor, as rows ``(N, k)`` (a 1-d tensor for
    one input)."""
    from ._math_more import meshgrid
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return _C.stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-d tensor, as rows (in
    ``itertools.combinations`` order)."""
    _tensor_arg(input, "combinations")
    n = input.shape[0]
    gen = _itertools.combinations_with_replacement if with_replacement else _itertools.combinations
    idx = list(gen(range(n), r))
    if not idx:
        return input.new_empty((0,) if r == 0 else (0, r))
    return input.index_select(0, _long(idx).reshape(-1)).reshape(len(idx), r)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element among the sorted ``boundaries``: with ``right=False`` the ``i``
    with ``boundaries[i-1] < x <= boundaries[i]`` (``searchsorted`` of the boundaries)."""
    from ._math_ext import searchsorted
    if not isinstance(input, Tensor):
        from ._tensor import tensor
        input = tensor(input)
    return searchsorted(boundaries, input, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Bool tensor: whether each element of ``elements`` is in ``test_elements``."""
    a = elements.numpy() if isinstance(elements, Tensor) else _np.asarray(elements)
    b = test_elements.numpy() if isinstance(test_elements, Tensor) else _np.asarray(test_elements)
    return _C._from_numpy(_np.ascontiguousarray(_np.isin(a, b, invert=invert)))


def argwhere(input):
    """The indices of the nonzero elements, one row each (``nonzero``)."""
    return _C.nonzero(_tensor_arg(input, "argwhere"))


# ---- elementwise ------------------------------------------------------------------------------

def sinc(input):
    """The normalised sinc ``sin(pi x) / (pi x)`` (1 at 0, with gradient 0 there); differentiable."""
    _tensor_arg(input, "sinc")
    x = input if input.dtype.is_floating_point else input.float()
    zero = x == 0
    safe = x.masked_fill(zero, 1.0) * _math.pi
    return (safe.sin() / safe).masked_fill(zero, 1.0)


def xlogy(input, other):
    """``input * log(other)``, 0 where input is 0 (NaN where other is); differentiable."""
    from ._tensor import tensor
    x = input if isinstance(input, Tensor) else tensor(float(input))
    y = other if isinstance(other, Tensor) else tensor(float(other), dtype=x.dtype)
    if not x.dtype.is_floating_point:
        x = x.float()
    out = x * y.log()
    return out.masked_fill((x == 0) & ~y.isnan(), 0.0)


def _nan_ignoring(op, pick, input, other):
    _tensor_arg(input, op)
    b = other if isinstance(other, Tensor) else input * 0 + other
    return _C.where(input.isnan(), b, _C.where(b.isnan(), input, pick(input, b)))


def fmax(input, other):
    """The elementwise maximum, ignoring a NaN when the other value is not NaN."""
    return _nan_ignoring("fmax", _C.maximum, input, other)


def fmin(input, other):
    """The elementwise minimum, ignoring a NaN when the other value is not NaN."""
    return _nan_ignoring("fmin", _C.minimum, input, other)


def heaviside(input, values):
    """The Heaviside step: 0 below zero, 1 above, ``values`` at zero."""
    _tensor_arg(input, "heaviside")
    step = (input > 0).to(input.dtype)
    return _C.where(input == 0, values.to(input.dtype).expand_as(step), step)


def float_power(input, exponent):
    """``input ** exponent`` computed in float64 (the result is float64)."""
    base = input.to(dtype.float64) if isinstance(input, Tensor) else input
    exp = exponent.to(dtype.float64) if isinstance(exponent, Tensor) else float(exponent)
    if not isinstance(base, Tensor):
        from ._tensor import tensor
        base = tensor(float(base), dtype=dtype.float64)
    return base ** exp


def absolute(input):
    """Alias of ``abs``."""
    return _C.abs(input)


# ---- products and distances -------------------------------------------------------------------

def inner(input, other):
    """The inner product over the last dims (a product with a scalar when either is 0-d)."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    from ._math_more import tensordot
    return tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1]))


def mv(input, vec):
    """Matrix times vector."""
    if input.dim() != 2 or vec.dim() != 1:
        raise _C.ShapeMismatch(f"mv: expected a matrix and a vector, got {tuple(input.shape)} and {tuple(vec.shape)}")
    return input @ vec


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)``."""
    prod = mv(mat, vec)
    prod = prod if alpha == 1 else prod * alpha
    return prod if beta == 0 else prod + (input if beta == 1 else input * beta)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    prod = vec1.unsqueeze(1) * vec2.unsqueeze(0)
    prod = prod if alpha == 1 else prod * alpha
    return prod if beta == 0 else prod + (input if beta == 1 else input * beta)


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other``."""
    return (input - other).norm(p=float(p))


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """``steps`` values ``base ** t`` for ``t`` evenly spaced from ``start`` to ``end``."""
    from ._tensor import linspace
    t = linspace(start, end, steps, dtype=_C.dtype.float64)
    r = (float(base) ** t).to(dtype or _default_float())
    return r.requires_grad_(True) if requires_grad else r


def _default_float():
    from ._tensor import get_default_dtype
    return get_default_dtype()


class finfo:
    """Machine limits of a floating dtype, as ``torch.finfo``: ``bits``, ``eps``, ``max``, ``min``,
    ``tiny`` (``smallest_normal``), ``resolution``."""

    def __init__(self, type=None):  # noqa: A002 (PyTorch's name)
        d = _default_float() if type is None else type
        names = {dtype.float16: "float16", dtype.float32: "float32", dtype.float64: "float64"}
        if d == dtype.bfloat16:
            self.bits, self.eps, self.max, self.tiny, self.resolution = 16, 0.0078125, 3.3895313892515355e38, \
                1.1754943508222875e-38, 0.01
        elif d in names:
            info = _np.finfo(names[d])
            self.bits, self.eps, self.max = info.bits, float(info.eps), float(info.max)
            self.tiny, self.resolution = float(info.tiny), float(info.resolution)
        else:
            raise _C.DtypeMismatch(f"finfo: {d!r} is not a floating point dtype")
        self.min, self.smallest_normal, self.dtype = -self.max, self.tiny, d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.tiny:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` (pylucid's
    integers are int64)."""

    def __init__(self, type):  # noqa: A002 (PyTorch's name)
        if type not in (dtype.int64, dtype.bool):
            raise _C.DtypeMismatch(f"iinfo: {type!r} is not an integer dtype")
        info = _np.iinfo(_np.int64) if type == dtype.int64 else None
        self.bits = 64 if info else 8
        self.max, self.min = (int(info.max), int(info.min)) if info else (1, 0)
        self.dtype = type.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


# ---- PyTorch's top-level spellings of nn.functional ops ------------------------------------------

def dropout(input, p, train):
    """``torch.dropout(input, p, train)``: :func:`pylucid.nn.functional.dropout` with required args."""
    from .nn.functional import dropout as f
    return f(input, p, train)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """``torch.layer_norm``: :func:`pylucid.nn.functional.layer_norm` (``cudnn_enable`` ignored)."""
    from .nn.functional import layer_norm as f
    return f(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """``torch.group_norm``: :func:`pylucid.nn.functional.group_norm` (``cudnn_enabled`` ignored)."""
    from .nn.functional import group_norm as f
    return f(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm``, whose argument order differs from ``nn.functional.batch_norm``'s."""
    from .nn.functional import batch_norm as f
    return f(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _functional_aliases(namespace):
    """Puts the nn.functional ops PyTorch also spells at the top level into ``namespace``."""
    from .nn import functional as F
    for n in _SAME_AS_FUNCTIONAL:
        namespace.setdefault(n, getattr(F, n))


# ---- Tensor methods ---------------------------------------------------------------------------

def _unfold(self, dimension, size, step):
    """The slices of length ``size`` taken every ``step`` along ``dimension``, as a new last dim
    (``x.unfold(0, 3, 2)`` of ``arange(6)`` is ``[[0, 1, 2], [2, 3, 4]]``); differentiable."""
    d = _dim(dimension, self.dim(), "unfold")
    n = self.shape[d] if self.dim() else 1
    if size < 0 or size > n or step <= 0:
        raise _C.ShapeMismatch(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}, "
                               f"and step must be positive (got {step})")
    count = (n - size) // step + 1
    idx = (_np.arange(count)[:, None] * step + _np.arange(size)[None, :]).reshape(-1)
    x = self if self.dim() else self.reshape(1)
    out = x.index_select(d, _long(idx))
    shape = tuple(x.shape[:d]) + (count, size) + tuple(x.shape[d + 1:])
    return out.reshape(shape).movedim(d + 1, -1)


def _sum_to_size(self, *size):
    """This tensor summed over the dims that broadcasting ``size`` to its shape would expand."""
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    g = self
    while g.dim() > len(size):
        g = g.sum(0)
    for d, n in enumerate(size):
        if n == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdim=True)
    if tuple(g.shape) != tuple(size):
        raise _C.ShapeMismatch(f"sum_to_size: size {tuple(size)} is not expandable to size {tuple(self.shape)}")
    return g


from ._compat import typed_errors, wrap_public  # noqa: E402

wrap_public(globals(), __all__)


def _attach():
    for name in ["median", "nanmedian", "quantile", "nanquantile", "nanmean", "nansum", "cov", "corrcoef",
                 "aminmax", "count_nonzero", "cummax", "cummin", "logcumsumexp", "diff", "rot90", "tensor_split",
                 "diag_embed", "diagflat", "ravel", "take_along_dim", "msort", "argwhere", "sinc", "xlogy", "fmax",
                 "fmin", "heaviside", "float_power", "absolute", "inner", "mv", "addmv", "addr", "dist", "isin"]:
        if name in vars(Tensor):
            continue
        fn = globals()[name]

        def method(self, *args, _fn=fn, **kwargs):
            return _fn(self, *args, **kwargs)
        method.__name__ = method.__qualname__ = name
        method.__doc__ = fn.__doc__
        setattr(Tensor, name, method)
    setattr(Tensor, "unfold", typed_errors(_unfold))  # noqa: B010
    setattr(Tensor, "sum_to_size", typed_errors(_sum_to_size))  # noqa: B010
    setattr(Tensor, "is_cpu", property(lambda self: True, doc="True: pylucid tensors live on the CPU."))  # noqa: B010
    setattr(Tensor, "itemsize", property(lambda self: self.element_size(),  # noqa: B010
                                         doc="The size of one element in bytes."))
    setattr(Tensor, "nbytes", property(lambda self: self.element_size() * self.numel(),  # noqa: B010
                                       doc="The size of the elements in bytes."))


_attach()
