"""cuDNN flags PyTorch scripts set for reproducibility; accepted and without effect here."""
__all__ = ["is_available", "deterministic", "benchmark", "enabled", "allow_tf32"]

deterministic = False
benchmark = False
enabled = False
allow_tf32 = True


def is_available():
    """False: pylucid has no cuDNN."""
    return False
