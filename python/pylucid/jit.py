"""``pylucid.jit``: PyTorch's ``torch.jit`` as PyTorch runs it with TorchScript disabled
(``PYTORCH_JIT=0``). pylucid has no TorchScript compiler: ``script`` and ``trace`` return the
function or module they are given, which then runs eagerly (the same numbers as the compiled
program), and the decorators (``ignore``, ``unused``, ``export``, ``script_method``) return what
they decorate. ``fork`` runs its call at once and returns a finished :class:`Future`.

What does not run: serialising a program. ``jit.save`` and ``jit.load`` raise
:class:`~pylucid.LucidError`; save the weights with ``pylucid.save(model.state_dict(), path)``.

>>> import pylucid
>>> @pylucid.jit.script
... def gelu_ish(x: pylucid.Tensor) -> pylucid.Tensor:
...     return x * pylucid.sigmoid(1.702 * x)
>>> round(gelu_ish(pylucid.tensor([1.0])).item(), 4), pylucid.jit.is_scripting()
(0.8458, False)
"""
import builtins as _builtins
import contextlib as _contextlib
import typing as _typing

from . import _C

__all__ = [
    "Attribute",
    "Error",
    "Final",
    "Future",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "enable_onednn_fusion",
    "export",
    "fork",
    "freeze",
    "fuser",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "isinstance",
    "load",
    "onednn_fusion_enabled",
    "optimize_for_inference",
    "optimized_execution",
    "save",
    "script",
    "script_if_tracing",
    "script_method",
    "set_fusion_strategy",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

Final = _typing.Final


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns ``obj`` (a function, a class or an ``nn.Module``) itself: it runs eagerly, as
    PyTorch's scripted code does under ``PYTORCH_JIT=0``."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """Returns ``func`` (a function or an ``nn.Module``) itself; ``example_inputs`` are not run."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Returns ``mod`` itself; ``inputs`` (a dict of method name to example inputs) are not run."""
    return mod


def ignore(drop=False, **kwargs):
    """``@jit.ignore`` or ``@jit.ignore(drop=True)``: the function is left as Python (which
    everything is here); returns it."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``@jit.unused``: returns ``fn`` (a function or a property)."""
    return fn


def export(fn):
    """``@jit.export``: returns ``fn``."""
    return fn


def script_method(fn):
    """``@jit.script_method`` of a ``ScriptModule``: returns ``fn``."""
    return fn


def script_if_tracing(fn):
    """Returns ``fn``: nothing is ever traced."""
    return fn


def is_scripting():
    """False: code always runs as Python."""
    return False


def is_tracing():
    """False: nothing is traced."""
    return False


def Attribute(value, type):
    """``jit.Attribute(value, type)`` declares an attribute's type for the compiler; eagerly it
    is ``value``."""
    return value


def annotate(the_type, the_value):
    """``jit.annotate(type, value)``: ``value``."""
    return the_value


def interface(obj):
    """``@jit.interface`` on a class: returns the class."""
    if not _builtins.isinstance(obj, type):
        raise _C.LucidError(f"jit.interface: interface must be applied to a class, got {type(obj).__name__}")
    return obj


class Future:
    """The result of :func:`fork`: already complete, ``wait()`` returns the value (or raises
    the exception the call raised)."""

    def __init__(self):
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []

    def done(self):
        """Whether a value (or an exception) was set."""
        return self._done

    def set_result(self, result):
        """Completes the future with ``result`` and runs the callbacks added with ``then``."""
        self._value, self._done = result, True
        for cb in self._callbacks:
            cb(self)

    def set_exception(self, error):
        """Completes the future with an exception that ``wait()`` raises."""
        self._error, self._done = error, True
        for cb in self._callbacks:
            cb(self)

    def wait(self):
        """The value (this future is always complete)."""
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def then(self, callback):
        """A new Future holding ``callback(self)``."""
        fut = Future()
        try:
            fut.set_result(callback(self))
        except Exception as e:  # noqa: BLE001 (the callback's error goes to the new future)
            fut.set_exception(e)
        return fut

    def add_done_callback(self, callback):
        """Runs ``callback(self)`` (now, as the future is complete)."""
        callback(self) if self._done else self._callbacks.append(callback)


def fork(func, *args, **kwargs):
    """Runs ``func(*args, **kwargs)`` now and returns a finished :class:`Future` with its value."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    """``future.wait()``: the value of a :func:`fork`."""
    if not _builtins.isinstance(future, Future):
        raise _C.DtypeMismatch(f"jit.wait: expected a Future (from jit.fork), got {type(future).__name__}")
    return future.wait()


def _module_base():
    from .nn import Module
    return Module


class ScriptModule(_module_base()):  # type: ignore[misc]
    """PyTorch's ``ScriptModule`` without the compiler: an ``nn.Module`` (no scripted or traced
    module is an instance, as under ``PYTORCH_JIT=0``)."""

    def __init__(self, arg=None):
        super().__init__()


class RecursiveScriptModule(ScriptModule):
    """The class of PyTorch's scripted modules; nothing is one here."""


