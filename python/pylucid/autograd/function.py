"""``pylucid.autograd.Function``: differentiable operations defined in Python, as in PyTorch.

Subclass with static ``forward`` and ``backward`` (and optionally ``setup_context``) and call
``MyFunction.apply(*args)``. The backward node is a C++ ``FunctionNode`` in the same engine as the
built-in nodes; when the backward is written with differentiable pylucid ops it can itself be
differentiated (``create_graph=True``).
"""
import functools

from .. import _C
from .._C import Tensor
from .._tensor_str import CUSTOM_NODE_NAMES

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


def _modified_message(t, expected):
    """PyTorch's message for a saved tensor changed in place since it was saved."""
    legacy = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
              "bool": "Bool"}[str(t.dtype).split(".")[-1]]
    which = ""
    if t.grad_fn is not None:
        which = ", which is output 0 of " + t.grad_fn.name().rstrip("0123456789").removesuffix("Backward") + ","
    return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[torch.{legacy}Tensor {list(t.shape)}]{which} is at version {t._version}; expected version "
            f"{expected} instead. Hint: enable anomaly detection to find the operation that failed to compute its "
            f"gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


class FunctionCtx:
    """The ``ctx`` handed to ``forward``/``setup_context`` and ``backward``: saves tensors and
    flags for the backward."""

    def __init__(self, fn_name):
        self._fn_name = fn_name
        self._saved: tuple = ()
        self._packed = False
        self._saved_versions: tuple = ()
        self._released = False
        # Each output has its own backward node; the engine frees a node's saved state right
        # after running it. The tensors are released once every node has run, and a node that
        # runs a second time (without retain_graph) is refused.
        self._released_nodes: set = set()
        self._current_node = None
        self._n_nodes = 1
        self._non_differentiable = set()
        self._dirty = set()
        self._materialize_grads = True
        self.needs_input_grad: tuple = ()

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for ``backward``; read them back as ``ctx.saved_tensors``.
        Modifying one in place before the backward makes ``saved_tensors`` raise."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise _C.DtypeMismatch(f"{self._fn_name}: save_for_backward can only save tensors or None, "
                                       f"but argument {i} is a {type(t).__name__}")
        from .graph import _pack  # noqa: PLC0415

        self._saved_versions = tuple(None if t is None else t._version for t in tensors)
        self._saved, self._packed = _pack(tuple(tensors))

    @property
    def saved_tensors(self):
        """The tensors given to ``save_for_backward``, as a tuple; raises if one was modified in
        place since, or if the graph was already freed by a backward without retain_graph."""
        if self._released or self._current_node in self._released_nodes:
            raise _C.LucidError(
                "Trying to backward through the graph a second time (or directly access saved tensors after they "
                "have already been freed). Saved intermediate values of the graph are freed when you call "
                ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved tensors after calling backward.")
        if self._packed:  # saved_tensors_hooks were active: unpack_hook gives the tensor back
            return tuple(None if p is None else p.get(self._fn_name) for p in self._saved)
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._version != v:
                raise _C.LucidError(_modified_message(t, v))
        return self._saved

    def mark_non_differentiable(self, *tensors):
        """Marks outputs that have no gradient: they get ``requires_grad=False`` and their
        gradient reaches ``backward`` as zeros (or None without materialized grads)."""
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        """Marks inputs that ``forward`` modified in place (and returns): their history is
        rebased onto this Function."""
        self._dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        """Whether gradients of outputs that got none arrive in ``backward`` as zeros (True,
        the default) or as None."""
        self._materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # pylucid's own ops written as Functions name their node as PyTorch's built-in op
        # (``_builtin_node = "LinalgCholeskyEx"`` prints ``LinalgCholeskyExBackward0``); a user's
        # Function prints as PyTorch prints one, ``torch.autograd.function.MyFnBackward``.
        builtin = attrs.get("_builtin_node")
        cls._backward_name = (builtin or name) + "Backward"
        if builtin is None:
            CUSTOM_NODE_NAMES.add(cls._backward_name)


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations.

    >>> import pylucid
    >>> class Cube(pylucid.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * x ** 2 * g
    >>> x = pylucid.tensor([2.0], requires_grad=True)
    >>> Cube.apply(x).backward()
    >>> x.grad.tolist()
    [12.0]
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Computes the outputs from the inputs (runs without recording a graph). With a
        ``setup_context`` staticmethod defined, ``forward`` takes no ``ctx``."""
        raise NotImplementedError("Function.forward must be overridden")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Returns one gradient (or None) per ``forward`` input, given one gradient per output."""
        raise NotImplementedError("Function.backward must be overridden")

    vjp = backward

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Optional: saves what ``backward`` needs from ``inputs`` and ``output`` (then ``forward``
        takes no ``ctx``)."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs ``forward`` and, when grad mode is on and a Tensor input requires grad, records a
        backward node that calls ``backward``."""
        name = cls.__name__
        grad_on = _C.is_grad_enabled()
        ctx = FunctionCtx(name)
        ctx.needs_input_grad = tuple(grad_on and isinstance(a, Tensor) and a.requires_grad for a in args)
        custom_setup = cls.setup_context is not Function.setup_context
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            if custom_setup:
                out = cls.forward(*args, **kwargs)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)
        if custom_setup:
            cls.setup_context(ctx, args, out)
        is_tuple = isinstance(out, tuple)
        outs = list(out) if is_tuple else [out]
        if not any(ctx.needs_input_grad):
            return out
        in_ids = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
        diff_idx, nondiff = [], []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                continue
            if id(o) in ctx._non_differentiable or not o.dtype.is_floating_point:
                nondiff.append(i)
                continue
            if id(o) in in_ids:
                if id(o) in ctx._dirty:
                    if o.requires_grad and o.grad_fn is None:
                        raise _C.LucidError("a leaf Variable that requires grad is being used in an in-place "
                                            "operation.")
                else:  # an input returned as is: the output is a new alias with its own history
                    outs[i] = _alias(o)
            diff_idx.append(i)
        for i in nondiff:
            if id(outs[i]) in in_ids:
                outs[i] = _alias(outs[i])
        meta = [(o.shape, o.dtype) for o in outs]
        in_meta: list = [(a.shape, a.dtype) if isinstance(a, Tensor) else None for a in args]

        def run_backward(output_nr, grad):
            ctx._current_node = output_nr
            grads = []
            for j, (shape, dtype) in enumerate(meta):
                if j == diff_idx[output_nr]:
                    grads.append(grad)
                elif ctx._materialize_grads and isinstance(outs[j], Tensor):
                    grads.append(_C._full(shape, 0.0, dtype))
                else:
                    grads.append(None)
            res = cls.backward(ctx, *grads)
            if not isinstance(res, tuple):
                res = (res,)
            if len(res) < len(args) or any(r is not None for r in res[len(args):]):
                raise _C.LucidError(f"{name}.backward: returned {len(res)} gradients, expected {len(args)} "
                                    f"(one per forward input)")
            checked: list = []
            for j, (a, r) in enumerate(zip(args, res)):
                if not ctx.needs_input_grad[j] or r is None:
                    checked.append(None)
                    continue
                if not isinstance(r, Tensor):
                    raise _C.DtypeMismatch(f"{name}.backward: gradient for input {j} is a {type(r).__name__}, "
                                           "expected a Tensor or None")
                shape, dtype = in_meta[j]
                if tuple(r.shape) != tuple(shape):
                    try:
                        r = _sum_to(r, shape)
                    except Exception:
                        raise _C.ShapeMismatch(f"{name}.backward: gradient for input {j} has shape {list(r.shape)}, "
                                               f"expected {list(shape)}") from None
                if r.dtype != dtype:
                    if not r.dtype.is_floating_point:
                        raise _C.DtypeMismatch(f"{name}.backward: gradient for input {j} has dtype {r.dtype!r}, "
                                               f"expected {dtype!r}")
                    r = r.to(dtype)
                checked.append(r)
            return checked

        def release():
            ctx._released_nodes.add(ctx._current_node)
            if len(ctx._released_nodes) < ctx._n_nodes:
                return
            ctx._released = True
            ctx._saved = ()

        inputs = [a if isinstance(a, Tensor) and ctx.needs_input_grad[i] else None for i, a in enumerate(args)]
        ctx._n_nodes = len(diff_idx)
        _C._make_function_nodes(cls._backward_name, inputs, [outs[i] for i in diff_idx], run_backward, release)
        return tuple(outs) if is_tuple else outs[0]


def _alias(t):
    """A new tensor sharing ``t``'s storage, to carry its own history (an input returned as is)."""
    return t.detach()


def _sum_to(r, shape):
    """Sums a broadcast gradient back to ``shape`` (raises when it does not broadcast)."""
    shape = tuple(shape)
    lead = r.ndim - len(shape)
    if lead < 0:
        raise ValueError
    if lead:
        r = r.sum(dim=tuple(range(lead)))
    dims = tuple(i for i, (a, b) in enumerate(zip(r.shape, shape)) if a != b)
    for i in dims:
        if shape[i] != 1:
            raise ValueError
    if dims:
        r = r.sum(dim=dims, keepdim=True)
    return r


def once_differentiable(fn):
    """Decorator for a ``backward`` that is not itself differentiable: it runs without recording a
    graph, so a double backward through it sees constant gradients."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            return fn(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
    return wrapper
