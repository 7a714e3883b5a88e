"""``pylucid.autograd.functional``: ``grad``/``backward`` and the higher-level functional API of
PyTorch's ``torch.autograd.functional`` (``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp``,
``vhp``), all built on reverse mode (``create_graph=True`` where a second derivative is needed)."""
import numpy as _np

from .. import _C
from .._C import Tensor

__all__ = ["grad", "backward", "vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _seq(x):
    """A Tensor (or None) as a one-item list; any other iterable (a tuple, a list, a generator,
    ``dict.values()``) as the list of its items, as PyTorch accepts them."""
    if x is None or isinstance(x, Tensor) or not hasattr(x, "__iter__"):
        return [x]
    return list(x)


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
                raise _C.ShapeMismatch("grad can be implicitly created only for scalar outputs")
            g = _C._full(o.shape, 1.0, o.dtype)
        out.append(g)
    return out


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned as a tuple (``.grad`` of
    the leaves is left untouched). An input the outputs do not depend on gets None with
    ``allow_unused=True``, zeros with ``materialize_grads=True`` (which implies it), and is an
    error otherwise. ``only_inputs`` is accepted (deprecated in PyTorch, always True);
    ``is_grads_batched=True`` is refused (there is no vmap).

    >>> import pylucid
    >>> x = pylucid.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = pylucid.autograd.grad((x * x).sum(), x)
    >>> g.tolist()
    [2.0, 4.0]
    """
    outputs, inputs = _seq(outputs), _seq(inputs)
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    allow_unused = bool(allow_unused) or materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"grad: input {i} is a {type(t).__name__}, expected a Tensor")
    grads = _default_grads(outputs, grad_outputs, "grad")
    res = _C._run_backward(outputs, grads, bool(retain_graph), inputs, bool(create_graph))
    for i, r in enumerate(res):
        if r is None and not allow_unused:
            raise _C.LucidError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                                "Set allow_unused=True if this is the desired behavior.")
    if materialize_grads:
        from .._tensor import zeros_like
        res = [zeros_like(t) if r is None else r for t, r in zip(inputs, res)]
    return tuple(res)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad(is_grads_batched=True): one backward per row of the batched grad_outputs, stacked."""
    from .. import stack, zeros  # noqa: PLC0415

    if grad_outputs is None:
        raise _C.LucidError("grad: is_grads_batched=True needs grad_outputs (one batch of them per output)")
    grads = _seq(grad_outputs)
    if len(grads) != len(outputs):
        raise _C.ShapeMismatch(f"grad: got {len(grads)} grad_outputs for {len(outputs)} outputs")
    sizes = {int(g.shape[0]) for g in grads if isinstance(g, Tensor)}
    if len(sizes) != 1:
        raise _C.ShapeMismatch("grad: with is_grads_batched=True every grad_outputs tensor needs the same "
                               f"leading batch size, got {sorted(sizes)}")
    (n,) = sizes
    for o, g in zip(outputs, grads):
        if tuple(g.shape[1:]) != tuple(o.shape):
            raise _C.ShapeMismatch(f"grad: batched grad_outputs of shape {list(g.shape)} do not match output "
                                   f"shape {list(o.shape)} after the batch dim")
    keep = create_graph if retain_graph is None else retain_graph
    rows = [grad(outputs, inputs, [g[k] for g in grads], retain_graph=True if k < n - 1 else keep,
                 create_graph=create_graph, allow_unused=True) for k in range(n)]
    res: list = []
    for i, t in enumerate(inputs):
        col = [r[i] for r in rows]
        if any(c is None for c in col):
            if materialize_grads:  # NOTE: PyTorch materializes zeros_like(input), without the batch dim
                res.append(zeros(tuple(t.shape), dtype=t.dtype))
                continue
            if not allow_unused:
                raise _C.LucidError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                    "graph. Set allow_unused=True if this is the desired behavior.")
            res.append(None)
        else:
            res.append(stack(col, 0))
    return tuple(res)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of several outputs at once into the leaves' ``.grad`` (only into
    ``inputs`` when given). ``create_graph=True`` records the gradient computation, so ``.grad``
    can be differentiated again; ``retain_graph`` defaults to ``create_graph``."""
    from . import graph  # noqa: PLC0415

    if graph._POST["live"] and graph._pending() is None:
        with graph._accumulation_scope():
            return backward(tensors, grad_tensors, retain_graph, create_graph, inputs)
    tensors = _seq(tensors)
    grads = _default_grads(tensors, grad_tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        _C._run_backward(tensors, grads, bool(retain_graph), [], bool(create_graph))
        return
    inputs = _seq(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"backward: inputs[{i}] is a {type(t).__name__}, expected a Tensor")
    res = _C._run_backward(tensors, grads, bool(retain_graph), inputs, bool(create_graph))
    for t, g in zip(inputs, res):
        if g is not None:
            _C._accumulate_grad(t, g, bool(create_graph))


# ---- pylucid.autograd.functional: vjp, jvp, jacobian, hessian, hvp, vhp ----------------------

def _tuple_in(x, arg, fname):
    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, Tensor):
            raise _C.DtypeMismatch(f"{fname}: {arg} {i} is a {type(t).__name__}, expected a Tensor")
    return is_tuple, xs


def _prepare(inputs, create_graph):
    """Fresh leaves (or graph-keeping aliases) of the inputs that require grad."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _grad_or_zeros(outputs, inputs, grad_outputs, create_graph, strict, fname, what):
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    res: list = []
    if not pairs:
        res = [None] * len(inputs)
    else:
        res = list(grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs],
                        retain_graph=True, create_graph=create_graph, allow_unused=True))
    for i, r in enumerate(res):
        if r is None:
            if strict:
                raise _C.LucidError(f"{fname}: the output of the function is independent of input {i}, which "
                                    f"is not allowed in strict mode ({what})")
            res[i] = _C._full(inputs[i].shape, 0.0, inputs[i].dtype)
    return tuple(res)


