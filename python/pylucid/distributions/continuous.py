"""Continuous distributions: ``Normal``, ``Uniform`` and ``MultivariateNormal``, all
reparameterisable (``rsample`` is differentiable in the parameters)."""
import math

import pylucid

from . import constraints
from .distribution import Distribution, _float_params
from .utils import lazy_property

__all__ = ["MultivariateNormal", "Normal", "Uniform"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(Distribution):
    """The normal distribution with mean ``loc`` and standard deviation ``scale`` (numbers or
    tensors, broadcast together)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _float_params(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def rsample(self, sample_shape=()):
        eps = pylucid.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        self._check_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.scale**2) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value):
        self._check_sample(value)
        return 0.5 * (1 + pylucid.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        """``loc + scale * sqrt(2) * erfinv(2 value - 1)``."""
        return self.loc + self.scale * pylucid.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale**2


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _float_params(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape=()):
        u = pylucid.rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        self._check_sample(value)
        lb, ub = (self.low <= value).to(self.low.dtype), (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        self._check_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return pylucid.full_like(self.high, math.nan)

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12


def _cholesky(a):
    """The lower Cholesky factor of a (batch of) positive-definite matrices, column by column
    with differentiable ops (the matrices here are small: one event's covariance)."""
    k = a.shape[-1]
    below = pylucid.arange(k)
    cols: list = []
    for j in range(k):
        c = a[..., :, j]
        if j:
            prev = pylucid.stack(cols, -1)  # (..., k, j)
            c = c - (prev * prev[..., j:j + 1, :]).sum(-1)
        c = c / c[..., j:j + 1].sqrt()
        cols.append(c * (below >= j).to(a.dtype))  # zero above the diagonal
    return pylucid.stack(cols, -1)


def _solve_lower(tril, b):
    """``tril^-1 b`` for a lower-triangular ``tril`` (..., k, k) and vectors ``b`` (..., k), by
    forward substitution."""
    z: list = []
    for i in range(tril.shape[-1]):
        r = b[..., i]
        for j in range(i):
            r = r - tril[..., i, j] * z[j]
        z.append(r / tril[..., i, i])
    return pylucid.stack(z, -1)


def _tril_inverse(tril):
    """The inverse of lower-triangular matrices: column j solves ``tril x = e_j``."""
    k = tril.shape[-1]
    batch = tuple(tril.shape[:-2])
    eye = pylucid.eye(k, dtype=tril.dtype).expand(*batch, k, k)
    return _solve_lower(tril.unsqueeze(-3).expand(*batch, k, k, k), eye).transpose(-1, -2)


def _precision_to_scale_tril(p):
    """PyTorch's route from a precision matrix to the covariance's Cholesky factor, without
    inverting p: the Cholesky factor of p with rows and columns reversed gives the inverse of the
    factor wanted, which is lower triangular and inverted by substitution."""
    flipped = _cholesky(p.flip(-2, -1))
    return _tril_inverse(flipped.flip(-2, -1).transpose(-1, -2))


class MultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` (..., k) and one of ``covariance_matrix``, its
    inverse ``precision_matrix`` or the covariance's lower Cholesky factor ``scale_tril`` (..., k, k)."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, m = next((n, v) for n, v in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix)) if v is not None)
        if m.ndim < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        batch = pylucid.broadcast_shapes(tuple(m.shape[:-2]), tuple(loc.shape[:-1]))
        k = loc.shape[-1]
        setattr(self, name, m.expand(*batch, -1, -1))
        self.loc = loc.expand(*batch, -1)
        super().__init__(batch, (k,), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, *self._event_shape * 2)

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-1, -2)).expand(*self._batch_shape, *self._event_shape * 2)

    @lazy_property
    def precision_matrix(self):
        inv = _tril_inverse(self._unbroadcasted_scale_tril)
        return (inv.transpose(-1, -2) @ inv).expand(*self._batch_shape, *self._event_shape * 2)

    def rsample(self, sample_shape=()):
        eps = pylucid.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)

    def log_prob(self, value):
        self._check_sample(value)
        diff = value - self.loc
        tril = self._unbroadcasted_scale_tril
        shape = pylucid.broadcast_shapes(tuple(diff.shape[:-1]), tuple(tril.shape[:-2]))
        k = self._event_shape[0]
        z = _solve_lower(tril.expand(*shape, k, k), diff.expand(*shape, k))
        return -0.5 * (k * math.log(2 * math.pi) + (z**2).sum(-1)) - self._half_log_det()

    def entropy(self):
        k = self._event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self._batch_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril**2).sum(-1).expand(*self._batch_shape, *self._event_shape)
