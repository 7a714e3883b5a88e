"""Count and [0, 1] distributions: ``Poisson``, ``Binomial``, ``Multinomial``,
``NegativeBinomial`` (a gamma-mixed Poisson) and ``ContinuousBernoulli``. Poisson and
binomial samples are drawn by PyTorch's CPU samplers (``pylucid.poisson`` and ``_sampling``), so
a seed gives PyTorch's numbers."""
import math
import numbers

import pylucid
from pylucid import special
from pylucid.nn import functional as F

from . import _sampling, constraints
from .discrete import Categorical, _one_of
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial", "ContinuousBernoulli", "Multinomial", "NegativeBinomial", "Poisson"]


class Poisson(Distribution):
    """The Poisson distribution with ``rate`` (its mean): values 0, 1, 2, ..."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        shape = pylucid.Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        with pylucid.no_grad():
            return pylucid.poisson(self.rate.expand(*self._extended_shape(sample_shape)).contiguous())

    def log_prob(self, value):
        self._check_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return special.xlogy(value, rate) - rate - special.lgamma(value + 1)


class _BinaryCounts(Distribution):
    """``total_count`` with ``probs`` or ``logits`` (exactly one), broadcast together."""

    def __init__(self, total_count, probs, logits, validate_args):
        _one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__["probs" if self._param is self.__dict__.get("probs") else "logits"]
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryCounts):
    """The number of successes in ``total_count`` Bernoulli trials of success ``probs``."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with pylucid.no_grad():
            n = self.total_count.detach().expand(*shape).contiguous().numpy()
            p = self.probs.detach().expand(*shape).contiguous().numpy()
            return pylucid.tensor(_sampling.binomial(n, p, p.dtype.type), dtype=self.probs.dtype)

    def log_prob(self, value):
        self._check_sample(value)
        n = self.total_count
        normalize = n * _clamp_by_zero(self.logits) + n * pylucid.log1p(pylucid.exp(-self.logits.abs())) \
            - special.lgamma(n + 1)
        return value * self.logits - normalize - special.lgamma(value + 1) - special.lgamma(n - value + 1)

    def _homogeneous(self, what):
        count = int(self.total_count.max())
        if not self.total_count.min() == count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(pylucid.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous("enumerate_support")
        values = pylucid.arange(1 + count, dtype=self._param.dtype).reshape(-1, *[1] * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values


class NegativeBinomial(_BinaryCounts):
    """The number of successes before ``total_count`` failures in Bernoulli trials of success
    ``probs``: a Poisson whose rate is ``Gamma(total_count, exp(-logits))``."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        super().__init__(total_count, probs, logits, validate_args)

    @property
    def mean(self):
        return self.total_count * pylucid.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / pylucid.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=pylucid.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=()):
        with pylucid.no_grad():
            return pylucid.poisson(self._gamma.sample(sample_shape).contiguous())

    def log_prob(self, value):
        self._check_sample(value)
        n = self.total_count
        unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        normalization = -special.lgamma(n + value) + special.lgamma(1.0 + value) + special.lgamma(n)
        normalization = normalization.masked_fill(n + value == 0.0, 0.0)
        return unnormalized - normalization


class Multinomial(Distribution):
    """Counts over K categories from ``total_count`` independent ``Categorical`` draws."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    _batched = ("_categorical", "_binomial")

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else type(self).__new__(type(self))
        batch_shape = pylucid.Size(tuple(batch_shape))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(total_count=self.total_count, probs=new._categorical.probs, validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = tuple(sample_shape)
        draws = self._categorical.sample((self.total_count,) + sample_shape)  # (n, sample, batch)
        draws = draws.permute(*range(1, draws.ndim), 0)
        counts = pylucid.zeros(self._extended_shape(sample_shape), dtype=pylucid.int64)
        counts = counts.scatter_add(-1, draws, pylucid.ones_like(draws))
        return counts.to(self.probs.dtype)

    def entropy(self):
        n = pylucid.tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - special.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = pylucid.exp(self._binomial.log_prob(support))
        weights = special.lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum(0).sum(-1)

    def log_prob(self, value):
        self._check_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_factorial_n = special.lgamma(value.sum(-1) + 1)
        log_factorial_xs = special.lgamma(value + 1).sum(-1)
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0.0)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)


class ContinuousBernoulli(Distribution):
    """The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019), the
    normalised ``p^x (1 - p)^(1 - x)``; near ``probs = 1/2`` (inside ``lims``) its normaliser,
    moments and quantiles use Taylor expansions, as PyTorch's."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        self._lims = lims
        super().__init__(pylucid.Size() if is_scalar else self._param.size(), validate_args=validate_args)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return pylucid.where(self._outside_unstable_region(), self.probs, self._lims[0] * pylucid.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        p = self._cut_probs()
        below = pylucid.where(p <= 0.5, p, pylucid.zeros_like(p))
        above = pylucid.where(p >= 0.5, p, pylucid.ones_like(p))
        log_norm = (pylucid.log1p(-p) - p.log()).abs().log() - pylucid.where(p <= 0.5, pylucid.log1p(-2.0 * below),
                                                                            (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return pylucid.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / (pylucid.log1p(-p) - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return pylucid.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._cut_probs()
        v = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (pylucid.log1p(-p) - p.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return pylucid.where(self._outside_unstable_region(), v, taylor)

    def sample(self, sample_shape=()):
        u = pylucid.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with pylucid.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        return self.icdf(pylucid.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value):
        self._check_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        self._check_sample(value)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = pylucid.where(self._outside_unstable_region(), cdfs, value)
        return pylucid.where(value <= 0.0, pylucid.zeros_like(value),
                             pylucid.where(value >= 1.0, pylucid.ones_like(value), unbounded))

    def icdf(self, value):
        p = self._cut_probs()
        inner = (pylucid.log1p(-p + value * (2.0 * p - 1.0)) - pylucid.log1p(-p)) / (p.log() - pylucid.log1p(-p))
        return pylucid.where(self._outside_unstable_region(), inner, value)

    def entropy(self):
        log_probs0 = pylucid.log1p(-self.probs)
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0
