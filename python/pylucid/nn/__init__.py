"""Neural-network building blocks: ``Module``, ``Parameter``, layers, losses, ``functional``."""
from . import functional, init, utils  # noqa: F401
from .module import Module  # noqa: F401
from .modules import *  # noqa: F401,F403
from .parameter import Buffer, Parameter  # noqa: F401
from . import attention, parallel  # noqa: E402,F401  (after the star import, which brings modules.attention)

from .._submodule_alias import alias_submodules as _alias_submodules  # noqa: E402

# PyTorch's ``torch.nn.modules.<file>`` paths (``from torch.nn.modules.normalization import
# LayerNorm``, ``torch.nn.modules.utils._pair``). Made after the star import above, so that
# ``modules.utils`` does not take the place of ``nn.utils``.
_alias_submodules("pylucid.nn.modules", (
    "activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv", "distance", "dropout", "flatten",
    "fold", "instancenorm", "lazy", "linear", "loss", "module", "normalization", "padding", "pixelshuffle",
    "pooling", "rnn", "sparse", "transformer", "upsampling", "utils"))
