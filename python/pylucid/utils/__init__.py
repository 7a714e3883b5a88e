"""Utilities with PyTorch's module paths: ``pylucid.utils.data`` (datasets and loaders)."""
from . import data  # noqa: F401
