"""``ASGD``: averaged stochastic gradient descent, PyTorch's ``torch.optim.ASGD``. Each step
decays the parameter by ``1 - lambd * eta`` and moves it by ``-eta * grad``; ``ax`` keeps the
running (Polyak) average of the iterates once ``step > t0``, and ``eta`` decays as
``lr / (1 + lambd * lr * step) ** alpha``."""
from .. import _C
from .._tensor import full, zeros_like
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _scalar_dtype

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """PyTorch's ``torch.optim.ASGD`` (same update, same state: ``step``, ``eta``, ``mu``, ``ax``).

    >>> import pylucid
    >>> w = pylucid.tensor([1.0], requires_grad=True)
    >>> opt = ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> [round(v, 5) for v in w.tolist()]
    [0.79999]
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, _C.Tensor):
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
            lr = lr.item()
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                                  "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, lambd, alpha, t0, wd = (group[k] for k in ("lr", "lambd", "alpha", "t0", "weight_decay"))
                for p, grad, state in self._with_grads(group):
                    if not state:
                        state["step"] = full((), 0.0, dtype=_scalar_dtype())
                        state["eta"] = full((), float(lr), dtype=_scalar_dtype())
                        state["mu"] = full((), 1.0, dtype=_scalar_dtype())
                        state["ax"] = zeros_like(p)
                    state["step"].add_(1)
                    if wd != 0:
                        grad = grad.add(p, alpha=wd)
                    eta = state["eta"].item()
                    p.mul_(1 - lambd * eta)
                    p.add_(grad, alpha=-eta)
                    ax = state["ax"]
                    if state["mu"].item() != 1:
                        ax.add_(p.sub(ax).mul_(state["mu"]))
                    else:
                        ax.copy_(p)
                    step = state["step"].item()
                    state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
                    state["mu"].fill_(1 / max(1, step - t0))
        return loss
