"""The rest of PyTorch's tensor functions toy programs and autograd scripts reach for, composed
from differentiable pylucid ops (so they get gradients of every order): stacking (``hstack``,
``block_diag``, ...), ``diff``, running reductions (``cummax``, ``logcumsumexp``), order
statistics (``median``, ``quantile``, ``mode``), small linear algebra (``mv``, ``addmv``,
``matrix_power``, ...), ``cov``/``corrcoef``. Integer and index results (``tril_indices``,
``isin``, ``histogram``, the indices of ``cummax``) are computed with numpy; a value chosen by an
index is then taken with ``gather``, so its gradient flows to the element it came from.

>>> import pylucid
>>> pylucid.diff(pylucid.tensor([1, 4, 9, 16])).tolist()
[3, 5, 7]
>>> pylucid.median(pylucid.tensor([[3.0, 1.0, 2.0, 4.0]]), dim=1).values.tolist()
[2.0]
"""
import builtins as _builtins
import collections as _collections
import itertools as _itertools
import math as _math
import warnings as _warnings

import numpy as _np

from . import _C
from ._compat import _method
from ._device import _check_device
from ._math_more import _tensor_arg, lerp, logaddexp, meshgrid
from ._tensor import _factory_dtype, _finish, from_numpy, full_like, tensor, zeros
from ._tensor_str import return_type_repr as _return_type_repr

__all__ = [
    "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
    "block_diag", "cartesian_prod", "combinations", "tril_indices", "triu_indices", "rot90", "diff",
    "cummax", "cummin", "logcumsumexp", "median", "nanmedian", "mode", "quantile", "nanquantile",
    "count_nonzero", "aminmax", "argwhere", "isin", "bucketize", "histogram", "logspace", "range",
]


def _printed_as_torch(t):
    """Gives a named tuple type PyTorch's print (``torch.return_types.<name>(...)``)."""
    t.__repr__ = _return_type_repr
    return t


_Cummax = _printed_as_torch(_collections.namedtuple("cummax", ["values", "indices"]))
_Cummin = _printed_as_torch(_collections.namedtuple("cummin", ["values", "indices"]))
_Median = _printed_as_torch(_collections.namedtuple("median", ["values", "indices"]))
_NanMedian = _printed_as_torch(_collections.namedtuple("nanmedian", ["values", "indices"]))
_Mode = _printed_as_torch(_collections.namedtuple("mode", ["values", "indices"]))
_AMinMax = _printed_as_torch(_collections.namedtuple("aminmax", ["min", "max"]))
_Histogram = _printed_as_torch(_collections.namedtuple("histogram", ["hist", "bin_edges"]))


def _tensors(op, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _tensor_arg(op, "tensors", t)
    return tensors


def _dim(op, dim, ndim):
    n = _builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise _C.IndexOutOfRange(f"{op}: dim {dim} out of range for a tensor with {ndim} dims")
    return dim % n


def _values(t):
    """A tensor's values as numpy: float64 for floating dtypes (exact for every one of them)."""
    return t.detach().to(_C.dtype.float64).numpy() if t.dtype.is_floating_point else t.detach().numpy()


def _index(arr):
    return from_numpy(_np.array(arr, dtype=_np.int64, order="C"))  # (ascontiguousarray would make 0-d 1-d)


# --- stacking ---------------------------------------------------------------------------------

def _atleast(n, tensors):
    out = []
    for t in _tensors(f"atleast_{n}d", tensors):
        # As numpy: () -> (1, ...); (k,) -> (1, k) or (1, k, 1); (a, b) -> (a, b, 1).
        if t.ndim == 0:
            t = t.reshape(*[1] * n)
        elif t.ndim == 1 and n > 1:
            t = t.reshape(1, -1, *[1] * (n - 2))
        elif t.ndim == 2 and n > 2:
            t = t.unsqueeze(2)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*tensors):
    """Each tensor viewed with at least one dim (a 0-d one becomes shape (1,))."""
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    """Each tensor viewed with at least two dims (a 1-d one of size k becomes (1, k))."""
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    """Each tensor viewed with at least three dims ((k,) -> (1, k, 1), (a, b) -> (a, b, 1))."""
    return _atleast(3, tensors)


def _as_list(x):
    return list(x) if isinstance(x, tuple) else [x]


