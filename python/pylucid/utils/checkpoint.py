"""Activation checkpointing, as ``torch.utils.checkpoint``: ``checkpoint(fn, *args)`` runs ``fn``
without recording its graph (its activations are freed), and recomputes it, with the random
state of the first run, when the backward reaches it; the gradients are those of ``fn(*args)``.
``checkpoint_sequential`` applies it to the segments of a ``Sequential``.

>>> import pylucid
>>> from pylucid.utils.checkpoint import checkpoint
>>> lin = pylucid.nn.Linear(3, 3)
>>> x = pylucid.ones(2, 3, requires_grad=True)
>>> checkpoint(lambda t: lin(t).tanh(), x, use_reentrant=False).sum().backward()
>>> x.grad.shape, lin.weight.grad is not None
(pylucid.Size([2, 3]), True)
"""
from .. import _C
from .._C import Tensor
from .._random import get_rng_state, set_rng_state
from ..autograd.function import Function
from ..autograd.functional import backward as _backward
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run, preserve_rng, kwargs, *args):
        ctx.run, ctx.kwargs, ctx.args = run, kwargs, args
        ctx.rng = get_rng_state() if preserve_rng else None
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            out = run(*args, **kwargs)
        ctx.single = isinstance(out, Tensor)
        return out if ctx.single else tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        saved = iter(ctx.saved_tensors)
        args = [next(saved).detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                for a in ctx.args]
        if ctx.rng is not None:
            state = get_rng_state()
            set_rng_state(ctx.rng)
        try:
            with enable_grad():
                out = ctx.run(*args, **ctx.kwargs)
        finally:
            if ctx.rng is not None:
                set_rng_state(state)
        outs = [out] if isinstance(out, Tensor) else list(out)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            # Reaches the parameters fn used (their .grad accumulate) and the recomputed inputs.
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None, *[a.grad if isinstance(a, Tensor) else None for a in args])


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)``, recomputed in the backward instead of keeping its
    activations. Both of PyTorch's variants (``use_reentrant``) give the same gradients here;
    when no tensor argument requires grad the function simply runs with its graph recorded (so
    the parameters it uses still get gradients)."""
    if not callable(function):
        raise _C.DtypeMismatch(f"checkpoint: function must be callable, got {type(function).__name__}")
    if context_fn is not None:
        raise _C.LucidError("checkpoint: context_fn is not supported")
    needs = _C.is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args)
    if not needs:
        return function(*args, **kwargs)
    return _Checkpoint.apply(function, bool(preserve_rng_state), kwargs, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs the modules of ``functions`` (a Sequential or a list) in ``segments`` chunks, each
    checkpointed except the last."""
    fns = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(len(fns) // max(segments, 1), 1)

    def run(start, end):
        def f(x):
            for fn in fns[start:end]:
                x = fn(x)
            return x
        return f

    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end + 1), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(fns))(input)
