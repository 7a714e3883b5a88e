"""Neural-network building blocks: ``Module``, ``Parameter``, layers, losses, ``functional``."""
from . import functional, init, utils  # noqa: F401
from .module import Module  # noqa: F401
from .modules import *  # noqa: F401,F403
from .parameter import Buffer, Parameter  # noqa: F401
