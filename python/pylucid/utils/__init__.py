"""Utilities with PyTorch's module paths: ``pylucid.utils.data`` (datasets and loaders) and
``pylucid.utils.checkpoint`` (activation checkpointing)."""
from . import checkpoint, data  # noqa: F401
