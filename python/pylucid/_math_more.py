"""More of PyTorch's math: the inverse and hyperbolic trigonometric functions, base-2/10 logs and
``atan2`` (fused C++ elementwise ops with their own backward nodes), and the small composites
scripts reach for, built from differentiable ops so that they get gradients of every order:
``lerp``, ``addcmul``, ``addcdiv``, ``masked_select``, ``meshgrid``, ``cross``, ``kron``,
``tensordot``, ``cdist``, ``hypot``, ``logaddexp``, ``nan_to_num``, ``logit`` and friends.

>>> import pylucid
>>> pylucid.lerp(pylucid.tensor([0.0, 10.0]), pylucid.tensor([10.0, 20.0]), 0.5).tolist()
[5.0, 15.0]
>>> [t.tolist() for t in pylucid.meshgrid(pylucid.arange(2), pylucid.arange(3), indexing="ij")]
[[[0, 0, 0], [1, 1, 1]], [[0, 1, 2], [0, 1, 2]]]
"""
import builtins as _builtins
import math as _math

from . import _C

__all__ = [
    "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "erfc", "isinf", "isposinf", "isneginf",
    "signbit", "atan2", "arctan2", "sgn", "deg2rad", "rad2deg", "frac", "logit", "hypot", "logaddexp",
    "logaddexp2", "nan_to_num", "lerp", "addcmul", "addcdiv", "masked_select", "meshgrid", "cross", "kron",
    "tensordot", "cdist", "broadcast_shapes", "broadcast_tensors",
]

tan = _C.tan
asin = arcsin = _C.asin
acos = arccos = _C.acos
atan = arctan = _C.atan
sinh = _C.sinh
cosh = _C.cosh
asinh = arcsinh = _C.asinh
acosh = arccosh = _C.acosh
atanh = arctanh = _C.atanh
log2 = _C.log2
log10 = _C.log10
exp2 = _C.exp2
erfc = _C.erfc
isinf = _C.isinf
isposinf = _C.isposinf
isneginf = _C.isneginf
signbit = _C.signbit
atan2 = arctan2 = _C.atan2


def _tensor_arg(op, name, t):
    if not isinstance(t, _C.Tensor):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor for {name}, got {type(t).__name__}")
    return t


def _as_tensor(x, like):
    if isinstance(x, _C.Tensor):
        return x
    from ._tensor import tensor  # noqa: PLC0415  (_tensor is loaded after this module)
    return tensor(x, dtype=like.dtype if like.dtype.is_floating_point or isinstance(x, int) else None)


def _float_of(x):
    """x as a floating tensor (integers and bool promote to float32, as PyTorch's float ops do)."""
    return x if x.dtype.is_floating_point else x.float()


def sgn(input):
    """The sign of input (-1, 0 or 1); for real tensors the same as :func:`pylucid.sign`."""
    return _C.sign(_tensor_arg("sgn", "input", input))


def deg2rad(input):
    """Degrees to radians, elementwise (integers promote to float32)."""
    return _float_of(_tensor_arg("deg2rad", "input", input)) * (_math.pi / 180.0)


def rad2deg(input):
    """Radians to degrees, elementwise (integers promote to float32)."""
    return _float_of(_tensor_arg("rad2deg", "input", input)) * (180.0 / _math.pi)


def frac(input):
    """The fractional part ``input - trunc(input)`` (sign of input); its gradient is 1."""
    _tensor_arg("frac", "input", input)
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"frac: expected a floating input, got {input.dtype!r}")
    return input - _C.trunc(input).detach()


def logit(input, eps=None):
    """``log(p / (1 - p))``; with ``eps`` the input is first clamped to ``[eps, 1 - eps]``."""
    z = _float_of(_tensor_arg("logit", "input", input))
    if eps is not None:
        z = z.clamp(eps, 1.0 - eps)
    return _C.log(z / (1.0 - z))


def hypot(input, other):
    """``sqrt(input**2 + other**2)`` elementwise with broadcasting."""
    _tensor_arg("hypot", "input", input)
    other = _as_tensor(other, input)
    return _C.sqrt(input * input + other * other)


