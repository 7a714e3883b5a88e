"""Probability distributions, as the part of ``torch.distributions`` that tutorials use:
``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical`` (``sample``, ``rsample`` where it
exists, ``log_prob``, ``entropy``, ``mean``/``variance``) and ``kl_divergence`` between two of the
same family. Samples are drawn by the same random calls as PyTorch's, so a seed gives PyTorch's
samples; ``log_prob``, ``entropy``, ``rsample`` and the KL terms are differentiable.

>>> import pylucid
>>> from pylucid.distributions import Categorical, Normal
>>> d = Normal(pylucid.tensor([0.0, 1.0]), pylucid.tensor([1.0, 2.0]))
>>> d.batch_shape, [round(v, 4) for v in d.log_prob(pylucid.tensor([0.0, 1.0])).tolist()]
(pylucid.Size([2]), [-0.9189, -1.6121])
>>> round(Categorical(probs=pylucid.tensor([0.5, 0.5])).entropy().item(), 4)
0.6931
"""
import math

from . import _C
from ._C import Tensor
from ._compat import Size
from ._math_more import broadcast_shapes
from ._random import bernoulli, multinomial, rand
from ._shape import broadcast_to
from ._tensor import tensor
from .autograd.grad_mode import enable_grad, no_grad

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "kl_divergence", "register_kl"]


def _as_tensors(*values):
    """The parameters as tensors of one dtype, broadcast to one shape (numbers become tensors of
    the tensors' dtype, or of the default dtype)."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    ts = [v if isinstance(v, Tensor) else tensor(float(v), dtype=like.dtype if like is not None else None)
          for v in values]
    shape = broadcast_shapes(*[tuple(t.shape) for t in ts])
    return [t if tuple(t.shape) == tuple(shape) else broadcast_to(t, tuple(shape)) for t in ts]


def _standard_normal(shape, like):
    return _C._full(tuple(shape), 0.0, like.dtype).normal_()


class Distribution:
    """Base class: ``batch_shape`` (independent distributions side by side) and ``event_shape``
    (the shape of one draw); ``sample(sample_shape)`` returns ``sample_shape + batch_shape +
    event_shape``."""

    has_rsample = False

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=()):
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape=()):
        """A draw (no gradient) of shape ``sample_shape + batch_shape + event_shape``."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise _C.LucidError(f"{type(self).__name__} has no reparameterised sample (rsample)")

    def sample_n(self, n):
        return self.sample((n,))

    def log_prob(self, value):
        """The log density (or mass) of ``value``."""
        raise _C.LucidError(f"{type(self).__name__}: log_prob is not implemented")

    def entropy(self):
        """The entropy of each distribution in the batch."""
        raise _C.LucidError(f"{type(self).__name__}: entropy is not implemented")

    @property
    def mean(self):
        raise _C.LucidError(f"{type(self).__name__}: mean is not implemented")

    @property
    def variance(self):
        raise _C.LucidError(f"{type(self).__name__}: variance is not implemented")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def perplexity(self):
        return self.entropy().exp()

    def __repr__(self):
        return f"{type(self).__name__}()"


