"""Optimizers (``SGD``, ``Adam``, ``AdamW``) over param groups, each step one fused C++ call per
group, and learning-rate schedules in ``pylucid.optim.lr_scheduler``."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