def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow: ``max + log1p(exp(-|input - other|))``."""
    _tensor_arg("logaddexp", "input", input)
    other = _as_tensor(other, input)
    m = _C.maximum(input, other)
    out = m + _C.log1p(_C.exp(-(input - other).abs()))
    # Both -inf (or both +inf): the difference is NaN, the answer is that infinity.
    same_inf = _C.isinf(m).detach() & (input == other).detach()
    return _C.where(same_inf, m, out) if _builtins.bool(same_inf.any()) else out


def logaddexp2(input, other):
    """``log2(2**input + 2**other)`` without overflow."""
    _tensor_arg("logaddexp2", "input", input)
    ln2 = _math.log(2.0)
    return logaddexp(input * ln2, _as_tensor(other, input) * ln2) / ln2


def _dtype_limits(dt):
    import numpy as np  # noqa: PLC0415
    if dt == _C.dtype.bfloat16:
        return -3.3895313892515355e38, 3.3895313892515355e38
    info = np.finfo(_C._numpy_dtype(dt))
    return float(info.min), float(info.max)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by default 0, the dtype's
    largest and its lowest finite value). The gradient passes where input is finite."""
    _tensor_arg("nan_to_num", "input", input)
    if not input.dtype.is_floating_point:
        return input.clone()
    lo, hi = _dtype_limits(input.dtype)
    posinf = hi if posinf is None else posinf
    neginf = lo if neginf is None else neginf
    bad = ~_C.isfinite(input)
    if not _builtins.bool(bad.any()):
        return input.clone()
    from ._tensor import full  # noqa: PLC0415

    def const(v):
        return full((), v, dtype=input.dtype)
    fill = _C.where(_C.isnan(input), const(nan), _C.where(input > 0, const(posinf), const(neginf)))
    return _C.where(bad, fill, input)


def lerp(input, end, weight):
    """``input + weight * (end - input)``, evaluated as PyTorch does (from ``end`` when
    ``|weight| >= 0.5``, which keeps ``lerp(a, b, 1) == b`` exact); weight a number or a Tensor."""
    _tensor_arg("lerp", "input", input)
    end = _as_tensor(end, input)
    diff = end - input
    if isinstance(weight, (int, float)):
        if _builtins.abs(weight) < 0.5:
            return input + weight * diff
        return end - diff * (1.0 - weight)
    w = _tensor_arg("lerp", "weight", weight)
    return _C.where(w.abs() < 0.5, input + w * diff, end - diff * (1.0 - w))


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` elementwise with broadcasting."""
    _tensor_arg("addcmul", "input", input)
    prod = (tensor1 if value == 1 else value * tensor1) * tensor2
    return input + prod


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` elementwise with broadcasting."""
    _tensor_arg("addcdiv", "input", input)
    return input + (tensor1 if value == 1 else value * tensor1) / tensor2


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (numpy's rules), as PyTorch's ``broadcast_shapes``."""
    import numpy as np  # noqa: PLC0415

    from ._compat import Size  # noqa: PLC0415  (_compat imports this module's names)
    try:
        return Size(int(s) for s in np.broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes]))
    except ValueError as e:
        raise _C.ShapeMismatch(f"broadcast_shapes: shapes {[tuple(s) for s in shapes]} do not broadcast") from e


def broadcast_tensors(*tensors):
    """The tensors expanded (as views) to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        _tensor_arg("broadcast_tensors", "tensors", t)
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(*shape) for t in tensors)


def masked_select(input, mask):
    """The elements of input where the bool mask is True (both broadcast), as a 1-D tensor."""
    _tensor_arg("masked_select", "input", input)
    _tensor_arg("masked_select", "mask", mask)
    if mask.dtype != _C.dtype.bool:
        raise _C.DtypeMismatch(f"masked_select: mask must be a bool tensor, got {mask.dtype!r}")
    a, m = broadcast_tensors(input, mask)
    return a[m]


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors: with ``indexing='ij'`` (the default, as PyTorch's) output
    i varies along dim i; with ``'xy'`` the first two dims are swapped. Outputs are expanded views."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        _tensor_arg("meshgrid", "tensors", t)
        if t.ndim > 1:
            raise _C.ShapeMismatch(f"meshgrid: expected 0-D or 1-D tensors, got shape {tuple(t.shape)}")
    ts = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.shape[0] for t in ts)
    n = len(ts)
    out = [t.reshape(*[-1 if j == i else 1 for j in range(n)]).expand(*shape) for i, t in enumerate(ts)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (by default the first dim of size 3, as
    ``torch.cross``); inputs broadcast."""
    _tensor_arg("cross", "input", input)
    _tensor_arg("cross", "other", other)
    a, b = broadcast_tensors(input, other)
    if dim is None:
        dims = [i for i, s in enumerate(a.shape) if s == 3]
        if not dims:
            raise _C.ShapeMismatch(f"cross: no dimension of size 3 in input of shape {tuple(a.shape)}")
        dim = dims[0]
    if not -a.ndim <= dim < a.ndim:
        raise _C.IndexOutOfRange(f"cross: dim {dim} out of range for a tensor with {a.ndim} dims")
    if a.shape[dim] != 3:
        raise _C.ShapeMismatch(f"cross: dimension {dim} must have size 3, got {a.shape[dim]}")
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return _C.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


def kron(input, other):
    """The Kronecker product: out[i*p + k, j*q + l] = input[i, j] * other[k, l] (any number of dims)."""
    _tensor_arg("kron", "input", input)
    _tensor_arg("kron", "other", other)
    n = _builtins.max(input.ndim, other.ndim)
    a = input.reshape(*([1] * (n - input.ndim)), *input.shape)
    b = other.reshape(*([1] * (n - other.ndim)), *other.shape)
    # a's dims at even positions, b's at odd ones, then merge each pair.
    a2 = a.reshape(*[s for d in a.shape for s in (d, 1)])
    b2 = b.reshape(*[s for d in b.shape for s in (1, d)])
    return (a2 * b2).reshape(*[x * y for x, y in zip(a.shape, b.shape)])


