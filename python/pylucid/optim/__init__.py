"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``,
``NAdam``, ``RAdam``, ``LBFGS``) over param groups, each step one fused C++ call per
group, and learning-rate schedules in ``pylucid.optim.lr_scheduler``."""
from . import lr_scheduler, swa_utils
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .adaptive import Adadelta, Adagrad, Adamax, NAdam, RAdam, RMSprop
from .optimizer import Optimizer
from .rprop import Rprop
from .sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam",
           "RMSprop", "Rprop", "swa_utils", "LBFGS"]
