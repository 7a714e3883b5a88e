"""``backends.mkl``: pylucid's matrix products use OpenBLAS, not MKL."""


def is_available():
    """False: pylucid does not use MKL."""
    return False
