"""``pylucid.nn.parallel``: PyTorch's module path for data-parallel wrappers, so that training
scripts importing ``DistributedDataParallel`` at the top run their single-process branch.
pylucid has no process groups (see :mod:`pylucid.distributed`): constructing the wrapper raises."""
from .._errors import InvalidValue
from .module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """PyTorch's multi-process data-parallel wrapper; constructing one raises a ValueError (there is
    no process group to synchronise gradients over). ``isinstance(model, DistributedDataParallel)``
    is False for every pylucid model, as in a single-process PyTorch run."""

    def __init__(self, module=None, *args, **kwargs):
        raise InvalidValue("pylucid.nn.parallel.DistributedDataParallel: distributed training is not supported by "
                           "pylucid (pylucid.distributed.is_available() is False); use the module itself")
