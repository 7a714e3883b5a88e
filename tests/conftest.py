import pytest

import pylucid


@pytest.fixture(autouse=True)
def _seed_and_modes():
    """Every test starts seeded, with grad mode on and autocast off, whatever the last one did."""
    pylucid.manual_seed(0)
    yield
    pylucid._C._set_grad_enabled(True)
    pylucid._C._set_autocast_state(False, pylucid.bfloat16)
    pylucid.set_default_dtype(pylucid.float32)