def hstack(tensors):
    """Concatenates along dim 1, or dim 0 for 1-d tensors (after ``atleast_1d``)."""
    ts = _as_list(atleast_1d(*_tensors("hstack", (tensors,))))
    return _C.cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenates along dim 0 after ``atleast_2d`` (1-d tensors become rows)."""
    return _C.cat(_as_list(atleast_2d(*_tensors("vstack", (tensors,)))), 0)


row_stack = vstack


def dstack(tensors):
    """Concatenates along dim 2 after ``atleast_3d``."""
    return _C.cat(_as_list(atleast_3d(*_tensors("dstack", (tensors,)))), 2)


def column_stack(tensors):
    """Stacks 0-d and 1-d tensors as columns (and concatenates 2-d ones) along dim 1."""
    ts = [t.reshape(-1, 1) if t.ndim <= 1 else t for t in _tensors("column_stack", (tensors,))]
    return _C.cat(ts, 1)


def block_diag(*tensors):
    """A block-diagonal matrix from the given 0-, 1- or 2-d tensors (a 1-d one is one row), zeros
    elsewhere; the dtype is the tensors' promoted one."""
    ts = _tensors("block_diag", tensors)
    blocks = []
    for t in ts:
        if t.ndim > 2:
            raise _C.ShapeMismatch(f"block_diag: input tensors must have 2 or fewer dimensions, got {t.ndim}")
        blocks.append(t.reshape(1, -1) if t.ndim == 1 else t.reshape(1, 1) if t.ndim == 0 else t)
    if not blocks:
        return zeros(1, 0)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = _C.promote_types(dtype, b.dtype)
    width = _builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        rows.append(_C.cat([zeros(r, left, dtype=dtype), b.to(dtype), zeros(r, width - left - c, dtype=dtype)], 1))
        left += c
    return _C.cat(rows, 0)


