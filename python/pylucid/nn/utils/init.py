"""``skip_init``: build a module without spending time or random numbers on its initial values."""
import inspect

from ... import _C, _random
from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` whose parameters are left for you to initialise.

    PyTorch builds the module on its "meta" device and allocates uninitialised memory, so no
    random numbers are drawn. pylucid has no meta device: the constructor runs as usual and the
    default generator is then put back to its state before the call, so the draws a seeded
    program makes afterwards are PyTorch's. The parameters hold the constructor's values (PyTorch's
    hold whatever memory was there): initialise them before use, as with PyTorch.

    >>> import pylucid
    >>> m = skip_init(pylucid.nn.Linear, 5, 1)
    >>> m.weight.shape
    pylucid.Size([1, 5])
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise _C.LucidError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise _C.LucidError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    state = _random.get_rng_state()
    try:
        module = module_cls(*args, device=final_device, **kwargs)  # type: ignore[call-arg]
    finally:
        _random.set_rng_state(state)
    return module
