"""PyTorch's ``out=`` keyword on the functions scripts call with it (``torch.add(x, y, out=r)``,
``torch.matmul(a, b, out=c)``, ``torch.cat(ts, out=buf)``, ...).

The result is computed as usual, then written into ``out``: copied (converted to ``out``'s
dtype) when the shapes agree, otherwise ``out`` is rebound to the result's shape, as PyTorch
resizes it. As in PyTorch, ``out=`` is refused when the result would need a gradient.

>>> import pylucid
>>> r = pylucid.empty(2)
>>> pylucid.add(pylucid.ones(2), 1, out=r) is r, r.tolist()
(True, [2.0, 2.0])
"""
import functools

from . import _C

# Top-level functions that take out= in PyTorch (only these get the wrapper: methods and
# operators keep their direct C++ path).
OUT_FUNCTIONS = (
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "maximum", "minimum",
    "neg", "negative", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "clamp", "clip",
    "log1p", "expm1", "erf", "floor", "ceil", "trunc", "round", "sign", "remainder", "fmod", "floor_divide",
    "sum", "mean", "prod", "logsumexp", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod",
    "matmul", "mm", "bmm", "dot", "outer", "addmm", "baddbmm", "cat", "concat", "concatenate", "stack", "where",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
    "square", "reciprocal", "log2", "log10", "tan", "atan", "atan2", "lerp", "addcmul", "addcdiv",
    "index_select", "gather", "masked_select", "take",
)


def write_out(op, out, result):
    """Writes ``result`` into the tensor ``out`` and returns ``out``."""
    if not isinstance(out, _C.Tensor):
        raise _C.DtypeMismatch(f"{op}: out must be a Tensor, got {type(out).__name__}")
    if _C.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise _C.LucidError(f"{op}(): functions with out=... arguments don't support automatic differentiation, "
                            "but one of the arguments requires grad")
    result = result.detach()
    if tuple(out.shape) == tuple(result.shape):
        out.copy_(result)
    else:
        out.data = result if result.dtype == out.dtype else result.to(out.dtype)
    return out


def _with_out(name, f):
    @functools.wraps(f)
    def g(*args, out=None, **kwargs):
        if out is None:
            return f(*args, **kwargs)
        return write_out(name, out, f(*args, **kwargs))
    g.__qualname__ = name
    if g.__module__ == "pylucid._C":
        g.__module__ = "pylucid"
    return g


def install(namespace, modules=()):
    """Replaces each function of ``OUT_FUNCTIONS`` present in ``namespace`` by its ``out=`` form,
    in ``namespace`` and in each of ``modules`` that exports the same function."""
    for name in OUT_FUNCTIONS:
        f = namespace.get(name)
        if f is None or name in ("add", "sub"):  # these two take out= themselves
            continue
        g = _with_out(name, f)
        namespace[name] = g
        for m in modules:
            if getattr(m, name, None) is f:
                setattr(m, name, g)
