"""Optimizers (``SGD``, ``Adam``, ``AdamW``) over param groups, each step one fused C++ call per
group, and learning-rate schedules in ``pylucid.optim.lr_scheduler``."""
from . import lr_scheduler  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
