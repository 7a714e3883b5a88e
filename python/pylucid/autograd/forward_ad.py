"""``torch.autograd.forward_ad`` for pylucid: dual tensors (a primal and a tangent) inside a
``dual_level``; ``unpack_dual(y).tangent`` is the directional derivative of ``y`` along the
tangents of the dual tensors it was computed from, ``J t``.

pylucid has no forward-mode engine: ``make_dual`` marks its tensor as a point the graph is
recorded from, and ``unpack_dual`` computes ``J t`` in reverse mode by the double-backward trick
(the vector-Jacobian product is linear in its vector ``u``, so ``J t`` is the gradient of
``u -> (u^T J) t``). The values are forward mode's; the cost is two backward passes per unpack.
Ops without a double backward raise there.

>>> import pylucid
>>> import pylucid.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(pylucid.tensor([1.0, 2.0]), pylucid.tensor([1.0, 0.0]))
...     y = x * x
...     fwAD.unpack_dual(y).tangent.tolist()
[2.0, 0.0]
"""
import collections

from .. import _C
from .grad_mode import enable_grad

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])

# One list of (dual tensor, tangent) pairs per open level, innermost last.
_levels: list = []


def enter_dual_level():
    """Opens a new dual level and returns its index (``dual_level`` does this for you)."""
    _levels.append([])
    return len(_levels) - 1


def exit_dual_level(*, level=None):
    """Closes the innermost dual level; its dual tensors become plain tensors again."""
    if not _levels:
        raise _C.LucidError("exit_dual_level: there is no forward AD level to exit")
    if level is not None and level != len(_levels) - 1:
        raise _C.LucidError("Trying to exit a forward AD level that was not the last one that was created. This is "
                            "not supported.")
    _levels.pop()


class dual_level:
    """Context manager for a dual level: dual tensors made inside it live until it exits.

    Also usable as a decorator."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def _level(level, op):
    if not _levels:
        raise _C.LucidError(f"{op}: A forward AD level must be entered to use forward AD "
                            "(use `with pylucid.autograd.forward_ad.dual_level():`)")
    level = len(_levels) - 1 if level is None else level
    if not 0 <= level < len(_levels):
        raise _C.LucidError(f"{op}: invalid forward AD level {level}")
    return _levels[level]


def make_dual(tensor, tangent, *, level=None):
    """A tensor with ``tensor``'s values carrying ``tangent`` (same shape) at the dual level: the
    derivative of everything computed from it along ``tangent`` comes back from ``unpack_dual``.
    ``tensor``'s own gradient (reverse mode) still flows through the result."""
    pairs = _level(level, "make_dual")
    for name, t in (("tensor", tensor), ("tangent", tangent)):
        if not isinstance(t, _C.Tensor):
            raise _C.DtypeMismatch(f"make_dual: {name} must be a Tensor, got {type(t).__name__}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise _C.ShapeMismatch(f"make_dual: Trying to set a forward gradient that has a different size than that "
                               f"of the original Tensor, this is not supported. Tensor is of size "
                               f"{list(tensor.shape)} while the given forward gradient is of size "
                               f"{list(tangent.shape)}.")
    if not tensor.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"make_dual: expected a floating tensor, got {tensor.dtype!r}")
    with enable_grad():
        dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach().requires_grad_(True)
    pairs.append((dual, tangent.to(tensor.dtype)))
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor``: the tangent is ``J t`` summed over the dual tensors of
    the level it was computed from (None when it depends on none of them)."""
    from .functional import grad

    pairs = _level(level, "unpack_dual") if _levels else []
    if not isinstance(tensor, _C.Tensor):
        raise _C.DtypeMismatch(f"unpack_dual: expected a Tensor, got {type(tensor).__name__}")
    for d, t in pairs:
        if d is tensor:
            return UnpackedDualTensor(tensor, t)
    if not pairs or not tensor.requires_grad or not tensor.dtype.is_floating_point:
        return UnpackedDualTensor(tensor, None)
    duals = [d for d, _ in pairs]
    with enable_grad():
        u = _C._full(tuple(tensor.shape), 0.0, tensor.dtype).requires_grad_(True)
        gs = grad(tensor, duals, u, create_graph=True, allow_unused=True)
        terms = [(g * t).sum() for g, (_, t) in zip(gs, pairs) if g is not None]
        if not terms:
            return UnpackedDualTensor(tensor, None)
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        keep = any(t.requires_grad for _, t in pairs)
        if not total.requires_grad:  # J t does not depend on u: y is affine in no dual's direction
            return UnpackedDualTensor(tensor, _C._full(tuple(tensor.shape), 0.0, tensor.dtype))
        (jt,) = grad(total, [u], retain_graph=True, create_graph=keep, allow_unused=True)
    if jt is None:
        jt = _C._full(tuple(tensor.shape), 0.0, tensor.dtype)
    return UnpackedDualTensor(tensor, jt if keep else jt.detach())
