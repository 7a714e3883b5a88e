"""``backends.mkldnn``: pylucid has no oneDNN build; ``enabled`` can be set and has no effect."""
enabled = True


def is_available():
    """False: pylucid does not use oneDNN."""
    return False
