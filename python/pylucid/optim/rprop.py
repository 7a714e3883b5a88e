"""``Rprop``: resilient backpropagation, PyTorch's ``torch.optim.Rprop`` (full-batch training of
small models). Per parameter element, the step size grows by ``etaplus`` while the gradient keeps
its sign and shrinks by ``etaminus`` when it flips (that step is skipped), within
``step_sizes``; the parameter moves by ``-sign(grad) * step_size``."""
from .. import _C
from .._errors import InvalidValue as _InvalidValue
from .._tensor import full
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _scalar_dtype

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """PyTorch's ``torch.optim.Rprop`` (same update, same floats).

    >>> import pylucid
    >>> w = pylucid.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> [round(v, 4) for v in w.tolist()]
    [0.9, -1.9]
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        if lr < 0:
            raise _InvalidValue(f"Rprop: invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise _InvalidValue(f"Rprop: invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": tuple(etas), "step_sizes": tuple(step_sizes),
                                  "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})  # PyTorch's param-group keys

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                etaminus, etaplus = group["etas"]
                lo, hi = group["step_sizes"]
                for p, grad, state in self._with_grads(group):
                    if not state:
                        state["step"] = full((), 0.0, dtype=_scalar_dtype())
                        state["prev"] = full(tuple(p.shape), 0.0, dtype=p.dtype)
                        state["step_size"] = full(tuple(grad.shape), float(group["lr"]), dtype=grad.dtype)
                    state["step"].add_(1)
                    prev, step_size = state["prev"], state["step_size"]
                    sign = (grad * prev).sign()
                    factor = _C.where(sign > 0, full((), etaplus, dtype=sign.dtype),
                                      _C.where(sign < 0, full((), etaminus, dtype=sign.dtype),
                                               full((), 1.0, dtype=sign.dtype)))
                    step_size.mul_(factor).clamp_(lo, hi)
                    grad = grad.masked_fill(factor == etaminus, 0.0)
                    p.addcmul_(grad.sign(), step_size, value=-1)
                    prev.copy_(grad)
        return loss
