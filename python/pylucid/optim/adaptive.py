"""The adaptive optimizers of ``torch.optim``: ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``,
``NAdam``, ``RAdam``. Each step is one fused C++ call per param group over all of its parameters
(``cpp/ops/optim_adaptive.h`` gives the formulas, which are PyTorch's, in PyTorch's order).
Constructor keywords, defaults, state names (``step``, ``square_avg``, ``exp_avg``, ...) and the
``state_dict`` layout are PyTorch's, so checkpoints and numbers carry over.

``foreach``, ``capturable`` and ``fused`` are accepted and recorded (there is one CPU
implementation); ``differentiable=True`` is refused.

>>> import pylucid
>>> w = pylucid.tensor([1.0, -1.0], requires_grad=True)
>>> opt = RMSprop([w], lr=0.01)
>>> (w * w).sum().backward(); opt.step()
>>> [round(v, 4) for v in w.tolist()]
[0.9, -0.9]
"""
from .. import _C
from .._errors import InvalidValue as _InvalidValue
from .._tensor import full_like, ones, zeros, zeros_like
from .optimizer import Optimizer, _scalar_dtype

__all__ = ["Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop"]




def _check(name, ok, what, value):
    if not ok:
        raise _InvalidValue(f"{name}: invalid {what}: {value}")


def _check_common(name, lr, eps, weight_decay, differentiable):
    _check(name, lr >= 0, "learning rate", lr)
    _check(name, eps >= 0, "epsilon value", eps)
    _check(name, weight_decay >= 0, "weight_decay value", weight_decay)
    if differentiable:
        raise _C.LucidError(f"{name}: differentiable=True is not supported")


def _check_betas(name, betas):
    betas = tuple(betas)
    _check(name, len(betas) == 2, "betas (expected two values)", betas)
    _check(name, 0.0 <= betas[0] < 1.0, "beta parameter at index 0", betas[0])
    _check(name, 0.0 <= betas[1] < 1.0, "beta parameter at index 1", betas[1])
    return betas


class _Adaptive(Optimizer):
    """Shared step loop: subclasses name their state tensors and call their fused op."""

    _state_names: tuple[str, ...] = ()

    def _new_state(self, p, group):
        s = {"step": zeros((), dtype=_scalar_dtype())}
        for n in self._state_names:
            if self._uses(n, group):
                s[n] = zeros_like(p)
        return s

    def _uses(self, name, group):
        return True

    def _lists(self, group):
        """Per param: grads, then one list per state name (None where absent), then steps."""
        state = self.state
        grads, steps = [], []
        lists: dict[str, list] = {n: [] for n in self._state_names}
        for p in group["params"]:
            g = p.grad
            grads.append(g)
            s = state.get(p)
            if not s and g is not None:
                s = state[p] = self._new_state(p, group)
            elif s and g is not None:
                for n in self._state_names:  # an option switched on after some steps
                    if n not in s and self._uses(n, group):
                        s[n] = zeros_like(p)
            s = s or {}
            for n in self._state_names:
                lists[n].append(s.get(n))
            steps.append(s.get("step"))
        return grads, lists, steps

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = self._run_closure(closure)
        for group in self.param_groups:
            grads, lists, steps = self._lists(group)
            self._update(group, grads, lists, steps)
        return loss

    def _update(self, group, grads, lists, steps):
        raise NotImplementedError


