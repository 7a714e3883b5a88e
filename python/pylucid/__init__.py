"""pylucid: a small autograd framework with a C++ core, centred on the RMSNorm family.

Tensors live in C++ (``pylucid.Tensor``); this package adds the PyTorch-style Python surface:
creation functions, ``nn``, ``optim``, ``autograd`` helpers and ``autocast``.
"""
import os as _os

# NOTE: one pool of threads. OpenBLAS runs each call on the calling thread and pylucid splits large
# products over its OpenMP pool instead (core/threads.h): OpenBLAS's own workers spin-wait and fight
# OpenMP's for the cores (a 2-thread MLP step measured 2x slower, a char_lm step 53 ms -> 1.4 s).
# This is read when OpenBLAS loads, so it is set here, before it loads; a user's own setting wins
# (OPENBLAS_NUM_THREADS > 1 hands products back to OpenBLAS's threads; OMP_NUM_THREADS sets
# pylucid's default pool size). OpenMP's wait policy is left to the runtime's default (workers
# spin briefly, then sleep): forcing PASSIVE made every parallel region wake a sleeping worker,
# and a training step ran slower on 2 threads than on 1 (MLP 784 step 1.75 vs 1.50 ms, char_lm
# 16.4 vs 11.2 ms; with the default, 1.02-1.07 and 8.2-8.7 ms on 2 threads). The variable is
# process-wide, so it also slowed PyTorch in the same process (its MLP step 5.1 -> 2.0 ms without).
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import scipy_openblas32 as _openblas  # noqa: F401  (loads the BLAS library _C links against)

if _os.environ.get("PYLUCID_EXT_DIR"):  # development: an extension built outside the package
    __path__.insert(0, _os.environ["PYLUCID_EXT_DIR"])

from . import _C  # noqa: E402
from ._C import (  # noqa: E402,F401
    DtypeMismatch,
    IndexOutOfRange,
    LucidError,
    ShapeMismatch,
    Tensor,
    dtype,
    empty_cache,
    get_num_threads,
    memory_stats,
    reset_peak_memory_stats,
    set_cache_limit,
    set_num_threads,
)
from ._tensor import *  # noqa: E402,F401,F403
from ._math import *  # noqa: E402,F401,F403
from ._math_ext import *  # noqa: E402,F401,F403
from ._math_more import *  # noqa: E402,F401,F403
from ._shape import *  # noqa: E402,F401,F403
from ._random import *  # noqa: E402,F401,F403
from ._device import *  # noqa: E402,F401,F403
from . import _compat  # noqa: E402,F401  (Tensor surface: legacy constructors, methods, copies)
from ._compat import *  # noqa: E402,F401,F403
from ._index_ext import *  # noqa: E402,F401,F403
from ._math_misc import *  # noqa: E402,F401,F403
from ._math_extra import *  # noqa: E402,F401,F403
from ._math_linalg import *  # noqa: E402,F401,F403
from ._compat_extra import *  # noqa: E402,F401,F403
from ._compat_more import *  # noqa: E402,F401,F403
from ._compat_names import *  # noqa: E402,F401,F403

_compat._attach_inplace()
from .amp import autocast  # noqa: E402,F401
from .autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402,F401
from .autograd.anomaly_mode import is_anomaly_enabled  # noqa: E402,F401
from . import accelerator, autograd, backends, cpu, cuda, distributions, func, linalg, nn, ops, optim, profiler, random, special, testing  # noqa: E402,F401
from . import distributed, jit, multiprocessing  # noqa: E402,F401
from .special import digamma, float_power, i0, lgamma, mvlgamma, polygamma, positive, sinc, xlogy  # noqa: E402,F401
from .special import gammainc as igamma, gammaincc as igammac  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401
from ._math_misc import _functional_aliases  # noqa: E402

_functional_aliases(globals())
from .serialization import load, save  # noqa: E402,F401
from .linalg import det, logdet  # noqa: E402,F401
from .linalg import slogdet_top as slogdet  # noqa: E402,F401
from .linalg import inv as inverse  # noqa: E402,F401
from ._linalg_decomp import cholesky_inverse, cholesky_solve, matrix_exp, pinverse  # noqa: E402,F401
from ._linalg_decomp import cholesky_top as cholesky, qr_top as qr, svd_top as svd  # noqa: E402,F401
from ._linalg_lu import lu_top as lu, lu_solve_top as lu_solve, lu_unpack  # noqa: E402,F401
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402,F401
from ._linalg_householder import geqrf, orgqr, ormqr  # noqa: E402,F401
from ._tensor_str import set_printoptions  # noqa: E402,F401
from ._poisson import poisson  # noqa: E402,F401
from ._storage import TypedStorage, UntypedStorage  # noqa: E402,F401
from . import _compat_names  # noqa: E402

_compat_names._attach()
_compat_names.install_top_level(globals())
from . import _index_ext, _math, _math_ext, _out, _shape, _tensor  # noqa: E402

_out.install(globals(), (_math, _math_ext, _shape, _compat, _tensor, _index_ext))
from . import _numpy_kwargs  # noqa: E402

_numpy_kwargs.install(globals(), (Tensor,))
from . import _foreach  # noqa: E402

globals().update(_foreach.functions())
_numpy_kwargs.install(vars(linalg))
_numpy_kwargs.install(vars(special))

int = _C.dtype.int64  # noqa: A001  (PyTorch's torch.int; pylucid's one integer dtype is int64)

from . import version  # noqa: E402
from .version import __version__  # noqa: E402,F401
from . import utils  # noqa: E402,F401

# The public classes print under the package, as PyTorch's do (``<class 'torch.Tensor'>``):
# scripts print type(x), and pickle finds each class under this name too.
for _cls in (Tensor, _C.dtype, Size, device):
    _cls.__module__ = "pylucid"
del _cls
