"""``Adam`` and ``AdamW``: adaptive moment estimation, with L2 or decoupled weight decay."""
from .. import _C
from .._C import Tensor
from .._errors import InvalidValue as _InvalidValue
from .._tensor import zeros, zeros_like
from .optimizer import Optimizer, _scalar_dtype

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """PyTorch's ``torch.optim.Adam``. Per step ``t`` (per parameter), with ``g`` its gradient::

        g = g + weight_decay * p          (Adam)  |  p = p * (1 - lr * weight_decay)  (AdamW)
        m = m + (1 - beta1) * (g - m)
        v = beta2 * v + (1 - beta2) * g^2
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    (``amsgrad`` uses the running maximum of v.) State per parameter: ``step`` (a 0-d float32
    tensor, float64 under a float64 default dtype), ``exp_avg``, ``exp_avg_sq`` (and ``max_exp_avg_sq``). Each group is updated by one
    fused C++ call over all of its parameters.

    >>> import pylucid
    >>> w = pylucid.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Adam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> [round(x, 4) for x in w.tolist()]    # the first Adam step moves each weight by ~lr
    [0.9, -0.9]
    """

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        name = type(self).__name__
        if lr < 0:
            raise _InvalidValue(f"{name}: invalid learning rate: {lr}")
        if eps < 0:
            raise _InvalidValue(f"{name}: invalid epsilon value: {eps}")
        if len(betas) != 2 or not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0:
            raise _InvalidValue(f"{name}: invalid betas {betas!r}: both must be in [0, 1)")
        if weight_decay < 0:
            raise _InvalidValue(f"{name}: invalid weight_decay value: {weight_decay}")
        # foreach / capturable / differentiable / fused choose PyTorch's kernels, not the math: they
        # are kept in the groups (print(optimizer) and state_dict() show them) and change nothing.
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": bool(decoupled_weight_decay) or self._decoupled}
        super().__init__(params, defaults)

    def _init_state(self, p, amsgrad, fused=False):
        s = self.state[p]
        s["step"] = zeros((), dtype=_scalar_dtype(bool(fused)))
        s["exp_avg"] = zeros_like(p)
        s["exp_avg_sq"] = zeros_like(p)
        if amsgrad:
            s["max_exp_avg_sq"] = zeros_like(p)
        return s

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        state = self.state
        for group in self.param_groups:
            params = group["params"]
            amsgrad = bool(group["amsgrad"])
            grads: list[Tensor | None] = []
            exp_avgs: list[Tensor | None] = []
            exp_avg_sqs: list[Tensor | None] = []
            max_sqs: list[Tensor | None] = []
            steps: list[Tensor | None] = []
            for p in params:
                g = p.grad
                grads.append(g)
                s = state.get(p)
                if not s:
                    if g is None:
                        exp_avgs.append(None)
                        exp_avg_sqs.append(None)
                        max_sqs.append(None)
                        steps.append(None)
                        continue
                    s = self._init_state(p, amsgrad, group["fused"])
                elif amsgrad and "max_exp_avg_sq" not in s:
                    s["max_exp_avg_sq"] = zeros_like(p)  # amsgrad switched on after some steps
                exp_avgs.append(s.get("exp_avg"))
                exp_avg_sqs.append(s.get("exp_avg_sq"))
                max_sqs.append(s.get("max_exp_avg_sq"))
                steps.append(s.get("step"))
            beta1, beta2 = group["betas"]
            _C._adam_(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, float(group["lr"]), float(beta1),
                      float(beta2), float(group["eps"]), float(group["weight_decay"]), amsgrad,
                      bool(group["maximize"]), bool(group.get("decoupled_weight_decay", self._decoupled)))
        return loss


class AdamW(Adam):
    """``Adam`` with decoupled weight decay (Loshchilov & Hutter): before the Adam update,
    ``p = p * (1 - lr * weight_decay)``; the gradient is not modified. Default weight decay
    ``1e-2``, as PyTorch's ``AdamW``."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused)
