"""The training building blocks of ``pylucid.nn``: layers, activations, containers, dropout,
embedding and losses (each family in its own file beside this one, each with its ``__all__``)."""
from .activation import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .activation_ext import *  # noqa: F401,F403