def tensordot(a, b, dims=2):
    """Sums the products of a's and b's elements over the given dims: ``dims`` an int (the last
    dims of a with the first of b) or a pair of lists; through one matmul."""
    _tensor_arg("tensordot", "a", a)
    _tensor_arg("tensordot", "b", b)
    if isinstance(dims, _C.Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise ValueError(f"tensordot: expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    da = [d % a.ndim for d in da] if a.ndim else da
    db = [d % b.ndim for d in db] if b.ndim else db
    if len(da) != len(db):
        raise _C.ShapeMismatch(f"tensordot: both dims lists must have the same length, got {da} and {db}")
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise _C.ShapeMismatch(f"tensordot: contracted dimensions need to match, but first has size "
                                   f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    am = a.permute(*fa, *da).reshape(-1, k)
    bm = b.permute(*db, *fb).reshape(k, -1)
    return (am @ bm).reshape(*[a.shape[d] for d in fa], *[b.shape[d] for d in fb])


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R)."""
    _tensor_arg("cdist", "x1", x1)
    _tensor_arg("cdist", "x2", x2)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise _C.ShapeMismatch(f"cdist: expected (..., P, M) and (..., R, M) with the same M, got "
                               f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    if p < 0:
        raise ValueError(f"cdist only supports non-negative p values, got {p}")
    if compute_mode not in _CDIST_MODES:
        raise _C.LucidError(f"cdist: {compute_mode} is not a valid value for compute_mode, expected one of "
                            f"{', '.join(_CDIST_MODES)}")
    P, R = x1.shape[-2], x2.shape[-2]
    if p == 2 and (compute_mode == "use_mm_for_euclid_dist"
                   or (compute_mode == _CDIST_MODES[0] and (P > 25 or R > 25))):
        # NOTE: PyTorch's matrix-product path, |a|^2 + |b|^2 - 2 a.b, with its rounding: points
        # closer than ~sqrt(eps) * |a| come out as a few ulps of |a| rather than as their distance
        # (the diagonal of cdist(x, x) is not exactly zero), and programs print those numbers.
        batch = broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
        M = x1.shape[-1]
        a = x1.expand(*batch, P, M).reshape(-1, P, M) if batch else x1
        b = x2.expand(*batch, R, M).reshape(-1, R, M) if batch else x2
        return _euclidean_dist_fn().apply(a, b).view(*batch, P, R)
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _C.norm(diff, p, -1) if p != 0 else (diff != 0).sum(-1).to(x1.dtype)


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
_EUCLID: list = []


def _euclidean_dist_fn():
    """sqrt(max(|a|^2 + |b|^2 - 2 a.b, 0)) as one matrix product of padded operands; backward
    ``ratio = g / d`` (0 where d = 0), ``ga = a * sum_j ratio - ratio b``, written with ops."""
    if _EUCLID:
        return _EUCLID[0]
    from ._tensor import ones_like
    from .autograd.function import Function

    class EuclideanDist(Function):
        _builtin_node = "EuclideanDist"

        @staticmethod
        def forward(ctx, a, b):
            an = a.pow(2).sum(-1, keepdim=True)
            bn = b.pow(2).sum(-1, keepdim=True)
            a_ = _C.cat([a * -2, an, ones_like(an)], -1)
            b_ = _C.cat([b, ones_like(bn), bn], -1)
            d = (a_ @ b_.transpose(-2, -1)).clamp_min(0).sqrt()
            ctx.save_for_backward(a, b, d)
            return d

        @staticmethod
        def backward(ctx, g):
            a, b, d = ctx.saved_tensors
            ratio = (g / d).masked_fill(d == 0, 0.0)
            return (a * ratio.sum(-1, keepdim=True) - ratio @ b,
                    b * ratio.sum(-2).unsqueeze(-1) - ratio.transpose(-2, -1) @ a)

    _EUCLID.append(EuclideanDist)
    return EuclideanDist


def _attach():
    methods = ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos",
               "arctan", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "erfc", "isinf", "isposinf",
               "isneginf", "signbit", "atan2", "arctan2", "sgn", "deg2rad", "rad2deg", "frac", "logit", "hypot",
               "logaddexp", "logaddexp2", "nan_to_num", "lerp", "addcmul", "addcdiv", "masked_select", "cross",
               "kron", "tensordot"]
    def make(fn, name):
        def method(self, *args, **kwargs):
            return fn(self, *args, **kwargs)
        method.__name__ = method.__qualname__ = name
        method.__doc__ = fn.__doc__
        setattr(method, "__wrapped__", fn)  # its keywords are fn's
        return method

    for name in methods:
        if name not in vars(_C.Tensor):
            setattr(_C.Tensor, name, make(globals()[name], name))


_attach()