def _check_v(v, outs, fname, name):
    if v is None:
        if len(outs) != 1 or outs[0].numel() != 1:
            raise _C.ShapeMismatch(f"{fname}: {name} can be None only when the function returns a single "
                                   f"element tensor, got shapes {[list(o.shape) for o in outs]}")
        return (_C._full(outs[0].shape, 1.0, outs[0].dtype),)
    _, vs = _tuple_in(v, name, fname)
    if len(vs) != len(outs):
        raise _C.ShapeMismatch(f"{fname}: {name} has {len(vs)} tensors, expected {len(outs)}")
    for i, (a, o) in enumerate(zip(vs, outs)):
        if tuple(a.shape) != tuple(o.shape):
            raise _C.ShapeMismatch(f"{fname}: {name} {i} has shape {list(a.shape)}, expected {list(o.shape)}")
    return vs


def _detach_all(ts, create_graph):
    return tuple(t if create_graph else t.detach() for t in ts)


def _pack(is_tuple, xs):
    return tuple(xs) if is_tuple else xs[0]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product of ``func`` at ``inputs``: returns ``(func(inputs), v^T J)``.

    >>> import pylucid
    >>> out, g = vjp(lambda x: x * x, pylucid.tensor([1.0, 2.0]), pylucid.tensor([1.0, 1.0]))
    >>> g.tolist()
    [2.0, 4.0]
    """
    is_in_tuple, ins = _tuple_in(inputs, "inputs", "vjp")
    with _C_enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        is_out_tuple, outs = _tuple_in(out, "output", "vjp")
        vs = _check_v(v, outs, "vjp", "v")
        res = _grad_or_zeros(outs, ins, vs, create_graph, strict, "vjp", "vjp")
    return _pack(is_out_tuple, _detach_all(outs, create_graph)), _pack(is_in_tuple, _detach_all(res, create_graph))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product of ``func`` at ``inputs``: returns ``(func(inputs), J v)``
    (computed with the double-backward trick: the vjp is linear in its vector, so J v is the
    gradient of u -> (u^T J) v)."""
    is_in_tuple, ins = _tuple_in(inputs, "inputs", "jvp")
    with _C_enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        is_out_tuple, outs = _tuple_in(out, "output", "jvp")
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise _C.ShapeMismatch("jvp: v can be None only when the input is a single element tensor")
            vs = (_C._full(ins[0].shape, 1.0, ins[0].dtype),)
        else:
            _, vs = _tuple_in(v, "v", "jvp")
            if len(vs) != len(ins) or any(tuple(a.shape) != tuple(b.shape) for a, b in zip(vs, ins)):
                raise _C.ShapeMismatch(f"jvp: v must match the inputs' shapes {[list(t.shape) for t in ins]}, "
                                       f"got {[list(t.shape) for t in vs]}")
        us = tuple(_C._full(o.shape, 0.0, o.dtype).requires_grad_(True) for o in outs)
        gu = _grad_or_zeros(outs, ins, us, True, strict, "jvp", "jvp")
        pairs = [(g, vv) for g, vv in zip(gu, vs) if g.requires_grad]
        got: list = [None] * len(us)
        if pairs:
            got = list(grad([g for g, _ in pairs], list(us), [vv for _, vv in pairs],
                            retain_graph=True, create_graph=create_graph, allow_unused=True))
        res = tuple(r if r is not None else _C._full(o.shape, 0.0, o.dtype) for r, o in zip(got, outs))
    return _pack(is_out_tuple, _detach_all(outs, create_graph)), _pack(is_out_tuple, _detach_all(res, create_graph))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for one input and one output a Tensor of shape
    ``output.shape + input.shape``; tuples of them (per output, then per input) otherwise.
    One backward per output element (``vectorize`` is accepted and changes nothing)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise _C.ShapeMismatch(f"jacobian: strategy must be 'reverse-mode' or 'forward-mode', got {strategy!r}")
    is_in_tuple, ins = _tuple_in(inputs, "inputs", "jacobian")
    with _C_enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        is_out_tuple, outs = _tuple_in(out, "output", "jacobian")
        jac = []
        for oi, o in enumerate(outs):
            rows: list = [[] for _ in ins]
            for k in range(o.numel()):
                if o.requires_grad:
                    seed = _np.zeros(o.numel(), dtype=_np.float64)
                    seed[k] = 1.0
                    g_out = _C._from_numpy(seed.reshape(tuple(o.shape))).to(o.dtype)
                    gs = grad(o, list(ins), g_out, retain_graph=True, create_graph=create_graph, allow_unused=True)
                else:
                    gs = [None] * len(ins)
                for i, (g, t) in enumerate(zip(gs, ins)):
                    if g is None:
                        if strict:
                            raise _C.LucidError(f"jacobian: output {oi} is independent of input {i}, which is "
                                                "not allowed in strict mode")
                        g = _C._full(t.shape, 0.0, t.dtype)
                    rows[i].append(g)
            per_in = []
            for i, t in enumerate(ins):
                if rows[i]:
                    from .. import stack
                    j = stack(rows[i], 0).reshape(tuple(o.shape) + tuple(t.shape))
                else:
                    j = _C._full(tuple(o.shape) + tuple(t.shape), 0.0, t.dtype)
                per_in.append(j if create_graph else j.detach())
            jac.append(_pack(is_in_tuple, per_in))
    return _pack(is_out_tuple, jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs``: a Tensor of shape
    ``input.shape + input.shape`` for one input, a tuple of tuples for several."""
    is_in_tuple, ins = _tuple_in(inputs, "inputs", "hessian")

    def grad_fn(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise _C.ShapeMismatch("hessian: the function must return a single element Tensor")
        return _grad_or_zeros((out,), xs, (_C._full(out.shape, 1.0, out.dtype),), True, strict, "hessian",
                              "hessian")

    res = jacobian(grad_fn, ins, create_graph=create_graph, strict=strict)
    if not is_in_tuple:
        return res[0][0]
    return tuple(tuple(r) for r in res)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for the scalar function ``func``: the vector-Hessian product."""
    is_in_tuple, ins = _tuple_in(inputs, "inputs", "vhp")
    with _C_enable_grad():
        ins = _prepare(ins, create_graph)
        out = func(*ins)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise _C.ShapeMismatch("vhp: the function must return a single element Tensor")
        if v is None:
            if len(ins) != 1 or ins[0].numel() != 1:
                raise _C.ShapeMismatch("vhp: v can be None only when the input is a single element tensor")
            vs = (_C._full(ins[0].shape, 1.0, ins[0].dtype),)
        else:
            _, vs = _tuple_in(v, "v", "vhp")
            if len(vs) != len(ins) or any(tuple(a.shape) != tuple(b.shape) for a, b in zip(vs, ins)):
                raise _C.ShapeMismatch(f"vhp: v must match the inputs' shapes {[list(t.shape) for t in ins]}")
        gs = _grad_or_zeros((out,), ins, (_C._full(out.shape, 1.0, out.dtype),), True, strict, "vhp", "vhp")
        pairs = [(g, vv) for g, vv in zip(gs, vs) if g.requires_grad]
        if pairs:
            dot = (pairs[0][0] * pairs[0][1]).sum()
            for g, vv in pairs[1:]:
                dot = dot + (g * vv).sum()
            res = _grad_or_zeros((dot,), ins, (_C._full(dot.shape, 1.0, dot.dtype),), create_graph, strict,
                                 "vhp", "vhp")
        else:
            res = tuple(_C._full(t.shape, 0.0, t.dtype) for t in ins)
    return (out if create_graph else out.detach()), _pack(is_in_tuple, _detach_all(res, create_graph))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for the scalar function ``func``: the Hessian-vector product (equal
    to ``vhp`` because the Hessian is symmetric)."""
    out, res = vhp(func, inputs, v, create_graph, strict)
    return out, res


class _C_enable_grad:
    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False
