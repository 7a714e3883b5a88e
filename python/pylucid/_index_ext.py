"""The index-and-scatter family PyTorch code reaches for, written over the C++ ops so that it is
differentiable: ``index_add``, ``index_copy``, ``index_fill``, ``index_put``, ``scatter`` (a
tensor or a value), ``scatter_reduce`` (``sum``, ``prod``, ``mean``, ``amax``, ``amin``), ``take``,
``kthvalue``, ``erfinv`` and ``Tensor.fill_diagonal_``; also the Tensor methods ``div``
(``rounding_mode=``) and ``unique`` (``dim=``) over the functions of ``_math``/``_math_ext``.
Their in-place forms (``x.index_add_(...)``) come from the one table in ``_compat``.

>>> import pylucid
>>> pylucid.zeros(3).index_add(0, pylucid.tensor([0, 2, 0]), pylucid.tensor([1.0, 2.0, 3.0])).tolist()
[4.0, 0.0, 2.0]
>>> pylucid.zeros(2, 3).scatter(1, pylucid.tensor([[2], [0]]), 1.0).tolist()
[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
>>> pylucid.tensor([3.0, 1.0, 2.0]).kthvalue(2)
pylucid.return_types.kthvalue(
values=tensor(2.),
indices=tensor(2))
"""
import math as _math
from typing import NamedTuple

import numpy as _np

from . import _C
from ._C import Tensor, dtype
from ._tensor import _tensor_arg
from ._tensor_str import return_type_repr

__all__ = ["index_add", "index_copy", "index_fill", "index_put", "scatter", "scatter_reduce", "index_reduce", "take",
           "kthvalue", "erfinv"]


def _long(a):
    return _C._from_numpy(_np.asarray(a, dtype=_np.int64, order="C"))


def _dim(d, n, op):
    if isinstance(d, bool) or not isinstance(d, int):
        raise _C.DtypeMismatch(f"{op}: dim must be an int, got {type(d).__name__}")
    m = max(n, 1)
    if not -m <= d < m:
        raise _C.IndexOutOfRange(f"{op}: dim {d} out of range for a tensor with {n} dims")
    return d % m


def _index_arg(index, op, ndim_max=None):
    if not isinstance(index, Tensor) or index.dtype != dtype.int64:
        what = index.dtype if isinstance(index, Tensor) else type(index).__name__
        raise _C.DtypeMismatch(f"{op}: index must be an int64 tensor, got {what}")
    if ndim_max is not None and index.dim() > ndim_max:
        raise _C.ShapeMismatch(f"{op}: index must be a vector (at most 1 dim), got {index.dim()} dims")
    return index


def _slices_index(input, dim, index, op):
    """For index_* ops: the 1-d index checked against input's size along dim, and the shape that
    broadcasts it along dim."""
    n = input.shape[dim] if input.dim() else 1
    idx = index.reshape(-1)
    if idx.numel():
        lo, hi = int(idx.min()), int(idx.max())
        if lo < -n or hi >= n:
            raise _C.IndexOutOfRange(f"{op}: index {hi if hi >= n else lo} is out of bounds for dimension {dim} "
                                     f"with size {n}")
        idx = idx % n if lo < 0 else idx
    view = [1] * max(input.dim(), 1)
    view[dim] = idx.numel()
    return idx, view


