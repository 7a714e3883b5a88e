"""Functional forms of the nn layers: ``pylucid.nn.functional`` (PyTorch's ``F``)."""
from ._functional_activation import *  # noqa: F401,F403
from ._functional_norm import *  # noqa: F401,F403
from ._functional_batchnorm import *  # noqa: F401,F403
from ._functional_train import *  # noqa: F401,F403
from ._functional_act_ext import *  # noqa: F401,F403
from ._functional_loss_ext import *  # noqa: F401,F403
from ._functional_conv import *  # noqa: F401,F403
from ._functional_pool import *  # noqa: F401,F403
from ._functional_spatial import *  # noqa: F401,F403
from ._functional_grid import *  # noqa: F401,F403
from ._functional_ctc import *  # noqa: F401,F403
from ._functional_pool3d import *  # noqa: F401,F403
from ._functional_attention import *  # noqa: F401,F403
from ._functional_index import *  # noqa: F401,F403
from ._functional_more import *  # noqa: F401,F403
from ._functional_extra import *  # noqa: F401,F403
from ._functional_compat_more import *  # noqa: F401,F403
