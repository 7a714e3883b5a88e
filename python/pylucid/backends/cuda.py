"""CUDA backend flags: not built in pylucid."""
__all__ = ["is_built"]


def is_built():
    """False: pylucid is not built with CUDA support."""
    return False
