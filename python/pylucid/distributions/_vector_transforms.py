# mypy: disable-error-code="override,assignment"
"""The vector and matrix transforms of ``pylucid.distributions.transforms`` (imported from there):
reshapes, softmax and stick breaking onto the simplex, lower-Cholesky factors and a
distribution's cdf."""
import pylucid
from pylucid.nn import functional as F

from . import constraints
from .transforms import Transform, _clipped_sigmoid

__all__ = ["CumulativeDistributionTransform", "LowerCholeskyTransform", "ReshapeTransform", "SoftmaxTransform",
           "StickBreakingTransform"]


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (same number of elements)."""

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = pylucid.Size(tuple(in_shape))
        self.out_shape = pylucid.Size(tuple(out_shape))
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x):
        return x.reshape(*x.shape[:x.ndim - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y):
        return y.reshape(*y.shape[:y.ndim - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.ndim - len(self.in_shape)]))

    def forward_shape(self, shape):
        return pylucid.Size(tuple(shape)[:len(shape) - len(self.in_shape)] + tuple(self.out_shape))

    def inverse_shape(self, shape):
        return pylucid.Size(tuple(shape)[:len(shape) - len(self.out_shape)] + tuple(self.in_shape))


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by ``softmax`` (not injective: ``inv`` is ``log``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """Vectors of K - 1 reals to the K-simplex by stick breaking: piece k takes the fraction
    ``sigmoid(x_k - log(K - k))`` of what is left (so zeros map to the uniform vector)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _offset(n, dtype, total):
        return total - pylucid.ones(n, dtype=dtype).cumsum(-1)

    def _call(self, x):
        offset = self._offset(x.shape[-1], x.dtype, x.shape[-1] + 1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = self._offset(y_crop.shape[-1], y.dtype, y.shape[-1])
        sf = (1 - y_crop.cumsum(-1)).clamp(min=pylucid.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = self._offset(x.shape[-1], x.dtype, x.shape[-1] + 1)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return pylucid.Size(tuple(shape)[:-1] + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return pylucid.Size(tuple(shape)[:-1] + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal (the strict lower
    triangle kept, the diagonal exponentiated)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + pylucid.diag_embed(x.diagonal(0, -2, -1).exp())

    def _inverse(self, y):
        return y.tril(-1) + pylucid.diag_embed(y.diagonal(0, -2, -1).log())


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)`` onto the unit interval (its Jacobian is the density)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CumulativeDistributionTransform(self.distribution,
                                                                                          cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
