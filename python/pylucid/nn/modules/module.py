"""``torch.nn.modules.module``'s path: code that imports ``Module`` (or subclasses it) from here
gets pylucid's :class:`pylucid.nn.Module`."""
from ..module import Module

__all__ = ["Module"]
