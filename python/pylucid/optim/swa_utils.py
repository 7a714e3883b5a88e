"""Weight averaging, as ``torch.optim.swa_utils``: ``AveragedModel`` keeps a running average
(SWA, the equal-weight mean; or an exponential moving average with ``get_ema_multi_avg_fn``) of a
model's parameters, ``SWALR`` anneals every group's rate to a constant ``swa_lr``, and
``update_bn`` recomputes BatchNorm statistics for the averaged weights with one pass over data.

>>> import pylucid
>>> from pylucid.optim.swa_utils import AveragedModel
>>> net = pylucid.nn.Linear(1, 1)
>>> swa = AveragedModel(net)
>>> for v in (1.0, 3.0):
...     with pylucid.no_grad():
...         _ = net.weight.fill_(v)
...     swa.update_parameters(net)
>>> swa.module.weight.item(), int(swa.n_averaged)
(2.0, 2)
"""
import copy
import itertools
import math

from .. import _C
from .._tensor import tensor
from ..autograd.grad_mode import no_grad
from ..nn.module import Module
from ..nn.modules.batchnorm import _BatchNorm
from .lr_scheduler import LRScheduler, _InvalidValue, _per_group

__all__ = [
    "SWALR",
    "AveragedModel",
    "get_ema_avg_fn",
    "get_ema_multi_avg_fn",
    "get_swa_avg_fn",
    "get_swa_multi_avg_fn",
    "update_bn",
]


def get_ema_multi_avg_fn(decay=0.999):
    """The exponential moving average over lists of tensors: ``ema = lerp(ema, current, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise _InvalidValue(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @no_grad()
    def ema_update(ema_params, current_params, num_averaged):
        for e, c in zip(ema_params, current_params):
            e.copy_(e.lerp(c, 1 - decay) if e.dtype.is_floating_point else e + (c - e) * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The equal-weight running mean over lists of tensors: ``avg = lerp(avg, current, 1 / (n + 1))``."""
    @no_grad()
    def swa_update(averaged_params, current_params, num_averaged):
        n = float(num_averaged) if not isinstance(num_averaged, _C.Tensor) else float(num_averaged.item())
        for a, c in zip(averaged_params, current_params):
            a.copy_(a.lerp(c, 1 / (n + 1)) if a.dtype.is_floating_point else a + (c - a) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The exponential moving average of one tensor: ``decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise _InvalidValue(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """The running mean of one tensor: ``avg + (current - avg) / (n + 1)``."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of ``model`` (``self.module``) whose parameters are the average of the ones
    passed to ``update_parameters`` (SWA by default; ``avg_fn``/``multi_avg_fn`` give others, e.g.
    ``get_ema_multi_avg_fn(0.99)``). Buffers are copied from the model unless ``use_buffers``,
    which averages them too. ``n_averaged`` counts the updates."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", tensor(0))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Folds ``model``'s current parameters into the average (the first call copies them)."""
        mine = itertools.chain(self.module.parameters(), self.module.buffers()) if self.use_buffers else \
            self.module.parameters()
        theirs = itertools.chain(model.parameters(), model.buffers()) if self.use_buffers else model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged) == 0
        with no_grad():
            for a, c in zip(mine, theirs):
                averaged.append(a.detach())
                current.append(c.detach())
                if first:
                    a.detach().copy_(c.detach())
            if not first:
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    (self.multi_avg_fn or get_swa_multi_avg_fn())(averaged, current, self.n_averaged)
                else:
                    for a, c in zip(averaged, current):
                        a.copy_(self.avg_fn(a, c, self.n_averaged))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b_model.detach())
            self.n_averaged.add_(1)


def update_bn(loader, model, device=None):
    """Recomputes the running statistics of every BatchNorm in ``model`` with one pass over
    ``loader`` (batches, or tuples whose first element is the input), as a cumulative average."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            model(batch[0] if isinstance(batch, (list, tuple)) else batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals every group's rate from its current value to ``swa_lr`` over ``anneal_epochs``
    steps (``"cos"`` or ``"linear"``), then holds it, as PyTorch's (same floats)."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise _InvalidValue(f"SWALR: anneal_strategy must by one of 'cos' or 'linear', instead got "
                                f"{anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise _InvalidValue(f"SWALR: anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t):
        return (1 - math.cos(math.pi * t)) / 2 if self.anneal_strategy == "cos" else t

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self._anneal(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self._anneal(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev)]
