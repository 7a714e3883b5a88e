"""``torch.autograd.graph``: hooks on what the graph saves, and on gradient accumulation.

- ``saved_tensors_hooks(pack_hook, unpack_hook)``: while the context is active, every tensor a
  custom :class:`~pylucid.autograd.Function` saves with ``ctx.save_for_backward`` is passed
  through ``pack_hook`` and stored as whatever it returns; ``ctx.saved_tensors`` calls
  ``unpack_hook`` on it. The built-in ops save their tensors inside C++ nodes, which these hooks
  do not see (PyTorch applies them there too).
- ``save_on_cpu``: PyTorch's offloading hooks; every pylucid tensor is on the CPU already, so
  it packs a copy (or the tensor itself).
- ``disable_saved_tensors_hooks(message)``: registering hooks inside it raises ``message``.
- ``Tensor.register_post_accumulate_grad_hook(hook)``: ``hook(tensor)`` runs after a backward
  has accumulated the leaf's ``.grad``. NOTE: pylucid runs these hooks when the engine returns,
  in the order the leaves were reached, rather than interleaved with the rest of the backward;
  a hook that steps an optimizer (the usual use) sees the same gradients and parameters.

>>> import pylucid
>>> from pylucid.autograd.graph import saved_tensors_hooks
>>> class Square(pylucid.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, g):
...         (x,) = ctx.saved_tensors
...         return 2 * x * g
>>> seen = []
>>> x = pylucid.tensor([3.0], requires_grad=True)
>>> with saved_tensors_hooks(lambda t: seen.append("pack") or t, lambda t: seen.append("unpack") or t):
...     y = Square.apply(x)
>>> y.backward(); seen, x.grad
(['pack', 'unpack'], tensor([6.]))
"""
import threading
import weakref

from .. import _C
from .._C import Tensor
from .hooks import RemovableHandle

__all__ = ["Node", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]

Node = _C.Node

_state = threading.local()


def _stack():
    s = getattr(_state, "stack", None)
    if s is None:
        s = _state.stack = []
    return s


def _pack_hooks():
    """The innermost (pack_hook, unpack_hook) pair active on this thread, or None."""
    s = _stack()
    return s[-1] if s else None


class saved_tensors_hooks:
    """Context manager: tensors saved by custom Functions go through ``pack_hook`` when saved
    and ``unpack_hook`` when read back (see the module docstring)."""

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise _C.DtypeMismatch("saved_tensors_hooks: pack_hook and unpack_hook must be callable")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        msg = getattr(_state, "disabled", None)
        if msg is not None:
            raise _C.LucidError(msg)
        _stack().append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _stack().pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """PyTorch's hooks that move saved tensors to (pinned) CPU memory. pylucid's tensors live on
    the CPU, so the saved tensor is kept as it is."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """Context manager (or decorator) inside which entering ``saved_tensors_hooks`` raises
    ``LucidError(error_message)``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = getattr(_state, "disabled", None)
        _state.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _state.disabled = self._prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*a, **k)
        return wrapper


class _Packed:
    """A saved slot holding ``pack_hook``'s result and the matching ``unpack_hook``."""

    __slots__ = ("unpack", "value")

    def __init__(self, value, unpack):
        self.value, self.unpack = value, unpack

    def get(self, fn_name):
        t = self.unpack(self.value)
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"{fn_name}: unpack_hook should return a Tensor, but it returned "
                                   f"{type(t).__name__}")
        return t


def _pack(tensors):
    """``tensors`` with each Tensor replaced by a ``_Packed`` when hooks are active."""
    hooks = _pack_hooks()
    if hooks is None:
        return tensors, False
    pack, unpack = hooks
    return tuple(None if t is None else _Packed(pack(t), unpack) for t in tensors), True


# ---- post-accumulate-grad hooks -------------------------------------------------------------

from .._tensor import _POST_HOOKS as _POST  # noqa: E402


def _pending():
    return getattr(_state, "pending", None)


class _accumulation_scope:
    """Wraps one ``backward``: leaves whose gradient hook fired are queued, and their
    post-accumulate hooks run once the engine has accumulated every ``.grad``."""

    def __enter__(self):
        self._outer = _pending()
        _state.pending = [] if _POST["live"] else None
        return self

    def __exit__(self, exc_type, *exc):
        queued, _state.pending = _state.pending, self._outer
        if exc_type is None and queued:
            done = set()
            for key, ref, hook in queued:
                t = ref()
                if t is not None and key not in done:
                    done.add(key)
                    hook(t)
        return False


def _register_post_accumulate_grad_hook(self, hook):
    """Registers ``hook(tensor)``, run after each ``backward`` has accumulated this leaf's
    ``.grad`` (its return value is ignored and must be None). Only leaves take one. Returns a
    ``RemovableHandle``.

    >>> import pylucid
    >>> w = pylucid.tensor([1.0], requires_grad=True)
    >>> def sgd_step(p):
    ...     p.data.sub_(0.5 * p.grad)
    >>> h = w.register_post_accumulate_grad_hook(sgd_step)
    >>> (w * 2).sum().backward(); w
    tensor([0.], requires_grad=True)
    """
    if not callable(hook):
        raise _C.DtypeMismatch(f"register_post_accumulate_grad_hook: hook must be callable, got "
                               f"{type(hook).__name__}")
    if not self.requires_grad:
        raise _C.LucidError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise _C.LucidError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    ref = weakref.ref(self)
    key = object()

    def pre(grad):
        q = _pending()
        if q is not None:
            q.append((key, ref, _checked(hook)))

    hid = _C._add_tensor_hook(self, pre)
    _POST["live"] += 1
    removed: list = []

    def remove():
        if not removed:
            removed.append(True)
            _POST["live"] -= 1
            _C._remove_tensor_hook(self, hid)
    return RemovableHandle(remove)


def _checked(hook):
    def run(t):
        if hook(t) is not None:
            raise _C.LucidError("post accumulate grad hooks should return None")
    return run


setattr(Tensor, "register_post_accumulate_grad_hook", _register_post_accumulate_grad_hook)  # noqa: B010 (mypy: Tensor is a stub class)