class ScriptFunction:
    """The class of PyTorch's scripted functions; nothing is one here (``script(f)`` is ``f``)."""


_NO_PROGRAMS = ("pylucid has no TorchScript: a scripted or traced module is the Python module itself, and there is "
                "no program to serialise. Save its weights with pylucid.save(model.state_dict(), path) and restore "
                "them with model.load_state_dict(pylucid.load(path)).")


def save(m, f, _extra_files=None):
    """Raises :class:`~pylucid.LucidError`: there is no TorchScript program to save."""
    raise _C.LucidError("jit.save: " + _NO_PROGRAMS)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Raises :class:`~pylucid.LucidError`: TorchScript archives cannot be read."""
    raise _C.LucidError("jit.load: " + _NO_PROGRAMS)


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Raises :class:`~pylucid.LucidError`, as PyTorch does for a module that is not scripted."""
    raise _C.LucidError("jit.freeze: Freezing is currently only implemented for ScriptModules (pylucid has no "
                        "TorchScript); use the module as it is, in eval mode.")


def optimize_for_inference(mod, other_methods=None):
    """Raises :class:`~pylucid.LucidError`, as ``freeze``."""
    raise _C.LucidError("jit.optimize_for_inference: needs a ScriptModule (pylucid has no TorchScript); use the "
                        "module as it is, in eval mode.")


class Error(Exception):
    """PyTorch's ``torch.jit.Error`` (an Exception, not a RuntimeError): what a scripted ``raise``
    becomes; eager code raises its own exceptions, so nothing here raises it."""


def isinstance(obj, target_type):
    """``jit.isinstance``: ``isinstance`` that also checks the contents of containers against
    ``typing`` annotations (``List[int]``, ``Dict[str, Tensor]``, ``Tuple[int, float]``,
    ``Optional[T]``), as PyTorch does eagerly."""
    origin = _typing.get_origin(target_type)
    args = _typing.get_args(target_type)
    if origin is None:
        return _builtins.isinstance(obj, target_type)
    if origin is _typing.Union:
        return _builtins.any(isinstance(obj, a) for a in args)
    if origin is list:
        return _builtins.isinstance(obj, list) and _builtins.all(isinstance(v, args[0]) for v in obj)
    if origin is dict:
        return _builtins.isinstance(obj, dict) and _builtins.all(
            isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        if not _builtins.isinstance(obj, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return _builtins.all(isinstance(v, args[0]) for v in obj)
        return len(obj) == len(args) and _builtins.all(isinstance(v, a) for v, a in zip(obj, args))
    return _builtins.isinstance(obj, origin)


@_contextlib.contextmanager
def optimized_execution(should_optimize):
    """A context in which TorchScript's optimizer would be on or off: nothing to switch here."""
    yield


@_contextlib.contextmanager
def fuser(name):
    """A context choosing TorchScript's fuser (``"fuser0"``, ``"fuser1"``, ``"fuser2"``,
    ``"none"``): nothing is fused by a compiler here."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise _C.LucidError(f"jit.fuser: unrecognized fuser option (name: {name})")
    yield


_ONEDNN = [False]
_STRATEGY = [[("STATIC", 2), ("DYNAMIC", 10)]]


def enable_onednn_fusion(enabled):
    """Records whether oneDNN fusion is asked for (it has no effect without a compiler)."""
    _ONEDNN[0] = bool(enabled)


def onednn_fusion_enabled():
    """What :func:`enable_onednn_fusion` last recorded (False by default)."""
    return _ONEDNN[0]


def set_fusion_strategy(strategy):
    """Records the fusion strategy and returns the previous one, as PyTorch does (it has no
    effect without a compiler)."""
    for kind, depth in strategy:
        if kind not in ("STATIC", "DYNAMIC") or not _builtins.isinstance(depth, int):
            raise _C.LucidError(f"jit.set_fusion_strategy: expected ('STATIC' | 'DYNAMIC', int) pairs, got "
                                f"{(kind, depth)!r}")
    old, _STRATEGY[0] = _STRATEGY[0], list(strategy)
    return old
