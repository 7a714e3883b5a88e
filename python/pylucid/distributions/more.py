"""More of ``torch.distributions``: ``Exponential``, ``Laplace``,
``Cauchy`` (reparameterisable) and ``Geometric``. Samples are drawn the way PyTorch
draws them (``exponential_``, ``uniform_``, ``cauchy_``, ``randn``), so a seed gives PyTorch's samples; ``log_prob``,
``cdf``, ``entropy`` and the moments follow PyTorch's formulas."""
import math

import pylucid

from . import constraints
from .discrete import _one_of
from .distribution import Distribution, _float_params
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Cauchy", "Exponential", "Geometric", "Laplace"]


class Exponential(Distribution):
    """The exponential distribution with ``rate`` (mean ``1 / rate``), on ``[0, inf)``."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = _float_params(rate)
        super().__init__(self.rate.size(), validate_args=validate_args)

    def rsample(self, sample_shape=()):
        u = pylucid.empty(self._extended_shape(sample_shape), dtype=self.rate.dtype).exponential_()
        return u / self.rate

    def log_prob(self, value):
        self._check_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        self._check_sample(value)
        return 1 - pylucid.exp(-self.rate * value)

    def icdf(self, value):
        return -pylucid.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return pylucid.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)


class Laplace(Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _float_params(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def rsample(self, sample_shape=()):
        eps = pylucid.finfo(self.loc.dtype).eps
        u = pylucid.empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * pylucid.log1p(-u.abs())

    def log_prob(self, value):
        self._check_sample(value)
        return -pylucid.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        self._check_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * pylucid.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * pylucid.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + pylucid.log(2 * self.scale)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    @property
    def variance(self):
        return 2 * self.scale.pow(2)


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with location ``loc`` and half-width ``scale``; its mean
    and variance do not exist (nan and inf, as PyTorch reports them)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _float_params(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    def rsample(self, sample_shape=()):
        eps = pylucid.empty(self._extended_shape(sample_shape), dtype=self.loc.dtype).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        self._check_sample(value)
        return -math.log(math.pi) - self.scale.log() - pylucid.log1p(((value - self.loc) / self.scale) ** 2)

    def cdf(self, value):
        self._check_sample(value)
        return pylucid.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return pylucid.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()

    @property
    def mean(self):
        return pylucid.full_like(self.loc, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return pylucid.full_like(self.loc, math.inf)


class Geometric(Distribution):
    """The number of failures before the first success in Bernoulli trials with success
    probability ``probs`` (or ``logits``): values 0, 1, 2, ..."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = _float_params(probs)
            param = self.probs
        else:
            (self.logits,) = _float_params(logits)
            param = self.logits
        super().__init__(param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found invalid "
                             f"values:\n{self.probs}")

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    def sample(self, sample_shape=()):
        tiny = pylucid.finfo(self.probs.dtype).tiny
        with pylucid.no_grad():
            u = pylucid.empty(self._extended_shape(sample_shape), dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / pylucid.log1p(-self.probs)).floor()

    def log_prob(self, value):
        self._check_sample(value)
        value, probs = pylucid.broadcast_tensors(value.to(self.probs.dtype), self.probs)
        probs = probs.masked_fill((probs == 1) & (value == 0), 0.0)
        return value * pylucid.log1p(-probs) + self.probs.log()

    def entropy(self):
        return pylucid.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                                      reduction="none") / self.probs

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return pylucid.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs
