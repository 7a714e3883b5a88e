"""Parameter initialisation (filled in by the training work)."""
