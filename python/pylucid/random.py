"""``pylucid.random`` (PyTorch's ``torch.random``): the default generator's seeding and state, and
``fork_rng``, which runs a block and then puts the generator's state back.

>>> import pylucid
>>> _ = pylucid.random.manual_seed(0)
>>> with pylucid.random.fork_rng():
...     inside = pylucid.rand(2).tolist()
>>> pylucid.rand(2).tolist() == inside
True
"""
import contextlib as _contextlib

from ._random import default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@_contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """A context manager that saves the default generator's state on entry and restores it on exit,
    so random draws inside the block leave the stream outside it unchanged. ``devices`` and
    ``device_type`` name accelerator generators, which pylucid does not have; ``enabled=False``
    makes it a no-op."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
