# mypy: disable-error-code="override,assignment"
"""The ``Distribution`` base (shapes, sampling entry points, ``arg_constraints``/``support``
validation, ``expand``) and ``Independent``, which reinterprets batch dims of another
distribution as event dims."""
import warnings

import pylucid

from . import constraints
from .utils import _float_params, lazy_property

__all__ = ["Distribution", "Independent", "_float_params"]


class Distribution:
    """A batch of probability distributions of shape ``batch_shape``, each over values of shape
    ``event_shape``. Subclasses set ``arg_constraints`` and ``support`` and implement ``rsample``
    (reparameterised, differentiable samples) or ``sample``, ``log_prob`` and ``entropy``; samples
    come from pylucid's generator, so :func:`pylucid.manual_seed` makes them repeatable. With
    ``validate_args`` (on by default, as in PyTorch) parameters outside ``arg_constraints`` and
    values outside ``support`` raise ``ValueError``."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turns argument validation on or off for distributions created without ``validate_args``."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = pylucid.Size(tuple(batch_shape))
        self._event_shape = pylucid.Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = validate_args
        if not self._validate_args:
            return
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                          "or initialize the distribution with `validate_args=False` to turn off validation.")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # skip constraints that cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                continue  # skip checking lazily-constructed args
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, but found "
                                 f"invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters broadcast to ``batch_shape`` (views, no copies)."""
        batch_shape = pylucid.Size(tuple(batch_shape))
        new = _instance if _instance is not None else type(self).__new__(type(self))
        n = len(self._batch_shape)
        names = self._expand_names()
        for k, v in self.__dict__.items():
            if k in ("_batch_shape", "_event_shape"):
                continue
            if k not in names and isinstance(getattr(type(self), k, None), lazy_property):
                continue  # derived on first use: the expanded copy derives its own
            if isinstance(v, pylucid.Tensor) and k in names:
                v = v.expand(*batch_shape, *v.shape[n:])
            elif isinstance(v, Distribution) and k in names:
                v = v.expand(batch_shape + v.batch_shape[n:])
            new.__dict__[k] = v
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _expand_names(self):
        """Attributes whose leading dims are the batch dims (tensors) or that are distributions
        batched over them; ``expand`` broadcasts these."""
        try:
            names = set(self.arg_constraints)
        except NotImplementedError:
            names = set()
        return names | set(getattr(self, "_batched", ()))

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        """Parameter name -> ``constraints`` object that the parameter must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The ``constraints`` object of the values this distribution takes."""
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError(f"{self.__class__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{self.__class__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape`` (not differentiable)."""
        with pylucid.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        """``n`` samples: ``sample((n,))``."""
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(pylucid.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return pylucid.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        if not isinstance(sample_shape, pylucid.Size):
            sample_shape = pylucid.Size(tuple(sample_shape))
        return pylucid.Size(tuple(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """PyTorch's checks of a value handed to ``log_prob``/``cdf``: a tensor, whose rightmost
        dims are ``event_shape``, broadcastable with the batch, inside ``support``."""
        if not isinstance(value, pylucid.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.ndim - len(self._event_shape)
        if tuple(value.shape[start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.")
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, but found invalid "
                             f"values:\n{value}")

    def _check_sample(self, value):
        if self._validate_args:
            self._validate_sample(value)

    def __repr__(self):
        try:
            names = [k for k in self.arg_constraints if k in self.__dict__]
        except NotImplementedError:
            names = []
        body = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return f"{type(self).__name__}({body})"


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    return value.reshape(*value.shape[:value.ndim - dim], -1).sum(-1) if dim else value


class Independent(Distribution):
    """``base_distribution`` with its last ``reinterpreted_batch_ndims`` batch dims read as event
    dims: ``log_prob`` and ``entropy`` sum over them (e.g. a diagonal Normal over vectors)."""

    arg_constraints: dict = {}
    _batched = ("base_dist",)

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = reinterpreted_batch_ndims
        if n > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{n} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        k = len(base_distribution.event_shape) + n
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[:len(shape) - k], shape[len(shape) - k:], validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    def _sum_rightmost(self, x):
        return _sum_rightmost(x, self.reinterpreted_batch_ndims)

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
