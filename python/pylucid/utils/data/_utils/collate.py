"""``torch.utils.data._utils.collate``: ``default_collate`` and ``default_convert``."""
from ..collate import default_collate, default_convert  # noqa: F401

__all__ = ["default_collate", "default_convert"]
