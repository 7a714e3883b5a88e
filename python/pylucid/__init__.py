"""pylucid: a small autograd framework with a C++ core."""
import os as _os

import scipy_openblas32 as _openblas  # noqa: F401  (loads the BLAS library _C links against)

if _os.environ.get("PYLUCID_EXT_DIR"):  # development: an extension built outside the package
    __path__.insert(0, _os.environ["PYLUCID_EXT_DIR"])

from . import _C  # noqa: E402
from ._C import Tensor, dtype, LucidError, ShapeMismatch, DtypeMismatch, IndexOutOfRange  # noqa: F401,E402
