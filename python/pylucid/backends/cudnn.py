"""cuDNN flags PyTorch scripts set for reproducibility; accepted and without effect here."""
__all__ = ["is_available", "deterministic", "benchmark", "enabled"]

deterministic = False
benchmark = False
enabled = False


def is_available():
    """False: pylucid has no cuDNN."""
    return False
