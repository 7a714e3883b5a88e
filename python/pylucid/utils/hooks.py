"""PyTorch's ``torch.utils.hooks`` path: :class:`RemovableHandle`, the object every
``register_*hook`` method of pylucid returns."""
from ..autograd.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