class RMSprop(_Adaptive):
    """PyTorch's ``torch.optim.RMSprop``: ``v = alpha v + (1 - alpha) g^2``, step ``g / (sqrt(v) + eps)``
    (``centered`` subtracts the squared running mean of ``g`` from ``v`` first), with optional
    momentum and weight decay. State: ``step``, ``square_avg`` (+ ``momentum_buffer``, ``grad_avg``)."""

    _state_names = ("square_avg", "momentum_buffer", "grad_avg")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_common("RMSprop", lr, eps, weight_decay, differentiable)
        _check("RMSprop", momentum >= 0, "momentum value", momentum)
        _check("RMSprop", alpha >= 0, "alpha value", alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _uses(self, name, group):
        if name == "momentum_buffer":
            return group["momentum"] > 0
        if name == "grad_avg":
            return bool(group["centered"])
        return True

    def _update(self, group, grads, lists, steps):
        _C._rmsprop_(group["params"], grads, lists["square_avg"], lists["grad_avg"], lists["momentum_buffer"], steps,
                     float(group["lr"]), float(group["alpha"]), float(group["eps"]), float(group["weight_decay"]),
                     float(group["momentum"]), bool(group["centered"]), bool(group["maximize"]))


class Adagrad(_Adaptive):
    """PyTorch's ``torch.optim.Adagrad``: ``s += g^2``, step ``clr g / (sqrt(s) + eps)`` with
    ``clr = lr / (1 + (step - 1) lr_decay)``. State (created for every parameter at construction,
    as PyTorch does): ``step``, ``sum`` (starting at ``initial_accumulator_value``)."""

    _state_names = ("sum",)

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_common("Adagrad", lr, eps, weight_decay, differentiable)
        _check("Adagrad", lr_decay >= 0, "lr_decay value", lr_decay)
        _check("Adagrad", initial_accumulator_value >= 0, "initial_accumulator_value value",
               initial_accumulator_value)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"step": zeros((), dtype=_scalar_dtype(bool(group["fused"]))),
                "sum": full_like(p, float(group["initial_accumulator_value"]))}

    def add_param_group(self, param_group):
        """Add a group; its parameters get their state at once (as at construction)."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        for p in group["params"]:
            if p not in self.state:
                self.state[p] = self._new_state(p, group)

    def _update(self, group, grads, lists, steps):
        _C._adagrad_(group["params"], grads, lists["sum"], steps, float(group["lr"]), float(group["lr_decay"]),
                     float(group["weight_decay"]), float(group["eps"]), bool(group["maximize"]))


class Adadelta(_Adaptive):
    """PyTorch's ``torch.optim.Adadelta``: ``v = rho v + (1 - rho) g^2``,
    ``d = sqrt(u + eps) / sqrt(v + eps) g``, ``u = rho u + (1 - rho) d^2``, ``p -= lr d``.
    State: ``step``, ``square_avg``, ``acc_delta``."""

    _state_names = ("square_avg", "acc_delta")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_common("Adadelta", lr, eps, weight_decay, differentiable)
        _check("Adadelta", 0.0 <= rho <= 1.0, "rho value", rho)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group, grads, lists, steps):
        _C._adadelta_(group["params"], grads, lists["square_avg"], lists["acc_delta"], steps, float(group["lr"]),
                      float(group["rho"]), float(group["eps"]), float(group["weight_decay"]),
                      bool(group["maximize"]))


class Adamax(_Adaptive):
    """PyTorch's ``torch.optim.Adamax`` (Adam with the infinity norm): ``m = lerp(m, g, 1 - b1)``,
    ``u = max(b2 u, |g| + eps)``, ``p -= lr / (1 - b1^t) m / u``. State: ``step``, ``exp_avg``,
    ``exp_inf``."""

    _state_names = ("exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_common("Adamax", lr, eps, weight_decay, differentiable)
        betas = _check_betas("Adamax", betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, group, grads, lists, steps):
        b1, b2 = group["betas"]
        _C._adamax_(group["params"], grads, lists["exp_avg"], lists["exp_inf"], steps, float(group["lr"]),
                    float(b1), float(b2), float(group["eps"]), float(group["weight_decay"]),
                    bool(group["maximize"]))


class NAdam(_Adaptive):
    """PyTorch's ``torch.optim.NAdam`` (Adam with Nesterov momentum and the momentum schedule
    ``mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay))``); ``decoupled_weight_decay`` gives NAdamW.
    State: ``step``, ``mu_product`` (float32, float64 under a float64 default dtype, as PyTorch),
    ``exp_avg``, ``exp_avg_sq``."""

    _state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_common("NAdam", lr, eps, weight_decay, differentiable)
        betas = _check_betas("NAdam", betas)
        _check("NAdam", momentum_decay >= 0, "momentum_decay value", momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _new_state(self, p, group):
        return {"step": zeros((), dtype=_scalar_dtype()), "mu_product": ones((), dtype=_scalar_dtype()),
                "exp_avg": zeros_like(p), "exp_avg_sq": zeros_like(p)}

    def _update(self, group, grads, lists, steps):
        b1, b2 = group["betas"]
        mu_products = [self.state[p]["mu_product"] if g is not None else None
                       for p, g in zip(group["params"], grads)]
        _C._nadam_(group["params"], grads, lists["exp_avg"], lists["exp_avg_sq"], mu_products, steps,
                   float(group["lr"]), float(b1), float(b2), float(group["eps"]), float(group["weight_decay"]),
                   float(group["momentum_decay"]), bool(group["decoupled_weight_decay"]), bool(group["maximize"]))


class RAdam(_Adaptive):
    """PyTorch's ``torch.optim.RAdam`` (rectified Adam: plain momentum steps until the variance
    estimate is tractable, ``rho_t > 5``); ``decoupled_weight_decay`` gives RAdamW. State:
    ``step``, ``exp_avg``, ``exp_avg_sq``."""

    _state_names = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_common("RAdam", lr, eps, weight_decay, differentiable)
        betas = _check_betas("RAdam", betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, group, grads, lists, steps):
        b1, b2 = group["betas"]
        _C._radam_(group["params"], grads, lists["exp_avg"], lists["exp_avg_sq"], steps, float(group["lr"]),
                   float(b1), float(b2), float(group["eps"]), float(group["weight_decay"]),
                   bool(group["decoupled_weight_decay"]), bool(group["maximize"]))
