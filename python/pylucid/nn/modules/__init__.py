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
