"""Elementwise math, reductions and matrix products: the module-level functions of the C++ ops.

The Tensor methods (``exp``, ``sum``, ``max``, ``@``, ...) are defined by the extension itself;
this module re-exports the free functions under PyTorch's names.

>>> import pylucid
>>> x = pylucid.tensor([[1.0, -2.0], [3.0, 0.5]])
>>> pylucid.relu(x).tolist()
[[1.0, 0.0], [3.0, 0.5]]
>>> x.sum(dim=0).tolist()
[4.0, -1.5]
>>> values, indices = x.max(dim=1)
>>> indices.tolist()
[0, 0]
>>> (x @ x).shape
pylucid.Size([2, 2])
"""
import numpy as _np

from . import _C
from ._C import Tensor, dtype
from ._out import write_out as _write_out

__all__ = [
    # binary elementwise (the C++ ops of ops/binary, exported here with the rest of the math)
    "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "pow",
    "maximum", "minimum",
    # unary elementwise
    "neg", "negative", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
    "relu", "relu_", "gelu", "silu", "clamp", "clip", "clamp_", "clamp_min", "clamp_max", "sign",
    "isnan", "isfinite", "log1p", "expm1", "erf", "floor", "ceil", "trunc", "fix", "round",
    # reductions
    "sum", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp",
    "prod", "norm",
    # matrix products
    "matmul", "mm", "bmm", "dot", "linear",
]



def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, elementwise with broadcasting (other a Tensor or number)."""
    r = _C.add(input, other if alpha == 1 else _scaled(other, alpha, "add"))
    return r if out is None else _write_out("add", out, r)


def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other, elementwise with broadcasting (other a Tensor or number)."""
    r = _C.sub(input, other if alpha == 1 else _scaled(other, alpha, "sub"))
    return r if out is None else _write_out("sub", out, r)


subtract = sub


def rsub(input, other, *, alpha=1):
    """other - alpha * input, elementwise with broadcasting."""
    # (-alpha * input) + other: equal operands give +0.0, as PyTorch's other - alpha * input.
    return _C.add(_C.mul(input, -alpha) if alpha != 1 else _C.neg(input), other)


def _scaled(other, alpha, op):
    if not isinstance(other, (_C.Tensor, int, float)):
        raise _C.DtypeMismatch(f"{op}: expected a Tensor or a number for other, got {type(other).__name__}")
    return other * alpha


mul = multiply = _C.mul


def _int_trunc_div(a, b):
    """Integer quotient rounded toward zero (numpy's // floors)."""
    an, bn = (_np.asarray(x.numpy() if isinstance(x, Tensor) else x, dtype=_np.int64) for x in (a, b))
    if (bn == 0).any():
        raise _C.LucidError("div: ZeroDivisionError (integer division by zero)")
    q = _np.abs(an) // _np.abs(bn) * _np.sign(an) * _np.sign(bn)
    return _C._from_numpy(_np.asarray(q, order="C"))


def div(input, other, *, rounding_mode=None):
    """``input / other`` with broadcasting: true division when ``rounding_mode`` is None,
    ``"trunc"`` rounds the quotient toward zero and ``"floor"`` toward minus infinity (integer
    inputs then stay integer). The rounded quotients have a zero gradient, as in PyTorch."""
    if rounding_mode is None:
        return _C.div(input, other)
    if rounding_mode == "floor":
        return _C.floor_divide(input, other)
    if rounding_mode != "trunc":
        raise _C.ShapeMismatch(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                               f"{rounding_mode!r}")
    ints = all(not isinstance(x, Tensor) and isinstance(x, int) or isinstance(x, Tensor) and
               x.dtype in (dtype.int64, dtype.bool) for x in (input, other))
    if ints:
        return _int_trunc_div(input, other)
    return _C.trunc(_C.div(input, other))


divide = div


def true_divide(input, other):
    """``input / other`` (true division); alias of :func:`div` without a rounding mode."""
    return _C.div(input, other)


pow = _C.pow
maximum = _C.maximum
minimum = _C.minimum

neg = _C.neg
negative = _C.negative
abs = _C.abs
exp = _C.exp
log = _C.log
sqrt = _C.sqrt
rsqrt = _C.rsqrt
sin = _C.sin
cos = _C.cos
tanh = _C.tanh
sigmoid = _C.sigmoid
relu = _C.relu
relu_ = _C.relu_
gelu = _C.gelu
silu = _C.silu
clamp = _C.clamp
clip = _C.clip
clamp_ = _C.clamp_
clamp_min = _C.clamp_min
clamp_max = _C.clamp_max
sign = _C.sign
isnan = _C.isnan
isfinite = _C.isfinite
log1p = _C.log1p
expm1 = _C.expm1
erf = _C.erf
floor = _C.floor
ceil = _C.ceil
trunc = _C.trunc
fix = _C.fix
round = _C.round

sum = _C.sum
mean = _C.mean
var = _C.var
std = _C.std
max = _C.max
min = _C.min
amax = _C.amax
amin = _C.amin
argmax = _C.argmax
argmin = _C.argmin
logsumexp = _C.logsumexp
prod = _C.prod
norm = _C.norm

matmul = _C.matmul
mm = _C.mm
bmm = _C.bmm
dot = _C.dot
linear = _C.linear
