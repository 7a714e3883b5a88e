"""Runnable examples: python -m pylucid.examples.<name>."""