class Normal(Distribution):
    """The Gaussian with mean ``loc`` and standard deviation ``scale`` (broadcast together)."""

    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = _as_tensors(loc, scale)
        super().__init__(tuple(self.loc.shape))

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
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():  # torch.normal(loc, scale): a standard draw, times scale, plus loc
            return _standard_normal(shape, self.loc).mul_(self.scale.expand(shape)).add_(self.loc.expand(shape))

    def rsample(self, sample_shape=()):
        eps = _standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        var = self.scale ** 2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value):
        from ._index_ext import erfinv
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def __repr__(self):
        return f"Normal(loc: {self.loc.size()}, scale: {self.scale.size()})"


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = _as_tensors(low, high)
        super().__init__(tuple(self.low.shape))

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        r = rand(*shape, dtype=self.low.dtype)
        return self.low + r * (self.high - self.low)

    def log_prob(self, value):
        lb = self.low.le(value).to(self.low.dtype)
        ub = self.high.gt(value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def entropy(self):
        return (self.high - self.low).log()


def _clamp_probs(probs):
    eps = 2.0 ** -52 if probs.dtype == _C.dtype.float64 else 2.0 ** -23
    return probs.clamp(min=eps, max=1 - eps)


def _one_of(probs, logits, name):
    if (probs is None) == (logits is None):
        raise _C.ShapeMismatch(f"{name}: either `probs` or `logits` must be specified, but not both.")


class Bernoulli(Distribution):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits, "Bernoulli")
        self._given_probs = probs is not None
        (self._param,) = _as_tensors(probs if probs is not None else logits)
        super().__init__(tuple(self._param.shape))

    @property
    def probs(self):
        return self._param if self._given_probs else self._param.sigmoid()

    @property
    def logits(self):
        if not self._given_probs:
            return self._param
        p = _clamp_probs(self._param)
        return p.log() - (-p).log1p()

    @property
    def mean(self):
        return self.probs

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        with no_grad():
            return bernoulli(self.probs.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        from .nn.functional import binary_cross_entropy_with_logits
        logits, value = _as_tensors(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        from .nn.functional import binary_cross_entropy_with_logits
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")


class Categorical(Distribution):
    """One of ``K`` categories with probabilities ``probs`` (normalised over the last dim) or
    ``softmax(logits)``; the leading dims are the batch."""

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_of(probs, logits, "Categorical")
        p = probs if probs is not None else logits
        if not isinstance(p, Tensor) or p.dim() < 1:
            raise _C.ShapeMismatch("Categorical: `probs`/`logits` must be a tensor with at least one dimension")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._num_events = p.shape[-1]
        super().__init__(tuple(p.shape[:-1]))

    def __getattr__(self, name):
        # probs and logits are computed from each other on first use and kept, as PyTorch's lazy
        # properties; with grad mode on even when first asked for under no_grad (by sample()),
        # so that log_prob and entropy still differentiate through them.
        if name not in ("probs", "logits") or ("logits" if name == "probs" else "probs") not in self.__dict__:
            raise AttributeError(name)
        with enable_grad():
            if name == "probs":
                from .nn.functional import softmax
                self.probs = softmax(self.__dict__["logits"], -1)
            else:
                self.logits = _clamp_probs(self.__dict__["probs"]).log()
        return self.__dict__[name]

    @property
    def param_shape(self):
        return self.probs.shape

    @property
    def mean(self):
        return _C._full(tuple(self._extended_shape()), float("nan"), self.probs.dtype)

    def sample(self, sample_shape=()):
        shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples = multinomial(probs_2d, shape.numel(), True).T
        return samples.reshape(tuple(self._extended_shape(shape)))

    def log_prob(self, value):
        value = value.long().unsqueeze(-1)
        shape = broadcast_shapes(tuple(value.shape), tuple(self.logits.shape))
        value = value.expand(*shape[:-1], 1)
        return self.logits.expand(*shape).gather(-1, value).squeeze(-1)

    def entropy(self):
        lo = -3.4028234663852886e38 if self.logits.dtype != _C.dtype.float64 else -1.7976931348623157e308
        return -(self.logits.clamp(min=lo) * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        from ._tensor import arange
        values = arange(self._num_events).view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


_KL: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence between the two types."""
    def deco(fn):
        _KL[(type_p, type_q)] = fn
        return fn
    return deco


def kl_divergence(p, q):
    """``KL(p || q)``, per batch element, for the registered pairs of distributions."""
    for (tp, tq), fn in _KL.items():
        if isinstance(p, tp) and isinstance(q, tq):
            return fn(p, q)
    raise _C.LucidError(f"kl_divergence: no KL(p || q) is implemented for p={type(p).__name__}, "
                        f"q={type(q).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), float("inf"))
    return t.masked_fill((p.probs == 0).expand_as(t), 0.0).sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    from .nn.functional import softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, float("inf")).masked_fill(p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), float("inf"))
