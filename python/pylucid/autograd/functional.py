"""``pylucid.autograd.grad``: gradients of outputs with respect to chosen inputs."""
from .. import _C
from .._C import Tensor

__all__ = ["grad", "backward"]


def _seq(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _default_grads(outputs, grad_outputs, op):
    grads = _seq(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise _C.ShapeMismatch(f"{op}: got {len(grads)} grad_outputs for {len(outputs)} outputs")
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if not isinstance(o, Tensor):
            raise _C.DtypeMismatch(f"{op}: output {i} is a {type(o).__name__}, expected a Tensor")
        if g is None:
            if o.numel() != 1:
                raise _C.ShapeMismatch(f"{op}: grad can be implicitly created only for scalar outputs; "
                                       f"output {i} has shape {list(o.shape)} (pass grad_outputs=)")
            g = _C._full(o.shape, 1.0, o.dtype)
        out.append(g)
    return out


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned as a tuple (``.grad`` of
    the leaves is left untouched).

    >>> import pylucid
    >>> x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = pylucid.autograd.grad((x * x).sum(), x)
    >>> g.tolist()
    [2.0, 4.0]
    """
    if create_graph:
        raise _C.LucidError("grad: create_graph=True (higher-order gradients) is not supported")
    outputs, inputs = _seq(outputs), _seq(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"grad: input {i} is a {type(t).__name__}, expected a Tensor")
    grads = _default_grads(outputs, grad_outputs, "grad")
    res = _C._run_backward(outputs, grads, bool(retain_graph), inputs)
    for i, r in enumerate(res):
        if r is None and not allow_unused:
            raise _C.LucidError(f"grad: input {i} was not used in the graph of the outputs "
                                "(pass allow_unused=True to get None for it)")
    return tuple(res)


def backward(tensors, grad_tensors=None, retain_graph=None):
    """Accumulate gradients of several outputs at once into the leaves' ``.grad``."""
    tensors = _seq(tensors)
    grads = _default_grads(tensors, grad_tensors, "backward")
    _C._run_backward(tensors, grads, bool(retain_graph), [])