def cartesian_prod(*tensors):
    """The cartesian product of 1-d tensors: one row per combination, the last varying fastest
    (a single tensor is returned as it is)."""
    ts = _tensors("cartesian_prod", tensors)
    for t in ts:
        if t.ndim != 1:
            raise _C.ShapeMismatch(f"cartesian_prod: expects 1-d tensors, got shape {tuple(t.shape)}")
    if len(ts) == 1:
        return ts[0]
    return _C.stack([g.reshape(-1) for g in meshgrid(*ts, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-d tensor's elements, one per row, in
    ``itertools.combinations`` order (``with_replacement`` as ``combinations_with_replacement``)."""
    _tensor_arg("combinations", "input", input)
    if input.ndim != 1:
        raise _C.ShapeMismatch(f"combinations: expects a 1-d tensor, got shape {tuple(input.shape)}")
    if r < 0:
        raise ValueError(f"combinations: expects r >= 0, got {r}")
    if r == 0:
        return input[:0]
    n = input.shape[0]
    count = _math.comb(n + r - 1, r) if with_replacement else _math.comb(n, r)
    if count * r > 2**31:
        raise _C.LucidError(f"combinations: {count} combinations of length {r} are too many")
    pick = _itertools.combinations_with_replacement if with_replacement else _itertools.combinations
    idx = _np.array(list(pick(_builtins.range(input.shape[0]), r)), dtype=_np.int64).reshape(-1, r)
    return input[_index(idx.reshape(-1))].reshape(-1, r)


def _tri_indices(np_fn, row, col, offset, dtype, device):
    _check_device(device, np_fn.__name__)
    if row < 0 or col < 0:
        raise _C.LucidError(f"{np_fn.__name__}: row and col must be non-negative, got {row} and {col}")
    if row * col > 2**34:  # numpy would overflow building the row x col mask
        raise _C.LucidError(f"{np_fn.__name__}: a {row} x {col} matrix is too large")
    i, j = np_fn(row, offset, col) if row > 0 and col > 0 else (_np.zeros(0), _np.zeros(0))
    out = _index(_np.stack([i, j]))
    return out if dtype is None else out.to(dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) row and column indices of the lower triangle of a ``row x col`` matrix (the
    diagonal moved by ``offset``), in row-major order."""
    return _tri_indices(_np.tril_indices, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) row and column indices of the upper triangle of a ``row x col`` matrix."""
    return _tri_indices(_np.triu_indices, row, col, offset, dtype, device)


def rot90(input, k=1, dims=(0, 1)):
    """Rotates by 90 degrees ``k`` times in the plane of ``dims``, from the first towards the second."""
    _tensor_arg("rot90", "input", input)
    dims = list(dims)
    if len(dims) != 2:
        raise _C.LucidError(f"rot90: expected total rotation dims == 2, got {len(dims)}")
    if input.ndim < 2:
        raise _C.LucidError(f"rot90: expected total dims >= 2, got {input.ndim}")
    d0, d1 = (_dim("rot90", d, input.ndim) for d in dims)
    if d0 == d1:
        raise _C.LucidError(f"rot90: expected rotation dims to be different, got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip(d1).transpose(d0, d1)
    if k == 2:
        return input.flip(d0, d1)
    if k == 3:
        return input.flip(d0).transpose(d0, d1)
    return input.clone()


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` are concatenated first);
    for bool tensors the difference is ``!=``."""
    _tensor_arg("diff", "input", input)
    if n < 0:
        raise _C.LucidError(f"diff: order must be non-negative but got {n}")
    if input.ndim == 0:
        raise _C.LucidError("diff: expects input to be at least one-dimensional")
    dim = _dim("diff", dim, input.ndim)
    for name, p in (("prepend", prepend), ("append", append)):
        if p is not None:
            _tensor_arg("diff", name, p)
    parts = [p for p in (prepend, input, append) if p is not None]
    x = _C.cat([p if p.ndim else p.expand(*input.shape[:dim], 1, *input.shape[dim + 1:]) for p in parts], dim)
    for _ in _builtins.range(n):
        m = x.shape[dim]
        if m == 0:
            break
        hi, lo = x.narrow(dim, 1, m - 1), x.narrow(dim, 0, m - 1)
        x = (hi != lo) if x.dtype == _C.dtype.bool else hi - lo
    return x


# --- running reductions -----------------------------------------------------------------------

def _cum_extreme(op, result, input, dim, better):
    _tensor_arg(op, "input", input)
    dim = _dim(op, dim, input.ndim)
    if input.ndim == 0:
        return result(input.clone(), _index(_np.zeros(())))
    a = _np.moveaxis(_values(input).astype(_np.float64), dim, -1)
    idx = _np.zeros(a.shape, dtype=_np.int64)
    if a.shape[-1]:
        best, cur = a[..., 0].copy(), _np.zeros(a.shape[:-1], dtype=_np.int64)
        for i in _builtins.range(a.shape[-1]):
            # PyTorch takes the latest index among equal values; once a NaN is seen only a later
            # NaN replaces it.
            v, v_nan = a[..., i], _np.isnan(a[..., i])
            take = (better(v, best) | (v == best) | v_nan) & (~_np.isnan(best) | v_nan)
            best, cur = _np.where(take, v, best), _np.where(take, i, cur)
            idx[..., i] = cur
    indices = _index(_np.moveaxis(idx, -1, dim))
    return result(input.gather(dim, indices), indices)


def cummax(input, dim):
    """``(values, indices)``: the running maximum along ``dim`` and where it was taken (the latest
    position among ties; NaN propagates). The gradient flows to the element each value came from."""
    return _cum_extreme("cummax", _Cummax, input, dim, _np.greater)


def cummin(input, dim):
    """``(values, indices)``: the running minimum along ``dim`` and where it was taken."""
    return _cum_extreme("cummin", _Cummin, input, dim, _np.less)


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` without overflow or underflow, as a running ``logaddexp``."""
    x = _tensor_arg("logcumsumexp", "input", input)
    if not x.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"logcumsumexp: expected a floating input, got {x.dtype!r}")
    if x.ndim == 0:
        return x.clone()
    dim = _dim("logcumsumexp", dim, x.ndim)
    if x.shape[dim] == 0:
        return x.clone()
    cols = list(x.unbind(dim))
    for i in _builtins.range(1, len(cols)):
        cols[i] = logaddexp(cols[i - 1], cols[i])
    return _C.stack(cols, dim)


# --- order statistics -------------------------------------------------------------------------

def _no_bool(op, input):
    _tensor_arg(op, "input", input)
    if input.dtype == _C.dtype.bool:
        raise _C.DtypeMismatch(f"{op}: bool input is not supported")


def _median(op, result, input, dim, keepdim, skip_nan):
    _no_bool(op, input)
    if dim is None:
        return _C._median_all(input, skip_nan)
    return result(*_C._median_dim(input, _dim(op, dim, input.ndim), keepdim, skip_nan))


def median(input, dim=None, keepdim=False):
    """The lower median (the ``(n - 1) // 2``-th smallest; NaN if there is one): of all elements
    when ``dim`` is None, else ``(values, indices)`` along ``dim``."""
    return _median("median", _Median, input, dim, keepdim, skip_nan=False)


def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` ignoring NaN (NaN only where every element is)."""
    return _median("nanmedian", _NanMedian, input, dim, keepdim, skip_nan=True)


def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest among equally
    frequent ones) and the index PyTorch returns for it (its last occurrence in short rows)."""
    _no_bool("mode", input)
    return _Mode(*_C._mode(input, _dim("mode", dim, input.ndim), keepdim))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op, input, q, dim, keepdim, interpolation, skip_nan):
    _tensor_arg(op, "input", input)
    if input.dtype not in (_C.dtype.float32, _C.dtype.float64):
        raise _C.DtypeMismatch(f"{op}() input tensor must be either float or double dtype, got {input.dtype!r}")
    # Positions are computed in the input's dtype, as PyTorch does, so the weights agree bit for bit.
    np_dt = _np.float32 if input.dtype == _C.dtype.float32 else _np.float64
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{op}() interpolation must be one of {_INTERPOLATIONS}, got '{interpolation}'")
    scalar_q = not isinstance(q, _C.Tensor)
    if not scalar_q and q.dtype != input.dtype:
        raise _C.DtypeMismatch(f"{op}() q tensor must be same dtype as the input tensor, got {q.dtype!r} and "
                               f"{input.dtype!r}")
    qt = tensor(q, dtype=_C.dtype.float64) if scalar_q else q.detach().to(_C.dtype.float64)
    if qt.ndim > 1:
        raise _C.ShapeMismatch(f"{op}() q must be a scalar or 1D tensor, got shape {tuple(qt.shape)}")
    q64 = _np.atleast_1d(qt.numpy())
    if ((q64 < 0) | (q64 > 1)).any():
        raise ValueError(f"{op}() q values must be in the range [0, 1]")
    qs = q64.astype(np_dt)
    x = input.reshape(-1) if dim is None else input.movedim(_dim(op, dim, input.ndim), -1)
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[-1]
    if n == 0:
        raise _C.LucidError(f"{op}() input tensor must be non-empty")
    s = x.sort(-1).values  # NaN last
    nans = _C.isnan(x.detach()).sum(-1, keepdim=True).numpy()
    valid = n - nans if skip_nan else _np.where(nans > 0, 0, n)  # 0 valid values give NaN below
    pos = qs * _np.maximum(valid - 1, 0).astype(np_dt)  # (..., Q)
    lo, hi = _np.floor(pos), _np.ceil(pos)
    if interpolation == "lower":
        pos = lo
    elif interpolation == "higher":
        pos = hi
    elif interpolation == "nearest":
        pos = _np.round(pos)  # half to even, as PyTorch
    idx_lo = _index(_np.floor(pos)).reshape(*s.shape[:-1], len(qs))
    idx_hi = _index(_np.ceil(pos)).reshape(*s.shape[:-1], len(qs))
    v_lo, v_hi = s.gather(-1, idx_lo), s.gather(-1, idx_hi)
    if interpolation == "midpoint":
        w = tensor(_np.where(lo == hi, 0.0, 0.5), dtype=s.dtype)
    else:
        w = tensor(pos - _np.floor(pos), dtype=s.dtype)
    out = lerp(v_lo, v_hi, w)  # PyTorch's lerp, so the values agree to the last bit
    if (valid == 0).any():
        out = _C.where(tensor(_np.broadcast_to(valid == 0, out.shape).copy()), full_like(out, _math.nan), out)
    out = out.movedim(-1, 0)  # the q dim first, as PyTorch
    if keepdim:
        keep = [1] * input.ndim if dim is None else list(input.shape)
        if dim is not None:
            keep[_dim(op, dim, input.ndim)] = 1
        out = out.reshape(len(qs), *keep)
    return out.squeeze(0) if scalar_q or qt.ndim == 0 else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles (``q`` a number or a 1-d tensor in [0, 1]) of all elements or along
    ``dim``; a 1-d ``q`` adds a leading dim. Between two order statistics the ``interpolation`` is
    'linear', 'lower', 'higher', 'midpoint' or 'nearest'. NaN if the reduced values hold a NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, skip_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaN (NaN only where every reduced value is)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, skip_nan=True)


# --- counting and searching -------------------------------------------------------------------

def count_nonzero(input, dim=None):
    """The number of non-zero elements, of all or along ``dim`` (an int or a tuple), as int64."""
    _tensor_arg("count_nonzero", "input", input)
    nz = input != 0
    return nz.sum() if dim is None else nz.sum(dim)


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` of all elements or along ``dim`` in one call."""
    _tensor_arg("aminmax", "input", input)
    if input.numel() == 0 and dim is None:
        raise _C.LucidError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                            "has no identity")
    if dim is None:
        mn, mx = input.amin(), input.amax()
        if keepdim:
            mn, mx = mn.reshape(*[1] * input.ndim), mx.reshape(*[1] * input.ndim)
        return _AMinMax(mn, mx)
    return _AMinMax(input.amin(dim, keepdim), input.amax(dim, keepdim))


def argwhere(input):
    """The (N, ndim) indices of the non-zero elements, as :func:`pylucid.nonzero`."""
    return _C.nonzero(_tensor_arg("argwhere", "input", input))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor of ``elements``' shape: whether each is in ``test_elements`` (either may be a number)."""
    if not isinstance(elements, _C.Tensor) and not isinstance(test_elements, _C.Tensor):
        raise _C.DtypeMismatch("isin: expected elements or test_elements to be a Tensor")
    a = elements.detach().numpy() if isinstance(elements, _C.Tensor) else _np.asarray(elements)
    b = test_elements.detach().numpy() if isinstance(test_elements, _C.Tensor) else _np.asarray(test_elements)
    return tensor(_np.isin(a, b, assume_unique=assume_unique, invert=invert))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """For each element, the index of the bucket of the sorted 1-d ``boundaries`` it falls in:
    ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``).
    The result is int64 (pylucid's integer dtype) with ``out_int32`` too."""
    _tensor_arg("bucketize", "boundaries", boundaries)
    if boundaries.ndim != 1:
        raise _C.ShapeMismatch(f"bucketize: boundaries tensor must be 1 dimension, got {boundaries.ndim}")
    return _C.searchsorted(boundaries, input, right=right)


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """``(hist, bin_edges)``: a histogram of a floating tensor with ``bins`` equal bins (over
    ``range`` or the data's min and max) or the given 1-d tensor of edges; ``weight`` weights each
    element, ``density`` normalises to a probability density. The last bin includes its right edge."""
    _tensor_arg("histogram", "input", input)
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"histogram: input tensor must be floating, got {input.dtype!r}")
    a = input.detach().to(_C.dtype.float64).numpy().reshape(-1)
    edges = bins.detach().to(_C.dtype.float64).numpy() if isinstance(bins, _C.Tensor) else bins
    if isinstance(edges, int) and edges <= 0:
        raise _C.LucidError(f"histogram(): bins must be > 0, but got {edges}")
    if weight is not None:
        _tensor_arg("histogram", "weight", weight)
    w = None if weight is None else weight.detach().to(_C.dtype.float64).numpy().reshape(-1)
    hist, out_edges = _np.histogram(a, bins=edges, range=range, weights=w, density=density)
    return _Histogram(tensor(hist, dtype=input.dtype), tensor(out_edges, dtype=input.dtype))


# --- ranges -----------------------------------------------------------------------------------

def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False, layout=None, out=None):
    """``steps`` values ``base ** linspace(start, end, steps)``."""
    _check_device(device, "logspace")
    if steps < 0:
        raise _C.LucidError(f"logspace: number of steps must be non-negative, got {steps}")
    dt = _factory_dtype(dtype, "logspace")
    vals = _np.power(float(base), _np.linspace(float(start), float(end), steps))
    return _finish(tensor(vals if dt.is_floating_point else _np.trunc(vals), dtype=dt), requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, layout=None,  # noqa: A001
          out=None):
    """``start, start + step, ...`` up to and including ``end`` (deprecated in PyTorch in favour of
    ``arange``, which excludes ``end``); the default floating dtype unless ``dtype`` is given."""
    _warnings.warn("pylucid.range is deprecated and will be removed in a future release because its "
                   "behavior is inconsistent with Python's range builtin. Instead, use pylucid.arange, "
                   "which produces values in [start, end).", UserWarning, stacklevel=2)
    _check_device(device, "range")
    if end is None:
        start, end = 0, start
    if step == 0:
        raise _C.LucidError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise _C.LucidError(f"range: upper bound and lower bound inconsistent with step sign, got "
                            f"start={start}, end={end}, step={step}")
    n = int(_math.floor((end - start) / step)) + 1
    dt = dtype if dtype is not None else _factory_dtype(None, "range")
    return _finish(tensor(start + step * _np.arange(n, dtype=_np.float64), dtype=dt), requires_grad)


def _attach():
    for name in ["diff", "cummax", "cummin", "logcumsumexp", "median", "nanmedian", "mode", "quantile",
                 "nanquantile", "count_nonzero", "aminmax", "argwhere", "histogram", "rot90"]:
        if name not in vars(_C.Tensor):
            setattr(_C.Tensor, name, _method(globals()[name], name, globals()[name].__doc__))


_attach()
