"""More of PyTorch's top-level functions that data-handling and model code reaches for, composed
from differentiable pylucid ops (so they have gradients where PyTorch's do): NaN-ignoring
reductions (``nanmean``, ``nansum``), ``trapezoid``, shaping (``tensor_split``, ``diag_embed``,
``diagflat``, ``ravel``, ``take_along_dim``, ``msort``, ``Tensor.unfold``), elementwise extras
(``fmax``, ``fmin``, ``heaviside``, ``absolute``), ``dist``, and the top-level spellings of
``dropout`` and the norms. (Order statistics, stacking and index builders are in _math_extra.)

>>> import pylucid
>>> pylucid.nansum(pylucid.tensor([1.0, float("nan"), 2.0])).item()
3.0
>>> pylucid.arange(6).unfold(0, 3, 2).tolist()
[[0, 1, 2], [2, 3, 4]]
"""

import builtins as _builtins
from typing import NamedTuple

import numpy as _np

from . import _C
from ._C import Tensor
from ._index_ext import _dim, _long
from ._tensor import _tensor_arg
from ._tensor_str import return_type_repr

__all__ = [
    "nanmean", "nansum", "trapezoid", "trapz", "gradient", "tensor_split", "diag_embed", "diagflat", "ravel",
    "take_along_dim", "msort", "fmax", "fmin", "heaviside", "absolute", "dist", "dropout", "layer_norm",
    "group_norm", "batch_norm",
]


# PyTorch also exposes these nn.functional ops at the top level with the same signature
# (torch.conv2d, torch.max_pool2d, torch.selu, ...): installed by _functional_aliases().
_SAME_AS_FUNCTIONAL = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                       "max_pool1d", "max_pool2d", "max_pool3d", "ctc_loss", "avg_pool1d", "adaptive_avg_pool1d",
                       "adaptive_max_pool1d", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "selu", "celu", "threshold", "hardshrink", "bilinear",
                       "cosine_similarity", "pairwise_distance", "rrelu", "rrelu_")


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
        from ._math_extra import diff  # noqa: PLC0415  (_math_extra loads after this module)
        step = diff(x, dim=-1 if x.dim() == 1 else d)
        if x.dim() == 1 and y.dim() > 1:
            shape = [1] * y.dim()
            shape[d] = n - 1
            step = step.reshape(shape)
        return (avg * step).sum(d)
    return avg.sum(d) * x


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences of ``input`` along each of ``dim`` (every dim when None), one tensor
    per dim, as PyTorch's (and numpy's) ``gradient``: second-order accurate inside, first- or
    second-order (``edge_order``) one-sided at the ends. ``spacing`` is one number for every dim,
    one number per dim, or one 1-d tensor of coordinates per dim (unevenly spaced samples).
    Built from slices, so it is differentiable."""
    _tensor_arg(input, "gradient")
    if edge_order not in (1, 2):
        raise ValueError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = range(input.dim()) if dim is None else [dim] if isinstance(dim, int) else dim
    dims = [_dim(d, input.dim(), "gradient") for d in dims]
    if isinstance(spacing, (int, float, Tensor)) and not (isinstance(spacing, Tensor) and spacing.dim() == 1):
        spacing = [float(spacing)] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        raise _C.ShapeMismatch(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                               f"equal to 'self.dim() = {len(dims)}', since dim argument was not given, but got a "
                               f"list of length {len(spacing)}")
    f = input if input.is_floating_point() else input.float()
    out = []
    for d, h in zip(dims, spacing):
        n = f.shape[d]
        if n < edge_order + 1:
            raise _C.ShapeMismatch(f"torch.gradient expected each dimension size to be at least edge_order+1, "
                                   f"got size {n} along dim {d}")

        def s(a, b=None, f=f, d=d, n=n):  # f[a:b] along d
            a = a % n if a < 0 else a
            b = n if b is None else b % n if b < 0 else b
            return f.narrow(d, a, b - a)

        if isinstance(h, Tensor):  # coordinates: PyTorch's (numpy's) uneven-spacing stencils
            if h.dim() != 1 or h.shape[0] != n:
                raise _C.ShapeMismatch(f"torch.gradient expected each tensor in spacing to be 1-D of size {n} "
                                       f"along dim {d}, got shape {tuple(h.shape)}")
            shape = [1] * f.dim()
            x = h.to(f.dtype)
            dx = x[1:] - x[:-1]

            def along(v, shape=shape, d=d):  # a 1-d coefficient laid along dim d
                sh = list(shape)
                sh[d] = v.shape[0]
                return v.reshape(sh)

            hl, hr = dx[:-1], dx[1:]
            inner = (along(-hr / (hl * (hl + hr))) * s(0, -2) + along((hr - hl) / (hl * hr)) * s(1, -1)
                     + along(hl / (hr * (hl + hr))) * s(2))
            if edge_order == 1:
                first = (s(1, 2) - s(0, 1)) / dx[0]
                last = (s(-1) - s(-2, -1)) / dx[-1]
            else:
                d1, d2 = dx[0], dx[1]
                first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * s(0, 1) + (d1 + d2) / (d1 * d2) * s(1, 2)
                         - d1 / (d2 * (d1 + d2)) * s(2, 3))
                d1, d2 = dx[-2], dx[-1]
                last = (d2 / (d1 * (d1 + d2)) * s(-3, -2) - (d2 + d1) / (d1 * d2) * s(-2, -1)
                        + (2 * d2 + d1) / (d2 * (d1 + d2)) * s(-1))
        else:
            h = float(h)
            inner = (s(2) - s(0, -2)) / (2 * h)
            if edge_order == 1:
                first, last = (s(1, 2) - s(0, 1)) / h, (s(-1) - s(-2, -1)) / h
            else:
                first = (-1.5 * s(0, 1) + 2 * s(1, 2) - 0.5 * s(2, 3)) / h
                last = (0.5 * s(-3, -2) - 2 * s(-2, -1) + 1.5 * s(-1)) / h
        out.append(_C.cat([first, inner, last], d))
    return tuple(out)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


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
    return _C.where(input == 0, values.to(input.dtype), step)  # broadcasts both ways


def absolute(input):
    """Alias of ``abs``."""
    return _C.abs(input)


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other``."""
    return (input - other).norm(p=float(p))


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


from ._compat import _method, typed_errors, wrap_public  # noqa: E402


wrap_public(globals(), __all__)


def _attach():
    for name in ["nanmean", "nansum", "tensor_split", "diag_embed", "diagflat", "ravel", "take_along_dim", "msort",
                 "fmax", "fmin", "heaviside", "absolute", "dist"]:
        if name in vars(Tensor):
            continue
        fn = globals()[name]
        setattr(Tensor, name, _method(fn, name, fn.__doc__))
    setattr(Tensor, "sum_to_size", typed_errors(_sum_to_size))  # noqa: B010
    setattr(Tensor, "is_cpu", property(lambda self: True, doc="True: pylucid tensors live on the CPU."))  # noqa: B010
    setattr(Tensor, "itemsize", property(lambda self: self.element_size(),  # noqa: B010
                                         doc="The size of one element in bytes."))
    setattr(Tensor, "nbytes", property(lambda self: self.element_size() * self.numel(),  # noqa: B010
                                       doc="The size of the elements in bytes."))


_attach()