def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source[..., j, ...]`` added to slice ``index[j]`` along ``dim``
    (repeated indices add up); differentiable in input and source."""
    _tensor_arg(input, "index_add")
    _tensor_arg(source, "index_add", "source")
    dim = _dim(dim, input.dim(), "index_add")
    idx, view = _slices_index(input, dim, _index_arg(index, "index_add", 1), "index_add")
    src = source if source.dim() else source.reshape(1)
    expected = list(input.shape) if input.dim() else [1]
    expected[dim] = idx.numel()
    if list(src.shape) != expected:
        raise _C.ShapeMismatch(f"index_add: source of shape {tuple(source.shape)} does not match input "
                               f"{tuple(input.shape)} with {idx.numel()} indices along dim {dim}")
    if alpha != 1:
        src = src * alpha
    base = input if input.dim() else input.reshape(1)
    out = _C.scatter_add(base, dim, idx.reshape(view).expand(expected), src.to(input.dtype))
    return out if input.dim() else out.reshape(())


def _slice_mask(input, dim, idx):
    """A bool tensor, True on the slices ``idx`` along dim, broadcastable against input."""
    n = input.shape[dim] if input.dim() else 1
    mask = _np.zeros(n, dtype=bool)
    mask[idx.numpy()] = True
    shape = [1] * input.dim()
    if shape:
        shape[dim] = n
    return _C._from_numpy(mask).reshape(shape)


def index_fill(input, dim, index, value):
    """``input`` with the slices ``index`` along ``dim`` set to ``value`` (a number or 0-d tensor);
    differentiable in input (and in a 0-d tensor value)."""
    _tensor_arg(input, "index_fill")
    dim = _dim(dim, input.dim(), "index_fill")
    idx, _ = _slices_index(input, dim, _index_arg(index, "index_fill", 1), "index_fill")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise _C.ShapeMismatch(f"index_fill: value must be a number or a 0-dim tensor, got {value.dim()} dims")
    return input.masked_fill(_slice_mask(input, dim, idx), value)


def index_copy(input, dim, index, source):
    """``input`` with slice ``index[j]`` along ``dim`` replaced by ``source``'s slice ``j``;
    differentiable in input and source (with repeated indices the last copy wins)."""
    _tensor_arg(input, "index_copy")
    _tensor_arg(source, "index_copy", "source")
    dim = _dim(dim, input.dim(), "index_copy")
    idx, _ = _slices_index(input, dim, _index_arg(index, "index_copy", 1), "index_copy")
    keep = _np.ones(idx.numel(), dtype=bool)  # last write wins: drop earlier repeats
    flat = idx.numpy()
    _, last = _np.unique(flat[::-1], return_index=True)
    keep[:] = False
    keep[len(flat) - 1 - last] = True
    src = source if source.dim() else source.reshape(1)
    if not keep.all():
        sel = _long(_np.nonzero(keep)[0])
        idx, src = idx.index_select(0, sel), src.index_select(dim, sel)
    cleared = input.masked_fill(_slice_mask(input, dim, idx), 0)
    return index_add(cleared, dim, idx, src)


def _scatter_winners(input, dim, index):
    """Flat target of every index element and a bool array marking the last write to each target
    (PyTorch's CPU loop order), for scatter with repeated indices."""
    shape = tuple(input.shape)
    grids = list(_np.indices(tuple(index.shape)))
    grids[dim] = index.numpy()
    flat = _np.ravel_multi_index(tuple(grids), shape).reshape(-1)
    _, last = _np.unique(flat[::-1], return_index=True)
    win = _np.zeros(flat.size, dtype=bool)
    win[flat.size - 1 - last] = True
    return flat, win.reshape(tuple(index.shape))


def _vector_index(input, index, src):
    """PyTorch's reading of a 0-d index (and 0-d src) into a vector: a 1-element vector."""
    if isinstance(index, Tensor) and index.dim() == 0 and isinstance(input, Tensor) and input.dim() == 1:
        index = index.reshape(1)
        if isinstance(src, Tensor) and src.dim() == 0:
            src = src.reshape(1)
    return index, src


def _check_scatter(input, dim, index, src, op):
    _tensor_arg(input, op)
    dim = _dim(dim, input.dim(), op)
    _index_arg(index, op)
    if index.dim() != input.dim():
        raise _C.ShapeMismatch(f"{op}: index ({index.dim()} dims) and input ({input.dim()} dims) must have the "
                               "same number of dims")
    for d in range(index.dim()):
        if index.shape[d] > (src.shape[d] if src is not None else index.shape[d]) or \
                (d != dim and index.shape[d] > input.shape[d]):
            raise _C.ShapeMismatch(f"{op}: index {tuple(index.shape)} is larger than input {tuple(input.shape)} "
                                   f"(apart from dim {dim}) or src {tuple(src.shape) if src is not None else ''}")
    if index.numel():
        lo, hi = int(index.min()), int(index.max())
        if lo < 0 or hi >= input.shape[dim]:
            raise _C.IndexOutOfRange(f"{op}: index {hi if hi >= input.shape[dim] else lo} is out of bounds for "
                                     f"dimension {dim} with size {input.shape[dim]}")
    return dim


def _narrow_to(src, shape):
    for d, n in enumerate(shape):
        if src.shape[d] != n:
            src = src.narrow(d, 0, n)
    return src


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """``input`` with ``src[i][j]`` (or ``value``) written at ``index[i][j]`` along ``dim`` (for
    dim 1); with repeated positions the last write wins, as PyTorch's CPU loop. ``reduce="add"``
    or ``"multiply"`` combines instead (see :func:`scatter_reduce`). Differentiable in input and src."""
    if src is None and value is None:
        raise _C.DtypeMismatch("scatter: expected src (a Tensor) or value (a number)")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    index, src = _vector_index(input, index, src)
    dim = _check_scatter(input, dim, index, src, "scatter")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise _C.ShapeMismatch(f"scatter: reduce argument must be either add or multiply, got {reduce!r}")
        if src is None:
            src = _C._full(tuple(index.shape), float(value), input.dtype)
        return scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")
    flat, win = _scatter_winners(input, dim, index)
    hit = _np.zeros(input.numel(), dtype=bool)
    hit[flat] = True
    mask = _C._from_numpy(hit.reshape(tuple(input.shape)))
    if src is None:
        return input.masked_fill(mask, value)
    src = _narrow_to(src, tuple(index.shape)).to(input.dtype)
    if not win.all():
        src = src.masked_fill(_C._from_numpy(~win), 0)
    return _C.scatter_add(input.masked_fill(mask, 0), dim, index, src)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class _ScatterExtreme:
    """scatter_reduce with amax/amin/prod: forward and backward in numpy (the gradient of a max is
    shared evenly between tied elements, as PyTorch does; a product's gradient is the product of
    the other elements, zeros included)."""

    @staticmethod
    def compute(x, flat, s, reduce, include_self):
        out = x.copy().reshape(-1)
        n = _np.zeros(out.size, dtype=_np.int64)
        _np.add.at(n, flat, 1)
        touched = n > 0
        if not include_self:
            out[touched] = {"amax": -_np.inf, "amin": _np.inf, "prod": 1}[reduce]
        ufunc = {"amax": _np.maximum, "amin": _np.minimum, "prod": _np.multiply}[reduce]
        ufunc.at(out, flat, s)
        return out.reshape(x.shape), touched.reshape(x.shape)


def _scatter_reduce_fn():
    from .autograd.function import Function

    class ScatterReduce(Function):
        _builtin_node = "ScatterReduce"

        @staticmethod
        def forward(ctx, input, src, dim, index, reduce, include_self):
            x = input.detach().numpy()
            grids = list(_np.indices(tuple(index.shape)))
            grids[dim] = index.numpy()
            flat = _np.ravel_multi_index(tuple(grids), x.shape).reshape(-1)
            s = src.detach().numpy().reshape(-1)
            out, touched = _ScatterExtreme.compute(x, flat, s, reduce, include_self)
            ctx.state = (x, s, flat, out, touched, reduce, include_self, tuple(src.shape))
            return _C._from_numpy(_np.asarray(out.astype(x.dtype), order="C"))

        @staticmethod
        def backward(ctx, grad):
            x, s, flat, out, touched, reduce, include_self, src_shape = ctx.state
            g = grad.detach().numpy().reshape(-1)
            xf, of = x.reshape(-1), out.reshape(-1)
            if reduce == "prod":
                gx, gs = _prod_grads(xf, s, flat, of, g, include_self, touched.reshape(-1))
            else:
                # Share the gradient evenly among the elements equal to the result. As in
                # PyTorch, self's value counts as a tie even when include_self is False (it then
                # gets no gradient at the positions written to).
                x_eq = xf == of
                s_eq = s == of[flat]
                ties = x_eq.astype(x.dtype)
                _np.add.at(ties, flat, s_eq)
                share = _np.divide(g, ties, out=_np.zeros_like(g), where=ties > 0)
                gx = _np.where(x_eq & (include_self | ~touched.reshape(-1)), share, 0.0)
                gs = _np.where(s_eq, share[flat], 0.0)
            mk = lambda a, shp: _C._from_numpy(_np.asarray(a.reshape(shp).astype(x.dtype), order="C"))  # noqa: E731
            return (mk(gx, x.shape) if ctx.needs_input_grad[0] else None,
                    mk(gs, src_shape) if ctx.needs_input_grad[1] else None, None, None, None, None)

    return ScatterReduce


def _prod_grads(xf, s, flat, of, g, include_self, touched):
    """Gradients of the scatter product: d out / d e = product of the other elements of e's group."""
    n = xf.size
    members_x = include_self | ~touched
    zeros = _np.where(members_x & (xf == 0), 1, 0).astype(_np.int64)
    _np.add.at(zeros, flat, (s == 0).astype(_np.int64))
    nz = _np.where(members_x & (xf != 0), xf, 1.0).astype(_np.float64)
    _np.multiply.at(nz, flat, _np.where(s != 0, s, 1.0))

    def other(v, grp):
        z, p = zeros[grp], nz[grp]
        return _np.where(v != 0, _np.where(z == 0, p / _np.where(v != 0, v, 1), 0.0), _np.where(z == 1, p, 0.0))

    gx = _np.where(members_x & touched, g * other(xf, _np.arange(n)), _np.where(touched, 0.0, g))
    gs = g[flat] * other(s, flat)
    return gx, gs


_SCATTER_REDUCE: list = []


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with the elements of ``src`` combined into the positions ``index`` names along
    ``dim`` by ``reduce`` (``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``), ``input``'s
    own value taking part when ``include_self``; differentiable in input and src."""
    _tensor_arg(src, "scatter_reduce", "src")
    index, src = _vector_index(input, index, src)
    dim = _check_scatter(input, dim, index, src, "scatter_reduce")
    if reduce not in _REDUCTIONS:
        raise _C.ShapeMismatch(f"scatter_reduce: reduce argument must be one of {', '.join(_REDUCTIONS)}, got "
                               f"{reduce!r}")
    src = _narrow_to(src, tuple(index.shape)).to(input.dtype)
    if reduce in ("sum", "mean"):
        base = input if include_self else scatter(input, dim, index, value=0)
        total = _C.scatter_add(base, dim, index, src)
        if reduce == "sum":
            return total
        count = _C.scatter_add(_C._full(tuple(input.shape), 1.0 if include_self else 0.0, input.dtype), dim, index,
                               _C._full(tuple(index.shape), 1.0, input.dtype))
        count = count.masked_fill(count == 0, 1)
        return total / count if input.dtype.is_floating_point else _C.floor_divide(total, count)
    if not _SCATTER_REDUCE:
        _SCATTER_REDUCE.append(_scatter_reduce_fn())
    return _SCATTER_REDUCE[0].apply(input, src, dim, index, reduce, bool(include_self))


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with the slices of ``source`` along ``dim`` combined into the slices ``index``
    names by ``reduce`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``), ``input``'s own value
    taking part when ``include_self``: :func:`scatter_reduce` with ``index`` spread over the
    slices. Differentiable in input and source."""
    _tensor_arg(input, "index_reduce")
    _tensor_arg(source, "index_reduce", "source")
    _tensor_arg(index, "index_reduce", "index")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise _C.ShapeMismatch(f"index_reduce: reduce argument must be one of prod, mean, amax, amin, got {reduce!r}")
    if index.dim() > 1:
        raise _C.ShapeMismatch(f"index_reduce: Index should have dimension 1 or 0 (got {index.dim()})")
    nd = max(source.dim(), 1)
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd or input.dim() != source.dim():
        raise _C.ShapeMismatch(f"index_reduce: dim {dim} out of range, or source {tuple(source.shape)} and input "
                               f"{tuple(input.shape)} of different ranks")
    n = source.shape[d] if source.dim() else 1
    if index.numel() != n:
        raise _C.ShapeMismatch(f"index_reduce: Number of indices ({index.numel()}) should be equal to "
                               f"source.size(dim) ({n})")
    if source.dim() == 0:
        return scatter_reduce(input, 0, index.reshape(1), source.reshape(1), reduce, include_self=include_self)
    shape = [1] * source.dim()
    shape[d] = n
    idx = index.reshape(shape).expand(*source.shape)
    return scatter_reduce(input, d, idx, source, reduce, include_self=include_self)


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written at ``input[indices]`` (a tuple of index tensors), or added
    there with ``accumulate`` (repeated positions add up); differentiable in input and values."""
    _tensor_arg(input, "index_put")
    if not isinstance(indices, (tuple, list)) or not all(isinstance(i, Tensor) for i in indices):
        raise _C.DtypeMismatch("index_put: indices must be a tuple of tensors")
    if not accumulate:
        out = input.clone()
        out[tuple(indices)] = values
        return out
    idx = [i.numpy().astype(_np.int64) if i.dtype != dtype.bool else _np.nonzero(i.numpy()) for i in indices]
    flat_idx: list = []
    for i in idx:
        flat_idx.extend(i if isinstance(i, tuple) else (i,))
    lead = tuple(input.shape[:len(flat_idx)])
    try:
        b = _np.broadcast_arrays(*flat_idx)
        flat = _np.ravel_multi_index(tuple(_np.where(a < 0, a + n, a) for a, n in zip(b, lead)), lead)
    except ValueError as e:
        raise _C.IndexOutOfRange(f"index_put: {e}") from None
    rest = tuple(input.shape[len(lead):])
    vals = values if isinstance(values, Tensor) else _C._full((), float(values), input.dtype)
    vals = vals.to(input.dtype).expand(tuple(flat.shape) + rest).reshape((-1,) + rest)
    return index_add(input.reshape((-1,) + rest), 0, _long(flat.reshape(-1)), vals).reshape(tuple(input.shape))


def take(input, index):
    """The elements of ``input`` (as if flattened) at ``index``, in index's shape; differentiable."""
    _tensor_arg(input, "take")
    _index_arg(index, "take")
    n = input.numel()
    if index.numel():
        lo, hi = int(index.min()), int(index.max())
        if lo < -n or hi >= n:
            raise _C.IndexOutOfRange(f"take: index {hi if hi >= n else lo} out of range for tensor of size "
                                     f"{tuple(input.shape)}")
        index = index % n if lo < 0 else index
    return input.reshape(-1).index_select(0, index.reshape(-1)).reshape(tuple(index.shape))


class kthvalue_type(NamedTuple):
    """PyTorch's ``torch.return_types.kthvalue``: ``(values, indices)``."""

    values: Tensor
    indices: Tensor


kthvalue_type.__name__ = kthvalue_type.__qualname__ = "kthvalue"
kthvalue_type.__module__ = "pylucid.return_types"
setattr(kthvalue_type, "__repr__", return_type_repr)  # noqa: B010


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` and its index, a named tuple
    ``(values, indices)``; differentiable in values."""
    _tensor_arg(input, "kthvalue")
    dim = _dim(dim, input.dim(), "kthvalue")
    if isinstance(k, bool) or not isinstance(k, int):
        raise _C.DtypeMismatch(f"kthvalue: k must be an int, got {type(k).__name__}")
    return kthvalue_type(*_C._kthvalue(input, k, dim, keepdim))


def _erfinv_f64(y):
    """erfinv in float64: Giles' single-precision approximation as a start, then Newton steps on
    erf (pylucid's float64 erf) to full precision."""
    w = -_np.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = _np.where(small, w - 2.5, _np.sqrt(_np.maximum(w, 0)) - 3.0)
    p1 = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
          -0.00417768164, 0.246640727, 1.50140941]
    p2 = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
          0.00943887047, 1.00167406, 2.83297682]
    p = _np.where(small, p1[0], p2[0])
    for a, b in zip(p1[1:], p2[1:]):
        p = _np.where(small, a, b) + p * ws
    x = p * y
    finite = _np.isfinite(x)
    for _ in range(3):
        erf = _C.erf(_C._from_numpy(_np.asarray(_np.where(finite, x, 0.0), order="C"))).numpy()
        x = _np.where(finite, x - (erf - y) / (2.0 / _math.sqrt(_math.pi) * _np.exp(-x * x)), x)
    x = _np.where(_np.abs(y) == 1.0, _np.copysign(_np.inf, y), x)
    return _np.where(_np.abs(y) > 1.0, _np.nan, x)


def _erfinv_fn():
    from .autograd.function import Function

    class Erfinv(Function):
        _builtin_node = "Erfinv"

        @staticmethod
        def forward(ctx, input):
            x = input.detach()
            d = x.dtype if x.dtype.is_floating_point else dtype.float32
            with _np.errstate(divide="ignore", invalid="ignore"):  # +-1 and |y| > 1 give +-inf, nan
                y = _erfinv_f64(x.to(dtype.float64).numpy())
            out = _C._from_numpy(_np.asarray(_np.reshape(y, tuple(x.shape)), order="C")).to(d)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad * (_math.sqrt(_math.pi) / 2) * (out * out).exp()

    return Erfinv


_ERFINV: list = []


def erfinv(input):
    """The inverse error function, elementwise (``erf(erfinv(y)) == y`` on ``(-1, 1)``, +-inf at
    +-1, NaN outside); differentiable (``sqrt(pi)/2 * exp(erfinv(y)**2)``, to every order).
    Results are the float64 value rounded to the input's dtype."""
    _tensor_arg(input, "erfinv")
    if not _ERFINV:
        _ERFINV.append(_erfinv_fn())
    return _ERFINV[0].apply(input)


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal with ``fill_value`` in place (a 2-d tensor, or one whose dims are all
    equal); with ``wrap`` a tall matrix's diagonal restarts every ``cols + 1`` rows, as PyTorch's."""
    if self.dim() < 2:
        raise _C.ShapeMismatch(f"fill_diagonal_: dimensions must larger than 1, got {self.dim()}")
    shape = tuple(self.shape)
    if self.dim() > 2 and len(set(shape)) != 1:
        raise _C.ShapeMismatch(f"fill_diagonal_: all dimensions of input must be of equal length, got {shape}")
    strides = _np.cumprod((1,) + shape[:0:-1])[::-1]
    step = int(strides.sum())
    flat = _np.arange(0, self.numel(), step)
    if not (wrap and self.dim() == 2 and shape[0] > shape[1] + 1):
        flat = flat[:min(shape)]
    mask = _np.zeros(self.numel(), dtype=bool)
    mask[flat] = True
    return self.masked_fill_(_C._from_numpy(mask.reshape(shape)), fill_value)


from ._compat import _method, typed_errors, wrap_public  # noqa: E402

wrap_public(globals(), __all__)


def _attach():
    from ._math import div, divide, true_divide  # noqa: PLC0415
    from ._math_ext import unique  # noqa: PLC0415
    fns = {"div": div, "divide": divide, "true_divide": true_divide, "unique": unique}
    for name in ["index_add", "index_copy", "index_fill", "index_put", "scatter", "scatter_reduce", "index_reduce", "take",
                 "kthvalue", "erfinv", "div", "divide", "true_divide", "unique"]:
        fn = fns.get(name) or globals()[name]
        setattr(Tensor, name, _method(fn, name, fn.__doc__))
    setattr(Tensor, "fill_diagonal_", typed_errors(_fill_diagonal_))  # noqa: B010
    c_div_ = Tensor.div_
    from ._compat import _inplace  # noqa: PLC0415  (_compat is loaded before this module)
    rounded_div_ = _inplace(div, "div_")

    def div_(self, other, *, rounding_mode=None):
        """In-place div: ``self / other`` written into self (``rounding_mode`` as in :func:`div`)."""
        return c_div_(self, other) if rounding_mode is None else rounded_div_(self, other, rounding_mode=rounding_mode)
    setattr(Tensor, "div_", div_)  # noqa: B010


_attach()
