"""``LBFGS``: limited-memory BFGS with an optional strong-Wolfe line search, PyTorch's
``torch.optim.LBFGS`` (after minFunc and torch7's ``optim.lbfgs``).

``step(closure)`` runs up to ``max_iter`` iterations, calling ``closure()`` (which must zero the
gradients, compute the loss, call ``backward()`` and return the loss) whenever it needs the loss
and gradient at a new point. All parameters are treated as one flat vector; the state (search
direction, curvature pairs, step) is kept in ``state[first parameter]`` as PyTorch does, so
``state_dict()`` has the same keys (``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``,
``prev_flat_grad``, ``prev_loss``, ``al``, ``n_iter``, ``func_evals``).

Scalars (``t``, ``ro``, ``H_diag``, ...) are 0-d tensors of the parameters' dtype, as in
PyTorch, so the iterates agree with PyTorch's to rounding.

>>> import pylucid
>>> x = pylucid.tensor([1.5, -0.5], requires_grad=True)
>>> opt = LBFGS([x], line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad()
...     loss = ((x - pylucid.tensor([1.0, 2.0])) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure)
>>> [round(v, 4) for v in x.tolist()]
[1.0, 2.0]
"""
from typing import Any

from .. import _C
from .._C import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from .optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
    ``bounds`` (default: the interval between x1 and x2); the interval's midpoint when the cubic
    has no real minimiser."""
    if bounds is None:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    else:
        lo, hi = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 ** 2 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = disc.sqrt() if isinstance(disc, Tensor) else disc ** 0.5
    if x1 <= x2:
        m = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        m = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(m, lo), hi)


def _clone(g):
    return g.clone()


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along ``d`` from the current point (loss ``f``, gradient ``g``, slope
    ``gtd``) for a step ``t`` meeting the strong Wolfe conditions: bracket, then zoom by cubic
    interpolation. Returns ``(f_new, g_new, t, evaluations)``."""
    d_norm = d.abs().max()
    g = _clone(g)
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = g_new.dot(d)

    # Bracketing: grow the step until an interval is known to hold an acceptable point.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    bracket: list = []
    bracket_f: list = []
    bracket_g: list = []
    bracket_gtd: list = []
    while it < max_ls:
        if f_new > (f + c1 * t * gtd) or (it > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, _clone(g_new)], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, _clone(g_new)], [gtd_prev, gtd_new]
            break
        lo_step, hi_step = t + 0.01 * (t - t_prev), t * 10
        t_old = t
        t = _cubic_min(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo_step, hi_step))
        t_prev, f_prev, g_prev, gtd_prev = t_old, f_new, _clone(g_new), gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
    if it == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket until its low end satisfies the conditions.
    insufficient = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_min(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        b_hi, b_lo = max(bracket), min(bracket)
        eps = 0.1 * (b_hi - b_lo)
        if min(b_hi - t, t - b_lo) < eps:
            # Too close to an end: after a second such step (or at the end itself), move a
            # tenth of the bracket inside.
            if insufficient or t >= b_hi or t <= b_lo:
                t = b_hi - eps if abs(t - b_hi) < abs(t - b_lo) else b_lo + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = _clone(g_new), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = _clone(g_new), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """PyTorch's ``torch.optim.LBFGS(params, lr=1, max_iter=20, max_eval=None,
    tolerance_grad=1e-7, tolerance_change=1e-9, history_size=100, line_search_fn=None)``.

    One parameter group only. ``max_eval`` defaults to ``max_iter * 5 // 4``. With
    ``line_search_fn=None`` each iteration moves by ``lr`` along the quasi-Newton direction
    (the first by ``min(1, 1/|g|_1) * lr``); with ``"strong_wolfe"`` a line search picks the step.
    ``step(closure)`` returns the loss of the first ``closure()`` call.
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("LBFGS: Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"LBFGS: Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise _C.LucidError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, got {line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # ---- the parameters as one flat vector ---------------------------------------------------

    def _flat_grad(self):
        parts = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1) for p in self._params]
        return _C.cat(parts, 0) if len(parts) > 1 else parts[0].clone()

    def _add_grad(self, step, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step)
            offset += n

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        g = self._flat_grad()
        for p, v in zip(self._params, x):
            p.copy_(v)
        return loss, g

    def step(self, closure):  # type: ignore[override]  # the closure is required, as in PyTorch
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` re-evaluates the model and
        returns the loss. Returns the loss at the starting point."""
        if closure is None or not callable(closure):
            raise _C.LucidError("LBFGS.step: a closure that re-evaluates the model and returns the loss is required")
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr = float(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        if line_search_fn not in (None, "strong_wolfe"):
            raise _C.LucidError(f"LBFGS: only 'strong_wolfe' is supported as line_search_fn, got {line_search_fn!r}")

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tol_grad:
            return orig_loss

        d: Any = state.get("d")
        t: Any = state.get("t")
        old_dirs: Any = state.get("old_dirs")
        old_stps: Any = state.get("old_stps")
        ro: Any = state.get("ro")
        H_diag: Any = state.get("H_diag")
        prev_flat_grad: Any = state.get("prev_flat_grad")
        prev_loss: Any = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # Direction: steepest descent first, then the two-loop recursion over the history.
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # Step length.
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tol_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda step, x0=x_init, dd=d: self._directional_evaluate(closure, x0, step, dd),
                    t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tol_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max() <= tol_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if (d * t).abs().max() <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    def _load_state_value(self, p, key, value, index):
        # LBFGS's state is global (flat vectors, lists of them, scalars), stored under the first
        # parameter: copied as saved, with floating tensors cast to the parameter's dtype.
        def load(v):
            if isinstance(v, Tensor):
                v = v.detach()
                return (v.to(p.dtype) if v.dtype.is_floating_point else v).contiguous().clone()
            if isinstance(v, list):
                return [load(e) for e in v]
            return v
        return load(value)
