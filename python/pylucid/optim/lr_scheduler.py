"""Learning-rate schedules (PyTorch's ``torch.optim.lr_scheduler`` API): call
``scheduler.step()`` once after each ``optimizer.step()``; it writes the new rate into every
param group's ``"lr"``.

- ``LambdaLR(opt, lr_lambda)``: ``lr = base_lr * lr_lambda(step)``.
- ``StepLR(opt, step_size, gamma=0.1)``: multiply by ``gamma`` every ``step_size`` steps.
- ``CosineAnnealingLR(opt, T_max, eta_min=0)``: half a cosine from ``base_lr`` down to ``eta_min``
  over ``T_max`` steps.
- ``MultiStepLR``, ``ExponentialLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``,
  ``MultiplicativeLR``, ``CosineAnnealingWarmRestarts``, ``OneCycleLR``, ``SequentialLR``,
  ``ChainedScheduler``, ``CyclicLR`` and ``ReduceLROnPlateau`` (``step(metric)``), as in PyTorch, in PyTorch's
  recursive formulas so that the rates are the same floats.
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
import types
from bisect import bisect_right
from collections import Counter
from typing import Any

from .. import _C
from .._errors import InvalidValue as _InvalidValue
from .optimizer import Optimizer

__all__ = [
    "ChainedScheduler",
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CosineWarmupLR",
    "CyclicLR",
    "ExponentialLR",
    "LRScheduler",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "OneCycleLR",
    "PolynomialLR",
    "ReduceLROnPlateau",
    "SequentialLR",
    "StepLR",
    "get_cosine_schedule_with_warmup",
]




class LRScheduler:
    """Base class: subclasses implement ``get_lr()`` (the rates for the current ``last_epoch``,
    usually in PyTorch's recursive form from the groups' current rates) and may give
    ``_get_closed_form_lr()`` (used by the deprecated ``step(epoch)``)."""

    _is_initial = False

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
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The rates for the current ``last_epoch``, one per param group; each subclass computes
        them by its schedule (``step()`` calls this and writes the result)."""
        raise _C.LucidError(f"{type(self).__name__}: get_lr() is not implemented")

    def get_last_lr(self):
        """The rates set by the last ``step()``, one per param group."""
        return self._last_lr

    def step(self, epoch=None):
        """Advance one step and write the new rates into the param groups (``epoch``, deprecated
        in PyTorch, jumps to that epoch using the closed form where the schedule has one)."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        # PyTorch flags get_lr() calls made by step() (its state_dict carries the flag).
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
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


_LRScheduler = LRScheduler


def _lambdas_state_dict(sched):
    """PyTorch's state_dict of a scheduler with ``lr_lambdas``: a plain function or lambda is
    saved as None, a callable object as a copy of its ``__dict__``."""
    state = LRScheduler.state_dict(sched)
    state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                           for fn in sched.lr_lambdas]
    return state


def _lambdas_load_state_dict(sched, state_dict):
    state_dict = dict(state_dict)
    saved = state_dict.pop("lr_lambdas", None) or []
    sched.__dict__.update(state_dict)
    for fn, d in zip(sched.lr_lambdas, saved):
        if d is not None:
            fn.__dict__.update(d)


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

    def state_dict(self):
        """The scheduler's state; ``lr_lambdas`` holds None per function (a callable object's ``__dict__``)."""
        return _lambdas_state_dict(self)

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()`` (callable objects in ``lr_lambdas`` get their ``__dict__`` back)."""
        _lambdas_load_state_dict(self, state_dict)


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` steps."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        # PyTorch's own tutorials pass a float (StepLR(optimizer, 1.0, gamma=0.95)): any positive number.
        if isinstance(step_size, bool) or not isinstance(step_size, (int, float)) or step_size <= 0:
            raise _C.LucidError(f"StepLR: step_size must be a positive number, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


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
        if self._is_initial:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:  # resumed: closed form
            return [self.eta_min + (base - self.eta_min) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (g["lr"] - self.eta_min) + self.eta_min for g in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


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


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each epoch in ``milestones`` (a milestone listed twice
    multiplies twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch not in self.milestones:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch] for g in groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Scale the rate by ``factor`` for the first ``total_iters`` steps, then restore it."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise _InvalidValue("ConstantLR: constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return [g["lr"] for g in groups]
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the rate linearly from ``start_factor`` to ``end_factor`` over ``total_iters`` steps."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise _InvalidValue("LinearLR: starting multiplicative factor expected to be greater than 0 and less "
                                "or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise _InvalidValue("LinearLR: ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        d = self.end_factor - self.start_factor
        return [g["lr"] * (1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d))
                for g in groups]

    def _get_closed_form_lr(self):
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every step."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the rate as ``(1 - t / total_iters) ** power`` until ``total_iters``."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        f = ((1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * f for g in groups]

    def _get_closed_form_lr(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base in self.base_lrs]


class MultiplicativeLR(LRScheduler):
    """Multiply the rate by ``lr_lambda(epoch)`` every step (one function, or one per group)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise _InvalidValue(f"MultiplicativeLR: expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for f in self.lr_lambdas:
            if not callable(f):
                raise _C.DtypeMismatch(f"MultiplicativeLR: lr_lambda should be a function, but got "
                                       f"{type(f).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * f(self.last_epoch) for f, g in zip(self.lr_lambdas, groups)]

    def state_dict(self):
        """The scheduler's state; ``lr_lambdas`` holds None per function (a callable object's ``__dict__``)."""
        return _lambdas_state_dict(self)

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()`` (callable objects in ``lr_lambdas`` get their ``__dict__`` back)."""
        _lambdas_load_state_dict(self, state_dict)


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``base_lr`` to ``eta_min`` restarting after ``T_0`` steps, each
    period ``T_mult`` times longer than the last (SGDR)."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise _InvalidValue(f"CosineAnnealingWarmRestarts: expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise _InvalidValue(f"CosineAnnealingWarmRestarts: expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None):
        """Advance one step (or jump to a fractional ``epoch``, as PyTorch allows)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise _InvalidValue(f"CosineAnnealingWarmRestarts: expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


def _per_group(name, optimizer, value):
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise _InvalidValue(f"expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rate rises from ``max_lr / div_factor`` to ``max_lr`` over
    ``pct_start`` of ``total_steps`` and anneals to ``initial_lr / final_div_factor``; momentum
    (or Adam's beta1) cycles the other way between ``max_momentum`` and ``base_momentum``.
    Call ``step()`` after every batch."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise _C.DtypeMismatch(f"OneCycleLR: {type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise _InvalidValue(f"OneCycleLR: expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise _InvalidValue(f"OneCycleLR: expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise _InvalidValue(f"OneCycleLR: expected positive integer steps_per_epoch, but got "
                                    f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise _InvalidValue("OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)")
        self._schedule_phases: list[dict[str, Any]]
        if three_phase:
            self._schedule_phases = [
                {"end_step": float(pct_start * self.total_steps) - 1, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": float(2 * pct_start * self.total_steps) - 2, "start_lr": "max_lr",
                 "end_lr": "initial_lr", "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
                 "start_momentum": "max_momentum", "end_momentum": "max_momentum"},
            ]
        else:
            self._schedule_phases = [
                {"end_step": float(pct_start * self.total_steps) - 1, "start_lr": "initial_lr", "end_lr": "max_lr",
                 "start_momentum": "max_momentum", "end_momentum": "base_momentum"},
                {"end_step": self.total_steps - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                 "start_momentum": "base_momentum", "end_momentum": "max_momentum"},
            ]
        if not isinstance(pct_start, float) or pct_start < 0 or pct_start > 1:
            raise _InvalidValue(f"OneCycleLR: expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise _InvalidValue(f"OneCycleLR: anneal_strategy must be one of 'cos' or 'linear', instead got "
                                f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise _InvalidValue("OneCycleLR: optimizer must support momentum or beta1 with `cycle_momentum` "
                                    "option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            maxm = _per_group("max_momentum", optimizer, max_momentum)
            basem = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m, b, group in zip(maxm, basem, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m, *group["betas"][1:])
                    else:
                        group["momentum"] = m
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise _InvalidValue(f"OneCycleLR: tried to step {step_num} times. The specified number of total steps "
                                f"is {self.total_steps}")
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lr = self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        mom = self._anneal(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (mom, *group["betas"][1:])
                else:
                    group["momentum"] = mom
        return lrs


class CyclicLR(LRScheduler):
    """Cyclical learning rates: the rate moves linearly from ``base_lr`` up to ``max_lr`` over
    ``step_size_up`` steps and back down over ``step_size_down`` (default the same), the height
    scaled per ``mode``: ``"triangular"`` (constant), ``"triangular2"`` (halved each cycle) or
    ``"exp_range"`` (``gamma ** step``), or by ``scale_fn`` of the cycle number or the step
    (``scale_mode``). Momentum (or Adam's beta1) cycles the other way between ``max_momentum``
    and ``base_momentum``. Call ``step()`` after every batch."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise _C.DtypeMismatch(f"CyclicLR: {type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise _InvalidValue(f"CyclicLR: mode {mode!r} is invalid and scale_fn is None")
        self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else \
            ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise _InvalidValue("CyclicLR: optimizer must support momentum or beta1 with `cycle_momentum` "
                                    "option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, b, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    if self.use_beta1:
                        group["betas"] = (m, *group["betas"][1:])
                    else:
                        group["momentum"] = m
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        """The amplitude scale for cycle number (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale_factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale_factor * scale for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, b, m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                momentum = m - (m - b) * scale_factor * scale
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def state_dict(self):
        state = super().state_dict()
        # PyTorch: None for no scale_fn or a function, a callable object's __dict__ otherwise.
        fn = self._scale_fn_custom
        state.pop("_scale_fn_custom", None)
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        saved = state_dict.pop("_scale_fn_custom", None)
        super().load_state_dict(state_dict)
        if saved is not None:
            self._scale_fn_custom.__dict__.update(saved)


class SequentialLR(LRScheduler):
    """Run ``schedulers`` one after another, switching at each of ``milestones`` (one fewer
    milestone than schedulers); at a switch the next scheduler starts from its epoch 0."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise _InvalidValue("SequentialLR expects at least one scheduler, but got no scheduler.")
        for i, s in enumerate(schedulers):
            if not hasattr(s, "optimizer"):
                raise _C.DtypeMismatch(f"SequentialLR at index {i} should have `optimizer` as its attribute.")
            if isinstance(s, ReduceLROnPlateau):
                raise _InvalidValue(f"SequentialLR does not support `ReduceLROnPlateau` scheduler (index {i}): it "
                                    "needs a metric in `step`")
            if s.optimizer is not optimizer:
                raise _InvalidValue(f"SequentialLR expects all schedulers to belong to the same optimizer, but the "
                                    f"scheduler at index {i} has another one")
        if len(milestones) != len(schedulers) - 1:
            raise _InvalidValue("SequentialLR expects number of schedulers provided to be one more than the number of "
                                f"milestone points, but got number of schedulers {len(schedulers)} and the number "
                                f"of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def _recursive_undo(self, sched=None):
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self._recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self):  # type: ignore[override]
        """Advance the scheduler in charge of the current epoch."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        """This scheduler's state with each wrapped scheduler's ``state_dict()``."""
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()`` (the wrapped schedulers too)."""
        state_dict = dict(state_dict)
        subs = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, subs):
            s.load_state_dict(sd)


class ChainedScheduler(LRScheduler):
    """Step every scheduler in ``schedulers`` at once (their effects compose)."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise _InvalidValue("ChainedScheduler expects at least one scheduler to be chained, but got no "
                                "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if isinstance(s, ReduceLROnPlateau):
                raise _InvalidValue(f"ChainedScheduler does not support `ReduceLROnPlateau` scheduler (index {i})")
            if getattr(s, "optimizer", None) is not optimizer:
                raise _InvalidValue(f"ChainedScheduler expects all schedulers to belong to the same optimizer "
                                    f"(index {i} differs)")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def step(self):  # type: ignore[override]
        """Step every chained scheduler."""
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    state_dict = SequentialLR.state_dict
    load_state_dict = SequentialLR.load_state_dict


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rate by ``factor`` when ``metrics`` passed to ``step(metrics)`` has not improved
    (by ``threshold``, relative or absolute) for ``patience`` steps; then wait ``cooldown``
    steps. Rates never go below ``min_lr``, and changes smaller than ``eps`` are skipped."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise _InvalidValue("ReduceLROnPlateau: factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise _C.DtypeMismatch(f"ReduceLROnPlateau: {type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise _InvalidValue(f"ReduceLROnPlateau: expected {len(optimizer.param_groups)} min_lrs, got "
                                    f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):  # type: ignore[override]
        """Record one value of the monitored metric and reduce the rate if it has stalled."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _reduce_lr(self):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise _C.LucidError("ReduceLROnPlateau: the number of param groups changed since construction; "
                                    "set min_lrs to one value per group")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old = float(group["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                group["lr"] = new

    @property
    def in_cooldown(self):
        """Whether the scheduler is waiting out its cooldown."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise _InvalidValue(f"ReduceLROnPlateau: mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise _InvalidValue(f"ReduceLROnPlateau: threshold mode {threshold_mode} is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()``."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
