"""``torch.types``: the aliases annotated code imports (``Number``, ``Device``, ``_size``)."""
import os
from typing import IO, List, Optional, Sequence, Tuple, Union

from ._C import Tensor, dtype
from ._compat import Size
from ._device import device

__all__ = ["Device", "FileLike", "Number"]

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Optional[Tensor]]]
_size = Union[Size, List[int], Tuple[int, ...]]
_int = int
_float = float
_bool = bool
_complex = complex
_dtype = dtype
_device = device
Number = Union[int, float, bool]
_Number = (int, float, bool)
FileLike = Union[str, "os.PathLike[str]", IO[bytes]]
Device = Optional[Union[device, str, int]]
