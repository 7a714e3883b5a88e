"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from .. import _C
from .._errors import InvalidValue as _InvalidValue
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's ``torch.optim.SGD``. Per step, with ``g`` the gradient (negated if maximize)::

        g = g + weight_decay * p
        buf = g                                   (first step)
        buf = momentum * buf + (1 - dampening) * g  (later steps)
        g = g + momentum * buf if nesterov else buf   (when momentum != 0)
        p = p - lr * g

    Each group is updated by one fused C++ call over all of its parameters.

    >>> import pylucid
    >>> w = pylucid.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w.tolist()
    [0.800000011920929, 1.600000023841858]
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0:
            raise _InvalidValue(f"SGD: invalid learning rate: {lr}")
        if momentum < 0:
            raise _InvalidValue(f"SGD: invalid momentum value: {momentum}")
        if weight_decay < 0:
            raise _InvalidValue(f"SGD: invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise _InvalidValue("SGD: nesterov momentum requires a momentum and zero dampening")
        # foreach / differentiable / fused choose PyTorch's kernels, not the math (kept, no effect).
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        state = self.state
        for group in self.param_groups:
            params = group["params"]
            grads = [p.grad for p in params]
            momentum = group["momentum"]
            if momentum != 0:
                bufs = [state[p].get("momentum_buffer") if p in state else None for p in params]
            else:
                bufs = [None] * len(params)
            new_bufs = _C._sgd_(params, grads, bufs, float(group["lr"]), float(momentum),
                                float(group["dampening"]), float(group["weight_decay"]),
                                bool(group["nesterov"]), bool(group["maximize"]))
            if momentum != 0:
                for p, g, old, new in zip(params, grads, bufs, new_bufs):
                    if g is not None and old is None:
                        state[p]["momentum_buffer"] = new
        return loss
