"""Utilities with PyTorch's module paths: ``pylucid.utils.data`` (datasets and loaders),
``pylucid.utils.checkpoint`` (activation checkpointing), ``pylucid.utils.hooks``
(``RemovableHandle``) and ``pylucid.utils._pytree`` (nested containers as flat leaves)."""
from . import _pytree, checkpoint, data, hooks  # noqa: F401
