"""The :class:`Gamma` and :class:`Beta` distributions. Densities and entropies use
:func:`pylucid.lgamma` and :func:`pylucid.digamma`, so they are differentiable in the parameters
(to every order); samples are drawn with Marsaglia and Tsang's method from pylucid's generator
and are not reparameterised (``rsample`` would need the derivative of the gamma CDF in its
shape parameter)."""
import numpy as np

import pylucid
from pylucid import special

from .distribution import Distribution, _float_params

__all__ = ["Beta", "Gamma"]


def _standard_gamma(alpha):
    """Gamma(alpha, 1) samples for a float64 numpy array of shapes ``alpha`` (Marsaglia & Tsang,
    2000: a transformed normal accepted against a uniform; alpha < 1 boosted by U ** (1 / alpha))."""
    boost = alpha < 1
    a = np.where(boost, alpha + 1.0, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    out = np.empty_like(a)
    todo = np.ones(a.shape, dtype=bool)
    while todo.any():
        n = int(todo.sum())
        x = pylucid.randn(n, dtype=pylucid.float64).numpy()
        u = pylucid.rand(n, dtype=pylucid.float64).numpy()
        dd, cc = d[todo], c[todo]
        v = (1.0 + cc * x) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = (v > 0) & (np.log(u) < 0.5 * x * x + dd - dd * v + dd * np.log(v))
        idx = np.flatnonzero(todo)[ok]
        out.flat[idx] = (dd * v)[ok]
        todo.flat[idx] = False
    if boost.any():
        u = pylucid.rand(int(boost.sum()), dtype=pylucid.float64).numpy()
        out[boost] *= u ** (1.0 / alpha[boost])
    return out


def _gamma_sample(alpha, shape):
    a = np.broadcast_to(alpha.detach().to(pylucid.float64).numpy(), shape).copy()
    return pylucid.tensor(_standard_gamma(a), dtype=alpha.dtype)


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``."""

    _params = ("concentration", "rate")

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _float_params(concentration, rate)
        super().__init__(tuple(self.rate.shape), (), validate_args)
        self._check("concentration", self.concentration, self.concentration > 0)
        self._check("rate", self.rate, self.rate > 0)

    def _support(self, value):
        return value >= 0

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with pylucid.no_grad():
            return _gamma_sample(self.concentration, shape) / self.rate.expand(*shape)

    def log_prob(self, value):
        self._validate_sample(value)
        a, r = self.concentration, self.rate
        return special.xlogy(a, r) + special.xlogy(a - 1, value) - r * value - special.lgamma(a)

    def cdf(self, value):
        raise NotImplementedError("Gamma.cdf needs the regularised incomplete gamma function, which pylucid "
                                  "does not have")

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + special.lgamma(a) + (1.0 - a) * special.digamma(a)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate**2


class Beta(Distribution):
    """The beta distribution on [0, 1] with ``concentration1`` (alpha) and ``concentration0`` (beta)."""

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = _float_params(concentration1, concentration0)
        super().__init__(tuple(self.concentration1.shape), (), validate_args)
        self._check("concentration1", self.concentration1, self.concentration1 > 0)
        self._check("concentration0", self.concentration0, self.concentration0 > 0)

    def _support(self, value):
        return (value >= 0) & (value <= 1)

    def _log_beta(self):
        a, b = self.concentration1, self.concentration0
        return special.lgamma(a) + special.lgamma(b) - special.lgamma(a + b)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with pylucid.no_grad():
            x, y = _gamma_sample(self.concentration1, shape), _gamma_sample(self.concentration0, shape)
            return x / (x + y)

    def log_prob(self, value):
        self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return special.xlogy(a - 1, value) + special.xlogy(b - 1, 1 - value) - self._log_beta()

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        return (self._log_beta() - (a - 1) * special.digamma(a) - (b - 1) * special.digamma(b)
                + (a + b - 2) * special.digamma(a + b))

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total**2 * (total + 1))
