"""``pylucid.backends``: the flags PyTorch scripts read and set for accelerator backends.

``backends.mps.is_available()`` and ``backends.cuda.is_built()`` answer False; the cuDNN switches
(``backends.cudnn.deterministic``, ``benchmark``) can be set and have no effect; ``openmp.is_available()``
is True, ``mkl`` and ``mkldnn`` (oneDNN) answer False; ``cpu.get_cpu_capability()`` names the
vector instructions the kernels use.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
