"""PyTorch's ``torch._foreach_*`` functions: one op applied to every tensor of a list (EMA and
optimizer code calls them: ``torch._foreach_mul_(ema, decay)``, ``torch._foreach_lerp_``).

Each is the per-tensor op in a loop, which is what PyTorch's CPU path runs, so the values are
the same. The second operand may be a number, a list of numbers, a list of tensors (one per
tensor) or, for the arithmetic ops, one tensor. Out-of-place forms return a tuple of new
tensors; in-place forms (trailing ``_``) update the tensors and return the list given.

>>> import pylucid
>>> ws = [pylucid.ones(2), pylucid.ones(3)]
>>> _ = pylucid._foreach_mul_(ws, 2.0)
>>> [w.tolist() for w in pylucid._foreach_add(ws, 1.0)]
[[3.0, 3.0], [3.0, 3.0, 3.0]]
"""
from . import _C
from ._C import Tensor

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign",
          "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")


def _tensors(op, tensors):
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors):
        raise _C.DtypeMismatch(f"_foreach_{op}: expected a list of Tensors, got {type(tensors).__name__}")
    return tensors


def _seconds(op, tensors, other):
    """The second operand for each tensor: one per tensor from a list, else ``other`` for all."""
    if isinstance(other, (list, tuple)):
        if len(other) != len(tensors):
            raise _C.ShapeMismatch(f"_foreach_{op}: Tensor lists must have the same number of tensors, got "
                                   f"{len(tensors)} and {len(other)}")
        return list(other)
    return [other] * len(tensors)


def _named(op, out_of_place, in_place, out_doc, in_doc):
    """Names and documents a ``_foreach_<op>`` / ``_foreach_<op>_`` pair."""
    out_of_place.__name__ = out_of_place.__qualname__ = f"_foreach_{op}"
    in_place.__name__ = in_place.__qualname__ = f"_foreach_{op}_"
    out_of_place.__doc__, in_place.__doc__ = out_doc, in_doc
    return out_of_place, in_place


def _binary(op):
    inplace_method = {"maximum": None, "minimum": None}.get(op, op + "_")

    def call(t, o, kwargs, inplace):
        if op in ("maximum", "minimum"):
            r = getattr(_C, op)(t, o if isinstance(o, Tensor) else _C._full((), float(o), t.dtype))
            return t.copy_(r) if inplace else r
        if op in ("clamp_min", "clamp_max"):
            return getattr(t, (op + "_") if inplace else op)(o)
        return getattr(t, inplace_method if inplace else op)(o, **kwargs)

    def out_of_place(self, other, **kwargs):
        if op == "pow" and isinstance(self, (int, float)):  # a number raised to each tensor
            return tuple(_C.pow(_C._full((), float(self), t.dtype), t) for t in _tensors(op, other))
        self = _tensors(op, self)
        return tuple(call(t, o, kwargs, False) for t, o in zip(self, _seconds(op, self, other)))

    def in_place(self, other, **kwargs):
        _tensors(op, self)
        for t, o in zip(self, _seconds(op, self, other)):
            call(t, o, kwargs, True)
        return self

    return _named(op, out_of_place, in_place,
                  f"``tuple(t.{op}(o) for t, o in ...)`` over a list (``o``: a number, list or tensor).",
                  f"``t.{op}_(o)`` for every tensor of the list; returns the list.")


def _unary(op):
    def out_of_place(self):
        return tuple(getattr(t, op)() for t in _tensors(op, self))

    def in_place(self):
        for t in _tensors(op, self):
            getattr(t, op + "_")()
        return self

    return _named(op, out_of_place, in_place, f"``tuple(t.{op}() for t in tensors)``.",
                  f"``t.{op}_()`` for every tensor of the list; returns the list.")


def _foreach_lerp(self, tensors1, weight):
    """``tuple(t.lerp(e, w) ...)``: ``weight`` a number, a list of numbers or of tensors."""
    self = _tensors("lerp", self)
    return tuple(t.lerp(e, w) for t, e, w in zip(self, _seconds("lerp", self, tensors1),
                                                 _seconds("lerp", self, weight)))


def _foreach_lerp_(self, tensors1, weight):
    """``t.lerp_(e, w)`` for every tensor of the list; returns the list."""
    _tensors("lerp", self)
    for t, e, w in zip(self, _seconds("lerp", self, tensors1), _seconds("lerp", self, weight)):
        t.lerp_(e, w)
    return self


def _pointwise(op):
    def values(self, value):
        if isinstance(value, Tensor) and value.dim() == 1:
            value = value.tolist()
        return _seconds(op, self, value)

    def out_of_place(self, tensor1, tensor2, value=1):
        self = _tensors(op, self)
        return tuple(getattr(t, op)(a, b, value=v) for t, a, b, v in
                     zip(self, _seconds(op, self, tensor1), _seconds(op, self, tensor2), values(self, value)))

    def in_place(self, tensor1, tensor2, value=1):
        _tensors(op, self)
        for t, a, b, v in zip(self, _seconds(op, self, tensor1), _seconds(op, self, tensor2), values(self, value)):
            getattr(t, op + "_")(a, b, value=v)
        return self

    return _named(op, out_of_place, in_place,
                  f"``tuple(t.{op}(a, b, value=v) ...)`` over lists (``value``: a number or one per tensor).",
                  f"``t.{op}_(a, b, value=v)`` for every tensor of the list; returns the list.")


def _foreach_norm(self, ord=2, dtype=None):  # noqa: A002
    """``tuple(linalg.vector_norm(t, ord) for t in tensors)`` (0-d tensors)."""
    from .linalg import vector_norm  # noqa: PLC0415
    return tuple(vector_norm(t, ord, dtype=dtype) for t in _tensors("norm", self))


def _foreach_max(self):
    """``tuple(t.max() for t in tensors)``."""
    return tuple(t.max() for t in _tensors("max", self))


def _foreach_clone(self):
    """``tuple(t.clone() for t in tensors)``."""
    return tuple(t.clone() for t in _tensors("clone", self))


def _foreach_zero_(self):
    """``t.zero_()`` for every tensor of the list; returns the list."""
    for t in _tensors("zero", self):
        t.zero_()
    return self


def _foreach_copy_(self, src, non_blocking=False):
    """``t.copy_(s)`` for every pair of the lists; returns the first list."""
    for t, s in zip(_tensors("copy", self), _seconds("copy", self, _tensors("copy", src))):
        t.copy_(s)
    return self


def functions():
    """name -> function for every ``_foreach_*`` defined here."""
    out = {f.__name__: f for f in (_foreach_lerp, _foreach_lerp_, _foreach_norm, _foreach_max, _foreach_clone,
                                   _foreach_zero_, _foreach_copy_)}
    for make, names in ((_binary, _BINARY), (_unary, _UNARY), (_pointwise, ("addcmul", "addcdiv"))):
        for op in names:
            for f in make(op):
                out[f.__name__] = f
    return out
