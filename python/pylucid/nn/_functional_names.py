"""``rrelu`` (randomized leaky ReLU) and ``dropout3d``.

``rrelu`` in training draws, for every element ``x <= 0``, a slope uniformly from
``[lower, upper]`` (PyTorch's CPU draws: one float64 uniform per such element, in order, from the
generator), so a seeded program gets PyTorch's slopes; positive elements pass unchanged. In eval
mode the slope is the mean ``(lower + upper) / 2`` (a leaky ReLU). The gradient is the slope used.

>>> import pylucid
>>> import pylucid.nn.functional as F
>>> F.rrelu(pylucid.tensor([-1.0, 2.0]), 0.2, 0.4).tolist()
[-0.30000001192092896, 2.0]
"""
import warnings

import numpy as np

from .. import _C
from .._C import Tensor
from ._functional_act_ext import _can_write
from ._functional_spatial import _feature_dropout, _written_back

__all__ = ["dropout3d", "rrelu", "rrelu_"]


def _rrelu_out(input, lower, upper, training, generator):
    if not training:
        return _C._leaky_relu(input, (lower + upper) / 2.0)
    x = input.detach().numpy()
    neg = x <= 0
    noise = np.ones(x.shape, dtype=np.float64)
    k = int(neg.sum())
    if k:
        u = _C._uniform_(_C._empty((k,), _C.dtype.float64), 0.0, 1.0, generator).numpy()
        noise[neg] = u * (upper - lower) + lower
    # NOTE: the slope is drawn in float64 and rounded to the input dtype before the product, as
    # PyTorch's kernel does; the output is input * noise, so the gradient is the noise itself.
    return input * _C._from_numpy(np.array(noise, order="C")).to(input.dtype)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False, *, generator=None) -> Tensor:
    """Randomized leaky ReLU: slopes for ``x <= 0`` drawn from ``U(lower, upper)`` when
    ``training``, the mean slope otherwise (note PyTorch's default ``training=False`` here, while
    ``nn.RReLU`` follows the module's mode)."""
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"rrelu: expected a Tensor input, got {type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise _C.DtypeMismatch(f"rrelu: expected a floating input, got {input.dtype!r}")
    lower, upper = float(lower), float(upper)
    if lower > upper:
        raise _C.LucidError(f"Lower bound should be less than or equal to the upper bound, got lower={lower}, "
                            f"upper={upper}")
    if inplace:
        if _can_write(input, "rrelu"):
            return input.copy_(_rrelu_out(input.detach(), lower, upper, training, generator))
        return _C._rebase_inplace(input, _rrelu_out(input.clone(), lower, upper, training, generator), "rrelu")
    return _rrelu_out(input, lower, upper, training, generator)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, *, generator=None) -> Tensor:
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True, generator=generator)


def dropout3d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout for ``(N, C, D, H, W)`` or unbatched ``(C, D, H, W)``: each whole 3-d
    feature map is zeroed with probability ``p`` and the kept ones scaled by ``1 / (1 - p)``.
    Other ranks warn, as PyTorch, and drop per ``(dim 0, dim 1)`` entry."""
    if not isinstance(input, Tensor):
        raise _C.DtypeMismatch(f"dropout3d: expected a Tensor input, got {type(input).__name__}")
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                      "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=2)
    if input.ndim == 4:
        return _written_back(input, _feature_dropout(input.unsqueeze(0), p, training, "dropout3d").squeeze(0), inplace)
    if input.ndim < 2:
        raise _C.ShapeMismatch(f"dropout3d: expected an input with at least 2 dims, got {input.ndim}-D")
    return _written_back(input, _feature_dropout(input, p, training, "dropout3d"), inplace)
