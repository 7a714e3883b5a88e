"""``Adafactor``: PyTorch's ``torch.optim.Adafactor`` (Shazeer and Stern, 2018). For a matrix
parameter the second moment is kept factored, one running mean per row and one per column of
the squared gradient (memory ``O(rows + cols)``); vectors keep a full running mean. The step is
relative to the parameter's RMS (``alpha = max(eps2, rms(param)) * min(lr, 1/sqrt(step))``) and
the update's RMS is clipped to ``d``."""
from .. import _C
from .._compat_extra import finfo
from .._tensor import full, zeros_like
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _scalar_dtype

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """PyTorch's ``torch.optim.Adafactor`` (same update and state: ``step``, ``row_var`` and
    ``col_var`` for parameters with 2 or more dims, ``variance`` otherwise).

    >>> import pylucid
    >>> w = pylucid.ones(2, 2, requires_grad=True)
    >>> opt = Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['col_var', 'row_var', 'step']
    """

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, _C.Tensor):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            lr = lr.item()
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": tuple(eps), "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize})

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, wd, d = group["lr"], group["weight_decay"], group["d"]
                eps1, eps2 = group["eps"]
                for p, grad, state in self._with_grads(group):
                    if not state:
                        state["step"] = full((), 0.0, dtype=_scalar_dtype())
                        if grad.dim() > 1:
                            state["row_var"] = grad.new_zeros(list(grad.shape[:-1]) + [1])
                            state["col_var"] = grad.new_zeros(list(grad.shape[:-2]) + [1, grad.shape[-1]])
                        else:
                            state["variance"] = zeros_like(grad)
                    if eps1 is None:  # as PyTorch: the first parameter's dtype fixes it for the group
                        eps1 = finfo(p.dtype).eps
                    state["step"].add_(1)
                    step = state["step"].item()
                    one_minus_beta2_t = step ** group["beta2_decay"]
                    rho_t = min(lr, 1 / (step ** 0.5))
                    alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
                    if wd != 0:
                        p.mul_(1 - lr * wd)
                    if grad.dim() > 1:
                        row_var, col_var = state["row_var"], state["col_var"]
                        row_var.lerp_(grad.norm(dim=-1, keepdim=True).square().div(grad.shape[-1]), one_minus_beta2_t)
                        col_var.lerp_(grad.norm(dim=-2, keepdim=True).square().div(grad.shape[-2]), one_minus_beta2_t)
                        var_estimate = (row_var @ col_var).div(row_var.mean(dim=-2, keepdim=True).clamp(min=eps1))
                    else:
                        variance = state["variance"]
                        variance.lerp_(grad * grad, one_minus_beta2_t)
                        var_estimate = variance.clone()
                    update = var_estimate.clamp(min=eps1 * eps1).rsqrt() * grad
                    denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                    p.add_(update, alpha=-alpha / denom)
        return loss
