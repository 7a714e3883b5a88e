"""Learning-rate schedules (PyTorch's ``torch.optim.lr_scheduler`` API): call
``scheduler.step()`` once after each ``optimizer.step()``; it writes the new rate into every
param group's ``"lr"``.

- ``LambdaLR(opt, lr_lambda)``: ``lr = base_lr * lr_lambda(step)``.
- ``StepLR(opt, step_size, gamma=0.1)``: multiply by ``gamma`` every ``step_size`` steps.
- ``CosineAnnealingLR(opt, T_max, eta_min=0)``: half a cosine from ``base_lr`` down to ``eta_min``
  over ``T_max`` steps.
- ``get_cosine_schedule_with_warmup(opt, num_warmup_steps, num_training_steps, num_cycles=0.5)``:
  a ``LambdaLR`` rising linearly from 0 to ``base_lr`` over the warmup steps, then following a
  cosine down to 0 at ``num_training_steps`` (the schedule of the Hugging Face ``transformers``
  function of the same name). ``CosineWarmupLR`` is the same schedule as a class.

>>> import pylucid
>>> w = pylucid.zeros(1, requires_grad=True)
>>> opt = pylucid.optim.SGD([w], lr=1.0)
>>> sched = get_cosine_schedule_with_warmup(opt, num_warmup_steps=2, num_training_steps=6)
>>> lrs = []
>>> for _ in range(6):
...     lrs.append(round(opt.param_groups[0]["lr"], 3)); opt.step(); sched.step()
>>> lrs
[0.0, 0.5, 1.0, 0.854, 0.5, 0.146]
"""
import math

from .. import _C
from .optimizer import Optimizer

__all__ = [
    "CosineAnnealingLR",
    "CosineWarmupLR",
    "LRScheduler",
    "LambdaLR",
    "StepLR",
    "get_cosine_schedule_with_warmup",
]


class LRScheduler:
    """Base class: subclasses implement ``get_lr()`` (the rates for the current ``last_epoch``)."""

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise _C.DtypeMismatch(f"{type(self).__name__}: {type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise _C.LucidError(f"{type(self).__name__}: param 'initial_lr' is not specified in "
                                        f"param_groups[{i}] when resuming (last_epoch={last_epoch})")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self):
        """The rates for the current ``last_epoch``, one per param group; each subclass computes
        them by its schedule (``step()`` calls this and writes the result)."""
        raise _C.LucidError(f"{type(self).__name__}: get_lr() is not implemented")

    def get_last_lr(self):
        """The rates set by the last ``step()``, one per param group."""
        return self._last_lr

    def step(self):
        """Advance one step and write the new rates into the param groups."""
        self._step_count += 1
        self.last_epoch += 1
        values = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """Everything but the optimizer (and functions, which are rebuilt by the constructor)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer" and not callable(v)
                and k != "lr_lambdas"}

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()``."""
        self.__dict__.update(state_dict)


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(step)``; ``lr_lambda`` may be a list (one per param group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise _C.LucidError(f"LambdaLR: expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` steps."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if not isinstance(step_size, int) or step_size <= 0:
            raise _C.LucidError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]


class CosineAnnealingLR(LRScheduler):
    """``lr_t = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``, computed in
    PyTorch's recursive form (so it composes with other changes to the rate)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max <= 0:
            raise _C.LucidError(f"CosineAnnealingLR: T_max must be positive, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        t, T = self.last_epoch, self.T_max
        if t == 0:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:  # resumed: closed form
            return [self.eta_min + (base - self.eta_min) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (g["lr"] - self.eta_min) + self.eta_min for g in groups]


def _cosine_warmup_factor(step, num_warmup_steps, num_training_steps, num_cycles):
    if step < num_warmup_steps:
        return float(step) / float(max(1, num_warmup_steps))
    progress = float(step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))


class CosineWarmupLR(LRScheduler):
    """Linear warmup from 0 over ``num_warmup_steps``, then a cosine decay to 0 at
    ``num_training_steps`` (``num_cycles=0.5``: half a cosine). Equivalent to
    :func:`get_cosine_schedule_with_warmup`, with its settings in ``state_dict()``."""

    def __init__(self, optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5, last_epoch=-1):
        if num_warmup_steps < 0 or num_training_steps < 0:
            raise _C.LucidError(f"CosineWarmupLR: step counts must be non-negative, got "
                                f"num_warmup_steps={num_warmup_steps}, num_training_steps={num_training_steps}")
        self.num_warmup_steps = num_warmup_steps
        self.num_training_steps = num_training_steps
        self.num_cycles = num_cycles
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        f = _cosine_warmup_factor(self.last_epoch, self.num_warmup_steps, self.num_training_steps,
                                  self.num_cycles)
        return [base * f for base in self.base_lrs]


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5,
                                    last_epoch=-1):
    """A :class:`LambdaLR` with linear warmup then cosine decay (see the module docstring)."""
    if num_warmup_steps < 0 or num_training_steps < 0:
        raise _C.LucidError(f"get_cosine_schedule_with_warmup: step counts must be non-negative, got "
                            f"num_warmup_steps={num_warmup_steps}, num_training_steps={num_training_steps}")

    def lr_lambda(step):
        return _cosine_warmup_factor(step, num_warmup_steps, num_training_steps, num_cycles)

    return LambdaLR(optimizer, lr_lambda, last_epoch)
