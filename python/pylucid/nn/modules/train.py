"""The training building blocks of ``pylucid.nn``: layers, activations, containers, dropout,
embedding and losses (each family in its own file beside this one)."""
from . import activation, container, dropout, linear, loss, sparse
from .activation import *
from .container import *
from .dropout import *
from .linear import *
from .loss import *
from .sparse import *

__all__ = (activation.__all__ + container.__all__ + dropout.__all__ + linear.__all__ + loss.__all__
           + sparse.__all__)
