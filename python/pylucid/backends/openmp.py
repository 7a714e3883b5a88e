"""``backends.openmp``: pylucid's kernels run on OpenMP threads."""


def is_available():
    """True: pylucid is built with OpenMP."""
    return True
