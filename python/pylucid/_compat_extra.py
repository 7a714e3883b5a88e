"""What scripts call at their top: ``finfo``/``iinfo`` (a dtype's limits, as in attention masks'
``torch.finfo(x.dtype).min``) and the switches that pylucid honours by construction:
``set_float32_matmul_precision`` (float32 products are always computed in float32),
``use_deterministic_algorithms`` (every kernel is deterministic) and ``compile`` (the ops are
compiled C++ already, so the model or function is returned unchanged).

>>> import pylucid
>>> pylucid.finfo(pylucid.float32).eps
1.1920928955078125e-07
>>> pylucid.iinfo(pylucid.int64).max
9223372036854775807
"""


import math as _math

import numpy as _np

from . import _C

__all__ = ["finfo", "iinfo", "set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "compile", "can_cast", "alpha_dropout",
           "feature_alpha_dropout"]

_FLOATS = {_C.dtype.float16: "float16", _C.dtype.bfloat16: "bfloat16", _C.dtype.float32: "float32",
           _C.dtype.float64: "float64"}


class finfo:
    """The machine limits of a floating dtype (the default dtype when none is given): ``bits``,
    ``eps``, ``max``, ``min``, ``tiny`` (= ``smallest_normal``), ``resolution`` and ``dtype``
    (its name), as plain Python floats."""

    def __init__(self, type=None):  # noqa: A002  (PyTorch's keyword)
        if type is None:
            from ._tensor import get_default_dtype  # noqa: PLC0415  (_tensor loads after this module)
            type = get_default_dtype()  # noqa: A001
        if type not in _FLOATS:
            raise TypeError(f"finfo() requires a floating point input type, got {type!r}; use iinfo "
                            "for integer types")
        self.dtype = _FLOATS[type]
        if type == _C.dtype.bfloat16:  # numpy has no bfloat16: 8 exponent bits as float32, 8 of mantissa
            self.bits, self.eps, self.max, self.tiny = 16, 2.0**-7, float.fromhex("0x1.fep127"), 2.0**-126
        else:
            info = _np.finfo(self.dtype)
            self.bits, self.eps, self.max = info.bits, float(info.eps), float(info.max)
            self.tiny = float(info.smallest_normal)
        # The decimal resolution as PyTorch computes it: 10 ** -floor(-log10(eps)).
        self.resolution = 10.0 ** -_math.floor(-_math.log10(self.eps))
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer dtype: ``bits``, ``max``, ``min`` and ``dtype`` (its name). pylucid's
    integer dtype is int64 (``int32``, ``uint8``, ... are aliases of it), so this reports int64's."""

    def __init__(self, type):  # noqa: A002  (PyTorch's keyword)
        if type != _C.dtype.int64:
            raise TypeError(f"iinfo() requires an integer input type, got {type!r}; use finfo for "
                            "floating types")
        info = _np.iinfo(_np.int64)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), int(info.max), "int64"

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


_MATMUL_PRECISIONS = ("highest", "high", "medium")


_matmul_precision = "highest"


def set_float32_matmul_precision(precision):
    """Records ``precision`` ('highest', 'high' or 'medium'). pylucid always multiplies float32 in
    float32 (there are no TF32 or bfloat16-pass kernels), which is what 'highest' asks for; the
    other settings only allow a faster, less exact product, so they change no result here."""
    global _matmul_precision
    if precision not in _MATMUL_PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: precision must be one of {_MATMUL_PRECISIONS}, "
                         f"got {precision!r}")
    _matmul_precision = precision


def get_float32_matmul_precision():
    """The precision last given to :func:`set_float32_matmul_precision` ('highest' by default)."""
    return _matmul_precision


_deterministic = [False, False]  # [mode, warn_only] as last set


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records the setting. Every pylucid kernel is deterministic (one result for one input and
    thread count), so there is nothing to switch and nothing ever raises for nondeterminism."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms: mode must be a bool, got {type(mode).__name__}")
    _deterministic[:] = [mode, bool(warn_only)]


def are_deterministic_algorithms_enabled():
    """The mode last given to :func:`use_deterministic_algorithms` (False by default, as PyTorch)."""
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled():
    """The ``warn_only`` last given to :func:`use_deterministic_algorithms`."""
    return _deterministic[1]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """Returns ``model`` unchanged (or, called without it, a decorator that does): pylucid has no
    graph compiler, its ops are compiled C++ kernels already. The keywords are accepted and ignored."""
    if model is None:
        return lambda m: m
    if not callable(model):
        raise _C.LucidError(f"compile: model must be callable, got {type(model).__name__}")
    return model


_KIND = {_C.dtype.bool: 0, _C.dtype.int64: 1}  # floating dtypes are kind 2


def can_cast(from_, to):
    """True when PyTorch's type promotion allows casting ``from_`` to ``to``: any cast that does
    not lower the kind (bool < integer < floating); within a kind every cast is allowed."""
    for d in (from_, to):
        if not isinstance(d, _C.dtype):
            raise TypeError(f"can_cast(): argument must be a dtype, not {type(d).__name__}")
    return _KIND.get(from_, 2) <= _KIND.get(to, 2)


# PyTorch's top-level forms of the functional layers (positional ``train``, no defaults).
def alpha_dropout(input, p, train):
    """``nn.functional.alpha_dropout(input, p, train)``."""
    from .nn import functional as F  # noqa: PLC0415
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input, p, train):
    """``nn.functional.feature_alpha_dropout(input, p, train)``."""
    from .nn import functional as F  # noqa: PLC0415
    return F.feature_alpha_dropout(input, p, train)
