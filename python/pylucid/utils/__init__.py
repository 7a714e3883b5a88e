"""Utilities with PyTorch's module paths: ``pylucid.utils.data`` (datasets and loaders),
``pylucid.utils.checkpoint`` (activation checkpointing), ``pylucid.utils.hooks``
(``RemovableHandle``), ``pylucid.utils._pytree`` (nested containers as flat leaves) and
``pylucid.utils.benchmark`` (``Timer``)."""
from . import _pytree, benchmark, checkpoint, data, hooks  # noqa: F401
