"""``pylucid.backends``: the flags PyTorch scripts read and set for accelerator backends.

``backends.mps.is_available()`` and ``backends.cuda.is_built()`` answer False; the cuDNN switches
(``backends.cudnn.deterministic``, ``benchmark``) can be set and have no effect.
"""
from . import cuda, cudnn, mps  # noqa: F401

__all__ = ["cuda", "cudnn", "mps"]
