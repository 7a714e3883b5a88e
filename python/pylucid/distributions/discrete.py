"""Discrete distributions: ``Categorical``, ``OneHotCategorical`` and ``Bernoulli``,
each built from ``probs`` or ``logits`` (exactly one), with the other derived as PyTorch does
(probabilities clamped to ``[eps, 1 - eps]`` before their log)."""
import math

import pylucid
from pylucid.nn import functional as F

from . import constraints
from .distribution import Distribution, _float_params
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli", "Categorical", "OneHotCategorical"]


def _one_of(probs, logits):
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


class Categorical(Distribution):
    """A distribution over ``0 .. K-1`` given by the last dim of ``probs`` (non-negative, normalised
    here) or ``logits`` (unnormalised log-probabilities)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        param = probs if probs is not None else logits
        if param.ndim < 1:
            raise ValueError("`probs` or `logits` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = param.shape[-1]
        super().__init__(param.size()[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.__dict__["probs" if self._param is self.__dict__.get("probs") else "logits"]
        return new

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self):
        return self._batch_shape + (self._num_events,)

    def sample(self, sample_shape=()):
        n = math.prod(sample_shape)
        probs = self.probs.detach().reshape(-1, self._num_events)
        draws = pylucid.multinomial(probs, n, True).transpose(0, 1)  # (n, prod(batch))
        return draws.reshape(*self._extended_shape(sample_shape))

    def log_prob(self, value):
        self._check_sample(value)
        value = value.long().unsqueeze(-1)
        shape = pylucid.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape[:-1]) + (1,))
        value = value.expand(*shape)
        logits = self.logits.expand(*shape[:-1], self._num_events)
        return logits.gather(-1, value).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=pylucid.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = pylucid.arange(self._num_events).reshape(-1, *[1] * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values

    @property
    def mean(self):
        return pylucid.full(self._batch_shape, math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return pylucid.full(self._batch_shape, math.nan, dtype=self.probs.dtype)


class OneHotCategorical(Distribution):
    """``Categorical`` with one-hot vectors of length K as its values."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True
    _batched = ("_categorical",)

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    def sample(self, sample_shape=()):
        idx = self._categorical.sample(sample_shape)
        return F.one_hot(idx, self._event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value):
        self._check_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        k = self._event_shape[0]
        values = pylucid.eye(k, dtype=self.probs.dtype).reshape(k, *[1] * len(self._batch_shape), k)
        return values.expand(k, *self._batch_shape, k) if expand else values

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return F.one_hot(self.probs.argmax(-1), self._event_shape[0]).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)


class Bernoulli(Distribution):
    """The distribution of a 0/1 variable that is 1 with probability ``probs`` (or ``sigmoid(logits)``)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits)
        if probs is not None:
            (self.probs,) = _float_params(probs)
            param = self.probs
        else:
            (self.logits,) = _float_params(logits)
            param = self.logits
        super().__init__(param.size(), validate_args=validate_args)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @property
    def param_shape(self):
        return self._batch_shape

    def sample(self, sample_shape=()):
        with pylucid.no_grad():
            return pylucid.bernoulli(self.probs.expand(*self._extended_shape(sample_shape)).contiguous())

    def log_prob(self, value):
        self._check_sample(value)
        logits, value = pylucid.broadcast_tensors(self.logits, value.to(self.logits.dtype))
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = pylucid.arange(2, dtype=self.probs.dtype).reshape(-1, *[1] * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        m = (self.probs >= 0.5).to(self.probs.dtype)
        return pylucid.where(self.probs == 0.5, pylucid.full_like(m, math.nan), m)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)
