"""``torch.utils.data._utils``: the path older scripts import ``default_collate`` from."""
from . import collate  # noqa: F401
