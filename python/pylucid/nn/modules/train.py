"""The training building blocks of ``pylucid.nn``: layers, activations, containers, dropout,
embedding and losses (each family in its own file beside this one)."""
from .activation import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from . import activation, container, dropout, linear, loss, sparse

__all__ = (activation.__all__ + container.__all__ + dropout.__all__ + linear.__all__ + loss.__all__
           + sparse.__all__)
