"""The layer classes of ``pylucid.nn``."""
from .norm import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .train import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .more import *  # noqa: F401,F403
from .extra import *  # noqa: F401,F403
from .compat_more import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .names import *  # noqa: F401,F403
from . import utils  # noqa: E402,F401  (torch.nn.modules.utils: _pair, consume_prefix_in_state_dict_if_present)

# What ``from .modules import *`` in pylucid.nn takes: everything but ``utils``, which there is
# ``nn.utils`` (clip_grad_norm_, rnn, parametrize), not this module.
__all__ = [n for n in dir() if not n.startswith("_") and n != "utils"]
