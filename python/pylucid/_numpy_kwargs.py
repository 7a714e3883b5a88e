"""numpy's keyword names on the Python-defined functions and Tensor methods.

PyTorch's native functions and methods take ``axis`` for ``dim`` and ``keepdims`` for
``keepdim`` (``torch.cumprod(x, axis=0)``, ``x.any(axis=1, keepdims=True)``). The bound C++
functions get this from an overload tried last (bindings/keyword_aliases.cpp); :func:`install`
gives it to the functions written in Python that take ``dim`` or ``keepdim`` and not the numpy
names themselves, by renaming those keywords before the call.

>>> import pylucid
>>> pylucid.median(pylucid.tensor([[1.0, 3.0, 2.0]]), axis=1, keepdims=True).values.tolist()
[[2.0]]
"""
import functools
import inspect
import sys
import types

_ALIASES = {"axis": "dim", "keepdims": "keepdim"}
# Called on every shape query: a wrapper would cost them ~25% (size(axis=...) is not written).
_SKIP = {"size", "stride"}


def _takes_dim(f):
    f = inspect.unwrap(f)  # a wrapper's (*args, **kwargs) passes the keywords on
    code = getattr(f, "__code__", None)
    if code is None:
        return False
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return ("dim" in names or "keepdim" in names) and "axis" not in names and "keepdims" not in names


def _renamed(kwargs):
    return {(_ALIASES[k] if k in _ALIASES and _ALIASES[k] not in kwargs else k): v for k, v in kwargs.items()}


def _aliased(f):
    @functools.wraps(f)
    def g(*args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:
            kwargs = _renamed(kwargs)
        return f(*args, **kwargs)
    setattr(g, "_numpy_kwargs", True)
    setattr(g, "__signature__", inspect.signature(f))  # for stubs and help()
    return g


def install(namespace, classes=()):
    """Wraps every Python function of ``namespace`` (a module's globals) and of each class in
    ``classes`` that takes ``dim`` or ``keepdim``; one wrapper per function object, so a function
    bound under several names stays one object, and the module defining it exports the wrapper
    too (``pylucid.all is pylucid._tensor.all``)."""
    done = {}

    def wrap(f):
        if id(f) not in done:
            g = done[id(f)] = _aliased(f)
            home = sys.modules.get(getattr(f, "__module__", None) or "")
            for name in [n for n, v in vars(home).items() if v is f] if home is not None else ():
                setattr(home, name, g)
        return done[id(f)]

    def wanted(name, f):
        return isinstance(f, types.FunctionType) and not name.startswith("_") and name not in _SKIP and \
            not getattr(f, "_numpy_kwargs", False) and _takes_dim(f)

    for name, f in list(namespace.items()):
        if wanted(name, f):
            namespace[name] = wrap(f)
    for cls in classes:
        for name, f in list(vars(cls).items()):
            if wanted(name, f):
                setattr(cls, name, wrap(f))
