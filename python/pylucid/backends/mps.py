"""Apple's Metal backend: not available in pylucid."""
__all__ = ["is_available", "is_built"]


def is_available():
    """False: pylucid runs on the CPU only."""
    return False


def is_built():
    """False: pylucid is not built with Metal support."""
    return False
