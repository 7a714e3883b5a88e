"""``torch.func`` for pylucid, the transforms that reverse-mode autograd can give:
``functional_call``, ``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``,
``hessian``, ``vmap`` and ``stack_module_state``. Each differentiates with pylucid's engine under
``create_graph=True``, so they compose (``grad(grad(f))``, ``vmap(grad(f))`` for per-sample gradients). ``jacfwd`` computes the
same Jacobian as ``jacrev`` (row by row, in reverse mode). ``vmap`` gives PyTorch's results by
calling the function once per batch element and stacking: the same numbers, not a batched kernel.

>>> import pylucid
>>> from pylucid.func import grad
>>> grad(lambda x: (x ** 3).sum())(pylucid.tensor([2.0]))
tensor([12.])
>>> grad(grad(lambda x: (x ** 3).sum()))(pylucid.tensor([2.0]))
tensor([12.])
"""
import functools

from . import _C
from .nn.utils.stateless import _call

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "stack_module_state", "vjp",
           "vmap"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by the given
    tensors (a dict, or a tuple of dicts), the module itself left unchanged."""
    return _call(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights, strict=strict)


def stack_module_state(models):
    """``(params, buffers)``: dicts from each parameter and buffer name to the models' tensors of
    that name stacked along a new first dim (the ensembling recipe's input to ``vmap`` over
    ``functional_call``). Stacked parameters are new leaves that require grad when the models'
    do; the models must share a class and their training mode."""
    models = list(models)
    if not models:
        raise _C.LucidError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise _C.LucidError("stack_module_state: Expected all models to have the same training/eval mode.")
    if len({type(m) for m in models}) != 1:
        raise _C.LucidError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        per_model = [dict(n) for n in named]
        out = {}
        for k in per_model[0]:
            tensors = [d[k] for d in per_model]
            flags = {t.requires_grad for t in tensors}
            if len(flags) != 1:
                raise _C.LucidError(f"stack_module_state: Expected {k} from each model to have the same .requires_grad")
            out[k] = _C.stack([t.detach() for t in tensors])
            if flags == {True}:
                out[k].requires_grad_()
        return out

    return stacked(m.named_parameters() for m in models), stacked(m.named_buffers() for m in models)


def _argnums(argnums, n, op):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise _C.IndexOutOfRange(f"{op}: Got argnums={argnums}, but only {n} positional inputs")
    return nums


def _tree_leaves(x):
    if isinstance(x, _C.Tensor):
        return [x]
    if isinstance(x, dict):
        return [leaf for v in x.values() for leaf in _tree_leaves(v)]
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in _tree_leaves(v)]
    raise _C.DtypeMismatch(f"expected Tensors (or tuples, lists, dicts of them), got {type(x).__name__}")


def _tree_map(fn, x):
    if isinstance(x, _C.Tensor):
        return fn(x)
    if isinstance(x, dict):
        return {k: _tree_map(fn, v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_tree_map(fn, v) for v in x)
    return x


def _outer(args):
    """Whether any argument already takes part in autograd (an enclosing transform or a tensor
    that requires grad): then the results stay connected; otherwise they are detached, as
    ``torch.func`` returns plain tensors at the top level."""
    for a in args:
        try:
            if any(t.requires_grad for t in _tree_leaves(a)):
                return True
        except _C.DtypeMismatch:
            continue
    return False


def _finish(x, keep):
    return x if keep else _tree_map(lambda t: t.detach(), x)


def _prepare(args, nums):
    """Copies of the differentiated arguments that track gradients (connected to the originals,
    so an outer transform can differentiate through)."""
    args = list(args)
    for a in nums:
        args[a] = _tree_map(lambda t: t.view_as(t) if t.requires_grad else t.detach().requires_grad_(True), args[a])
    return args


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient, value)`` of ``func`` (which must return a scalar tensor,
    or ``(scalar, aux)`` with ``has_aux``) with respect to the ``argnums`` arguments."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from .autograd import grad as autograd_grad
        from .autograd.grad_mode import enable_grad

        nums = _argnums(argnums, len(args), "grad_and_value")
        keep = _outer(args)
        with enable_grad():
            args2 = _prepare(args, nums)
            out = func(*args2, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise _C.LucidError("grad_and_value(f)(*args): output of function f should be a tuple: "
                                        "(output, aux) if has_aux is True")
                out, aux = out
            if not isinstance(out, _C.Tensor) or out.numel() != 1:
                raise _C.LucidError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                    f"{type(out).__name__ if not isinstance(out, _C.Tensor) else list(out.shape)}")
            leaves = [leaf for a in nums for leaf in _tree_leaves(args2[a])]
            gs = autograd_grad(out, leaves, create_graph=True, allow_unused=True, materialize_grads=True)
        it = iter(gs)
        grads = tuple(_tree_map(lambda _t: next(it), args2[a]) for a in nums)
        g = _finish(grads[0] if isinstance(argnums, int) else grads, keep)
        out = _finish(out, keep)
        return (g, (out, aux)) if has_aux else (g, out)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of scalar-valued ``func`` with respect to its ``argnums`` arguments (a
    function of the same arguments); composes with itself for higher derivatives."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` where ``vjp_fn(cotangents)`` returns the vector-Jacobian
    products, one per primal (a tuple)."""
    from .autograd import grad as autograd_grad
    from .autograd.grad_mode import enable_grad

    keep = _outer(primals)
    with enable_grad():
        ins = _prepare(primals, range(len(primals)))
        out = func(*ins)
        aux = None
        if has_aux:
            out, aux = out
    outs = _tree_leaves(out)

    def vjp_fn(cotangents):
        cts = _tree_leaves(cotangents)
        leaves = [leaf for p in ins for leaf in _tree_leaves(p)]
        with enable_grad():
            gs = autograd_grad(outs, leaves, grad_outputs=cts, create_graph=True, allow_unused=True,
                               materialize_grads=True)
        it = iter(gs)
        return _finish(tuple(_tree_map(lambda _t: next(it), p) for p in ins), keep)
    out_ = _finish(out, keep)
    return (out_, vjp_fn, aux) if has_aux else (out_, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J tangents)``: the Jacobian-vector product (forward-mode's result),
    computed in reverse mode by the double-backward trick (the vjp is linear in its vector, so
    ``J t`` is the gradient of ``u -> (u^T J) t``); with ``has_aux``, ``func`` returns
    ``(output, aux)`` and so does the first result. Composes with the other transforms."""
    from .autograd import functional as _functional

    for name, x in (("primals", primals), ("tangents", tangents)):
        if not isinstance(x, tuple):
            raise _C.LucidError(f"jvp(f, primals, tangents): Expected {name} to be a tuple. E.g. it should be "
                                "valid to call f(*primals).")
    if len(primals) != len(tangents):
        raise _C.ShapeMismatch(f"jvp(f, primals, tangents): Expected primals and tangents to have the same "
                               f"length, got {len(primals)} and {len(tangents)}")
    keep = _outer(primals) or _outer(tangents)
    aux = []

    def f(*args):
        out = func(*args)
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise _C.LucidError("jvp(f, primals, tangents): output of function f should be a tuple: "
                                    "(output, aux) if has_aux is True")
            out, a = out
            aux.append(a)
        return out

    out, j = _functional.jvp(f, primals, tangents, create_graph=True, strict=strict)
    out, j = _finish(out, keep), _finish(j, keep)
    return (out, j, _finish(aux[0], keep)) if has_aux else (out, j)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to argument ``argnums`` (shape ``out.shape +
    arg.shape``), one reverse pass per output element. Arguments and outputs may be tensors or
    tuples, lists and dicts of them (a dict of parameters, as in ``jacrev(f)(params, x)``): the
    result has the output's structure, each leaf holding the argument's structure."""
    def wrapper(*args):
        from ._tensor import zeros
        from .autograd import grad as autograd_grad
        from .autograd.grad_mode import enable_grad

        nums = _argnums(argnums, len(args), "jacrev")
        keep = _outer(args)
        with enable_grad():
            args2 = _prepare(args, nums)
            out = func(*args2)
            aux = None
            if has_aux:
                out, aux = out
            leaves = [leaf for a in nums for leaf in _tree_leaves(args2[a])]
            per_out = []
            for o in _tree_leaves(out):
                flat = o.reshape(-1)
                rows: list = [[] for _ in leaves]
                for i in range(flat.numel()):
                    gs = autograd_grad(flat[i], leaves, create_graph=True, allow_unused=True,
                                       materialize_grads=True, retain_graph=True)
                    for r, g in zip(rows, gs):
                        r.append(g)
                jacs = iter([(_C.stack(r, 0) if r else zeros(0, *x.shape, dtype=x.dtype)).reshape(*o.shape, *x.shape)
                             for r, x in zip(rows, leaves)])
                per_arg = tuple(_tree_map(lambda _t: next(jacs), args2[a]) for a in nums)
                per_out.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        it = iter(per_out)
        r = next(it) if isinstance(out, _C.Tensor) else _tree_map(lambda _t: next(it), out)
        r = _finish(r, keep)
        return (r, aux) if has_aux else r
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The same Jacobian as :func:`jacrev` (pylucid has no forward mode; the values agree)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of scalar ``func``: ``jacrev(jacrev(func))``."""
    return jacrev(jacrev(func, argnums), argnums)


def _mapped_pairs(arg, spec, op):
    """(tensor, dim) for every tensor of ``arg`` that ``spec`` maps (None: not mapped; an int:
    every tensor in ``arg``; a tuple/list/dict: per element)."""
    if spec is None:
        return []
    if isinstance(spec, int) and not isinstance(spec, bool):
        if isinstance(arg, _C.Tensor):
            if not -arg.dim() <= spec < max(arg.dim(), 1) or arg.dim() == 0:
                raise ValueError(f"{op}: Got in_dim={spec} for an input but the input is of type Tensor with "
                                 f"{arg.dim()} dims; in_dim must lie in [-{arg.dim()}, {arg.dim()})")
            return [(arg, spec % arg.dim())]
        if isinstance(arg, (tuple, list)):
            return [p for a in arg for p in _mapped_pairs(a, spec, op)]
        if isinstance(arg, dict):
            return [p for a in arg.values() for p in _mapped_pairs(a, spec, op)]
        raise ValueError(f"{op}: Got in_dim={spec} for an input but the input is of type {type(arg).__name__}; "
                         "in_dim must be None for inputs that are not Tensors")
    if isinstance(spec, (tuple, list)) and isinstance(arg, (tuple, list)) and len(spec) == len(arg):
        return [p for a, d in zip(arg, spec) for p in _mapped_pairs(a, d, op)]
    if isinstance(spec, dict) and isinstance(arg, dict) and set(spec) == set(arg):
        return [p for k in arg for p in _mapped_pairs(arg[k], spec[k], op)]
    raise ValueError(f"{op}: in_dims is not compatible with the structure of the inputs (got {spec!r})")


def _select(arg, spec, i):
    if spec is None:
        return arg
    if isinstance(spec, int):
        return _tree_map(lambda t: t.select(spec, i), arg)
    if isinstance(spec, dict):
        return {k: _select(arg[k], spec[k], i) for k in arg}
    return type(arg)(_select(a, d, i) for a, d in zip(arg, spec))


def _stack_out(outs, spec, op):
    first = outs[0]
    if isinstance(first, _C.Tensor):
        if spec is None:
            return first
        return _C.stack(list(outs), spec % (first.dim() + 1))
    if isinstance(first, (tuple, list)):
        specs = spec if isinstance(spec, (tuple, list)) else [spec] * len(first)
        if len(specs) != len(first):
            raise ValueError(f"{op}: out_dims has {len(specs)} entries but the function returned {len(first)} outputs")
        return type(first)(_stack_out([o[j] for o in outs], specs[j], op) for j in range(len(first)))
    if isinstance(first, dict):
        return {k: _stack_out([o[k] for o in outs], spec[k] if isinstance(spec, dict) else spec, op) for k in first}
    raise ValueError(f"{op}: `{op}(func, ...)(<inputs>)`: func must only return Tensors, got type "
                     f"{type(first).__name__}. Did you mean to set out_dims= to None for output?")


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a batch dim of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    ``in_dims`` says which dim of each input is mapped (an int for all, or one entry per
    positional argument: an int, None for an argument passed whole, or a nested tuple/dict
    matching the argument); ``out_dims`` where the batch dim goes in each output. Outputs must be
    Tensors (or tuples/lists/dicts of them). pylucid calls ``func`` once per batch element and
    stacks the results, so the numbers are PyTorch's and gradients flow through as through any
    loop (``vmap(grad(f))`` gives per-sample gradients); it is not a batched kernel.
    ``randomness``: ``'different'`` (and ``'error'``, which pylucid cannot enforce) draws anew
    per element; ``'same'`` replays the generator state so every element sees the same draws.
    ``chunk_size`` is accepted and has no effect."""
    op = "vmap"
    if randomness not in ("error", "different", "same"):
        raise ValueError(f"{op}: Only allowed values for randomness are 'error', 'different', or 'same'. "
                         f"Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        specs = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if isinstance(in_dims, (tuple, list)) and len(specs) != len(args):
            raise ValueError(f"{op}(func, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure of {len(specs)} entries but inputs has "
                             f"{len(args)} positional arguments")
        pairs = [p for a, d in zip(args, specs) for p in _mapped_pairs(a, d, op)]
        if not pairs:
            raise ValueError(f"{op}(func, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor "
                             "mapped over (got in_dims that map nothing)")
        sizes = sorted({t.shape[d] for t, d in pairs})
        if len(sizes) != 1:
            raise ValueError(f"{op}: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{[t.shape[d] for t, d in pairs]} for the mapped dimension")
        from .random import get_rng_state, set_rng_state
        state = get_rng_state() if randomness == "same" else None
        outs = []
        for i in range(sizes[0]):
            if state is not None:
                set_rng_state(state)
            outs.append(func(*[_select(a, d, i) for a, d in zip(args, specs)], **kwargs))
        if not outs:
            raise ValueError(f"{op}: the mapped dimension has size 0; there is no element to call func on")
        return _stack_out(outs, out_dims, op)
    return wrapper
