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
(2, 2)
"""
from . import _C

__all__ = [
    # binary elementwise (the C++ ops of ops/binary, exported here with the rest of the math)
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow",
    "maximum", "minimum",
    # unary elementwise
    "neg", "negative", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
    "relu", "relu_", "gelu", "silu", "clamp", "clip", "clamp_", "clamp_min", "clamp_max", "sign",
    "isnan", "isfinite",
    # reductions
    "sum", "mean", "var", "std", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp",
    "prod", "norm",
    # matrix products
    "matmul", "mm", "bmm", "dot", "linear",
]

add = _C.add
sub = subtract = _C.sub
mul = multiply = _C.mul
div = divide = true_divide = _C.div
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
