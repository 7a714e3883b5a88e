"""Optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``Adamax``,
``NAdam``, ``RAdam``, ``LBFGS``, ``ASGD``, ``Adafactor``, ``SparseAdam``) over param groups, each step one fused C++ call per
group, and learning-rate schedules in ``pylucid.optim.lr_scheduler``."""
from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adam import Adam, AdamW
from .adaptive import Adadelta, Adagrad, Adamax, NAdam, RAdam, RMSprop
from .asgd import ASGD
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
           "ASGD",
           "LBFGS",
           "SGD",
           "Adadelta",
           "Adafactor",
           "Adagrad",
           "Adam",
           "AdamW",
           "Adamax",
           "NAdam",
           "Optimizer",
           "RAdam",
           "RMSprop",
           "Rprop",
           "SparseAdam",
           "lr_scheduler",
           "swa_utils",
]
