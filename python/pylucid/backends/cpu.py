"""``backends.cpu``: which vector instructions pylucid's kernels use on this CPU."""

from .. import _C


def get_cpu_capability():
    """The widest instruction set the kernels run here, as PyTorch names it: ``"AVX512"``
    (x86-64-v4), ``"AVX2"`` (AVX2 with FMA, x86-64-v3) or ``"DEFAULT"`` (baseline code).

    >>> import pylucid
    >>> pylucid.backends.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    True
    """
    return _C._cpu_capability()
