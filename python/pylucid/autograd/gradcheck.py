"""``gradcheck``: compare autograd's gradients with central finite differences.

For every differentiable float64 input x and every output y, the analytical Jacobian
dy/dx (one backward per output element) is compared with (f(x + eps) - f(x - eps)) / (2 eps),
element by element: |analytical - numerical| <= atol + rtol * |numerical|.
"""
import numpy as np

from .. import _C
from .._C import Tensor
from .grad_mode import no_grad

__all__ = ["gradcheck", "GradcheckError"]


class GradcheckError(_C.LucidError):
    """Raised by :func:`gradcheck` when analytical and numerical gradients disagree."""


def _outputs(fn, inputs):
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check ``fn``'s gradients against central finite differences.

    Args:
        fn: a function of ``inputs`` returning a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of arguments; Tensors with ``requires_grad=True`` are checked
            and must be float64 (finite differences in lower precision are noise).
        eps: the finite-difference step.
        atol, rtol: the tolerance, ``|analytical - numerical| <= atol + rtol * |numerical|``.
        raise_exception: raise :class:`GradcheckError` naming the input, the element and the
            difference on failure (default), or return False.

    Returns:
        True when every gradient matches.

    >>> import pylucid
    >>> x = pylucid.tensor([0.5, -1.0], dtype=pylucid.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t.exp()).sum(), (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
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

    outs = _outputs(fn, inputs)
    # Analytical Jacobian, one row per output element: J[k][i] has the shape of input i.
    analytical = []  # per output: array (n_out, n_in_total)
    sizes = [t.numel() for _, t in diff]
    for oi, o in enumerate(outs):
        rows = np.zeros((o.numel(), sum(sizes)))
        if o.requires_grad:
            for k in range(o.numel()):
                seed = np.zeros(o.numel())
                seed[k] = 1.0
                g = _C._from_numpy(seed.reshape(o.shape).astype(np.float64))
                if o.dtype != g.dtype:
                    g = g.to(o.dtype)
                grads = _C._run_backward([o], [g], True, [t for _, t in diff])
                col = 0
                for (_, t), gr in zip(diff, grads):
                    if gr is not None:
                        rows[k, col:col + t.numel()] = np.asarray(gr.detach(), dtype=np.float64).reshape(-1)
                    col += t.numel()
        analytical.append(rows)

    # Numerical Jacobian by central differences, perturbing each input element in place.
    with no_grad():
        col = 0
        for (ii, t), n in zip(diff, sizes):
            arr = np.asarray(t.detach())
            for j, idx in enumerate(np.ndindex(*t.shape)):
                orig = arr[idx]
                arr[idx] = orig + eps
                plus = [np.asarray(o.detach(), dtype=np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
                arr[idx] = orig - eps
                minus = [np.asarray(o.detach(), dtype=np.float64).reshape(-1).copy() for o in _outputs(fn, inputs)]
                arr[idx] = orig
                for oi in range(len(outs)):
                    num = (plus[oi] - minus[oi]) / (2 * eps)
                    ana = analytical[oi][:, col + j]
                    bad = np.abs(ana - num) > atol + rtol * np.abs(num)
                    bad |= np.isnan(ana) != np.isnan(num)
                    if bad.any():
                        k = int(np.argmax(bad))
                        return fail(
                            f"gradient mismatch for input {ii} at element {idx} (output {oi}, "
                            f"element {k}): analytical {ana[k]!r}, numerical {num[k]!r}, "
                            f"difference {abs(ana[k] - num[k]):.3g} > atol {atol} + rtol {rtol} * |numerical|")
            col += n
    return True
