"""``gradcheck`` and ``gradgradcheck``: compare autograd's gradients with central finite differences.

For every differentiable float64 input x and every output y, the analytical Jacobian dy/dx (one
backward per output element) is compared with (f(x + eps) - f(x - eps)) / (2 eps), element by
element: |analytical - numerical| <= atol + rtol * |numerical|. ``gradgradcheck`` runs the same
check on the function inputs -> gradients (computed with ``create_graph=True``), which checks
that every backward is itself differentiable.
"""
import numpy as np

from .. import _C
from .._C import Tensor
from .grad_mode import enable_grad, no_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(_C.LucidError):
    """Raised by :func:`gradcheck` when analytical and numerical gradients disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(fn, inputs):
    outs = _as_tuple(fn(*inputs))
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numpy(t):
    return np.asarray(t.detach(), dtype=np.float64).reshape(-1).copy()


def _analytical(outs, diff, sizes, nondet_tol):
    """Per output, the (n_out, n_in_total) Jacobian from one backward per output element."""
    jac = []
    for o in outs:
        rows = np.zeros((o.numel(), sum(sizes)))
        if o.requires_grad:
            for k in range(o.numel()):
                seed = np.zeros(o.numel())
                seed[k] = 1.0
                g = _C._from_numpy(seed.reshape(o.shape).astype(np.float64))
                if o.dtype != g.dtype:
                    g = g.to(o.dtype)
                grads = _C._run_backward([o], [g], True, [t for _, t in diff])
                if k == 0:  # reentrancy: the same backward twice gives the same gradient
                    again = _C._run_backward([o], [g], True, [t for _, t in diff])
                    for a, b in zip(grads, again):
                        if a is not None and b is not None and np.max(np.abs(_numpy(a) - _numpy(b)), initial=0) > nondet_tol:
                            raise GradcheckError("gradcheck: backward is not reentrant: two backward calls with the "
                                                 f"same gradient differ by more than nondet_tol={nondet_tol}")
                col = 0
                for (_, t), gr in zip(diff, grads):
                    if gr is not None:
                        if tuple(gr.shape) != tuple(t.shape):
                            raise GradcheckError(f"gradcheck: gradient has shape {list(gr.shape)}, "
                                                 f"expected the input's shape {list(t.shape)}")
                        rows[k, col:col + t.numel()] = _numpy(gr)
                    col += t.numel()
        jac.append(rows)
    return jac


def _backward(o, u, diff):
    """The gradients of each checked input for output gradient u (a flat numpy array), as flat
    arrays (zeros where the input gets none)."""
    g = _C._from_numpy(np.asarray(u, dtype=np.float64).reshape(tuple(o.shape)))
    if o.dtype != g.dtype:
        g = g.to(o.dtype)
    grads = _C._run_backward([o], [g], True, [t for _, t in diff])
    return [np.zeros(t.numel()) if gr is None else _numpy(gr) for (_, t), gr in zip(diff, grads)]


def _check_linear_in_grad(outs, diff, atol, rtol):
    """check_batched_grad: backward(u1 + 2 u2) == backward(u1) + 2 backward(u2), or a message."""
    rng = np.random.default_rng(1)
    for oi, o in enumerate(outs):
        if not o.requires_grad:
            continue
        u1, u2 = rng.standard_normal(o.numel()), rng.standard_normal(o.numel())
        a, b, c = _backward(o, u1, diff), _backward(o, u2, diff), _backward(o, u1 + 2 * u2, diff)
        for (i, _), ga, gb, gc in zip(diff, a, b, c):
            want = ga + 2 * gb
            bad = np.abs(gc - want) > atol + rtol * np.abs(want)
            if bad.any():
                k = int(np.argmax(bad))
                return (f"batched grad check failed for output {oi} and input {i}: backward is not linear in the "
                        f"output gradient at element {k}: grad(u1 + 2 u2) = {float(gc[k])!r}, "
                        f"grad(u1) + 2 grad(u2) = {float(want[k])!r}")
    return None


def _fast_check(func, inputs, outs, diff, eps, atol, rtol, nondet_tol):
    """fast_mode: u^T J v, analytical against a directional central difference, per (output,
    input), with random u and v; a message on the first mismatch, else None."""
    rng = np.random.default_rng(0)
    us = [rng.standard_normal(o.numel()) for o in outs]
    vs = [rng.standard_normal(t.numel()) for _, t in diff]
    ana = []
    for o, u in zip(outs, us):
        if not o.requires_grad:
            ana.append([0.0] * len(diff))
            continue
        grads = _backward(o, u, diff)
        again = _backward(o, u, diff)
        for a, b in zip(grads, again):
            if np.max(np.abs(a - b), initial=0) > nondet_tol:
                return ("backward is not reentrant: two backward calls with the same gradient differ by more "
                        f"than nondet_tol={nondet_tol}")
        ana.append([float(g @ v) for g, v in zip(grads, vs)])
    with no_grad():
        for j, ((ii, t), v) in enumerate(zip(diff, vs)):
            arr = np.asarray(t.detach())
            orig = arr.copy()
            arr[...] = orig + eps * v.reshape(arr.shape)
            plus = [_numpy(o) for o in _outputs(func, inputs)]
            arr[...] = orig - eps * v.reshape(arr.shape)
            minus = [_numpy(o) for o in _outputs(func, inputs)]
            arr[...] = orig
            for oi, u in enumerate(us):
                num = float(u @ ((plus[oi] - minus[oi]) / (2 * eps)))
                a = ana[oi][j]
                if abs(a - num) > atol + rtol * abs(num) or np.isnan(a) != np.isnan(num):
                    return (f"Jacobian mismatch for output {oi} with respect to input {ii} (fast mode: u^T J v "
                            f"for random u, v):\nnumerical: {num!r}\nanalytical: {a!r}\n"
                            "rerun with fast_mode=False to find the element")
    return None


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Check ``func``'s gradients against central finite differences (PyTorch's keywords).

    Args:
        func: a function of ``inputs`` returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of arguments; Tensors with ``requires_grad=True`` are checked
            and must be float64 (finite differences in lower precision are noise).
        eps: the finite-difference step.
        atol, rtol: the tolerance, ``|analytical - numerical| <= atol + rtol * |numerical|``.
        raise_exception: raise :class:`GradcheckError` naming the input, the element and the
            numerical and analytical values on failure (default), or return False.
        nondet_tol: how far two backward calls with the same gradient may differ (0: they must
            match exactly).
        check_undefined_grad: also check that backward accepts a zero gradient for every output
            (the case PyTorch calls an undefined gradient) and returns zero or no gradients.
        check_grad_dtypes: check that each gradient has its input's dtype.
        check_batched_grad: pylucid has no vmap, so the batched gradient PyTorch checks is, here,
            what it stands for: backward is linear in the output gradient. For two random output
            gradients u1, u2 the gradient of u1 + 2 u2 must equal grad(u1) + 2 grad(u2).
        check_batched_forward_grad, check_forward_ad, masked: accepted for PyTorch compatibility;
            pylucid has no forward-mode gradients, so these checks are not run.
        check_backward_ad: run the backward check (default True).
        fast_mode: compare one random projection u^T J v per (output, input) instead of every
            element of J (one backward per output and two evaluations per input instead of one
            backward per output element and two evaluations per input element). A failure names
            the output and the input; rerun with fast_mode=False to find the element.

    Returns:
        True when every gradient matches.

    >>> import pylucid
    >>> x = pylucid.tensor([0.5, -1.0], dtype=pylucid.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t.exp()).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff:
        raise _C.LucidError("gradcheck: no input requires grad; pass tensors with requires_grad=True")
    for i, t in diff:
        if t.dtype != _C.dtype.float64:
            raise _C.DtypeMismatch(f"gradcheck: input {i} has dtype {t.dtype!r}; finite differences "
                                   "need float64 inputs (use .double())")

    def fail(msg):
        if raise_exception:
            raise GradcheckError("gradcheck: " + msg)
        return False

    if not check_backward_ad:
        return True
    outs = _outputs(func, inputs)
    sizes = [t.numel() for _, t in diff]
    try:
        analytical = None if fast_mode else _analytical(outs, diff, sizes, nondet_tol)
    except GradcheckError as e:
        return fail(str(e)[len("gradcheck: "):])

    if check_grad_dtypes:
        for o in outs:
            if o.requires_grad:
                gs = _C._run_backward([o], [_C._full(o.shape, 1.0, o.dtype)], True, [t for _, t in diff])
                for (i, t), g in zip(diff, gs):
                    if g is not None and g.dtype != t.dtype:
                        return fail(f"gradient for input {i} has dtype {g.dtype!r}, expected {t.dtype!r}")

    if check_undefined_grad:
        for oi, o in enumerate(outs):
            if not o.requires_grad:
                continue
            gs = _C._run_backward([o], [_C._full(o.shape, 0.0, o.dtype)], True, [t for _, t in diff])
            for (i, _), g in zip(diff, gs):
                if g is not None and np.any(_numpy(g) != 0):
                    return fail(f"backward of output {oi} with a zero gradient gave a non-zero gradient for "
                                f"input {i}")

    if check_batched_grad:
        msg = _check_linear_in_grad(outs, diff, atol, rtol)
        if msg:
            return fail(msg)
    if fast_mode:
        msg = _fast_check(func, inputs, outs, diff, eps, atol, rtol, nondet_tol)
        return fail(msg) if msg else True

    # Numerical Jacobian by central differences, perturbing each input element in place.
    assert analytical is not None  # computed above unless fast_mode, which has returned
    with no_grad():
        col = 0
        for (ii, t), n in zip(diff, sizes):
            arr = np.asarray(t.detach())
            for j, idx in enumerate(np.ndindex(*t.shape)):
                orig = arr[idx]
                arr[idx] = orig + eps
                plus = [_numpy(o) for o in _outputs(func, inputs)]
                arr[idx] = orig - eps
                minus = [_numpy(o) for o in _outputs(func, inputs)]
                arr[idx] = orig
                for oi in range(len(outs)):
                    num = (plus[oi] - minus[oi]) / (2 * eps)
                    ana = analytical[oi][:, col + j]
                    bad = np.abs(ana - num) > atol + rtol * np.abs(num)
                    bad |= np.isnan(ana) != np.isnan(num)
                    if bad.any():
                        k = int(np.argmax(bad))
                        return fail(
                            f"Jacobian mismatch for output {oi} with respect to input {ii} at element {idx} "
                            f"(output element {k}):\nnumerical: {float(num[k])!r}\nanalytical: {float(ana[k])!r}\n"
                            f"difference {abs(ana[k] - num[k]):.3g} > atol {atol} + rtol {rtol} * |numerical|")
            col += n
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: ``gradcheck`` of the map (inputs, grad_outputs) -> gradients of
    ``func``'s outputs with respect to the inputs (computed with ``create_graph=True``).

    Args:
        func, inputs: as for :func:`gradcheck` (float64 inputs that require grad).
        grad_outputs: the gradients of the outputs (one per floating output); random float64
            tensors that require grad when None.
        gen_non_contig_grad_outputs: build the random grad_outputs non-contiguous.
        eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad, check_grad_dtypes,
        fast_mode: as for :func:`gradcheck`.
        check_batched_grad: as for :func:`gradcheck`, on the gradient map.
        check_fwd_over_rev, masked: accepted for PyTorch compatibility, not run.
        check_rev_over_rev: run the check (default True).

    Returns:
        True when every second derivative matches.

    >>> import pylucid
    >>> x = pylucid.tensor([0.5, -1.0], dtype=pylucid.float64, requires_grad=True)
    >>> gradgradcheck(lambda t: (t * t.exp()).sum(), (x,))
    True
    """
    from .functional import grad as _grad

    inputs = _as_tuple(inputs)
    if not check_rev_over_rev:
        return True
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if grad_outputs is None:
        # Drawn as PyTorch draws them (uniform in [-1, 1) from the global generator), so a seeded
        # program's random stream after gradgradcheck is PyTorch's.
        from ..testing import make_tensor  # noqa: PLC0415

        grad_outputs = [make_tensor(tuple(o.shape), dtype=o.dtype if o.is_floating_point() else _C.dtype.float64,
                                    low=-1, high=1, requires_grad=True, noncontiguous=gen_non_contig_grad_outputs)
                        for o in _outputs(func, inputs) if o.requires_grad]
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def second(*args):
        ins, gos = args[:n_in], args[n_in:]
        with enable_grad():  # the finite differences run under no_grad; this needs the graph
            outs = [o for o in _outputs(func, ins) if o.requires_grad]  # PyTorch's differentiable outputs
            pairs = list(zip(outs, gos))
            if not pairs:
                return ()
            res = _grad([o for o, _ in pairs], [ins[i] for i in diff_idx], [g for _, g in pairs],
                        create_graph=True, allow_unused=True)
        # An input the outputs do not depend on gets a zero gradient (a fixed output count).
        return tuple(r if r is not None else _C._full(ins[i].shape, 0.0, ins[i].dtype)
                     for i, r in zip(diff_idx, res))

    return gradcheck(second, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode)
