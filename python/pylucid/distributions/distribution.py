"""The :class:`Distribution` base (shapes, sampling entry points, argument validation) and
:class:`Independent`, which reinterprets batch dims of another distribution as event dims."""
import pylucid
from pylucid import _C

__all__ = ["Distribution", "Independent"]


class Distribution:
    """A batch of probability distributions of shape ``batch_shape``, each over values of shape
    ``event_shape``. Subclasses implement ``rsample`` (reparameterised, differentiable samples) or
    ``sample``, ``log_prob`` and ``entropy``; samples come from pylucid's generator, so
    :func:`pylucid.manual_seed` makes them repeatable (the stream is pylucid's, not PyTorch's).
    With ``validate_args`` (on by default, as in PyTorch) invalid parameters and out-of-support
    values raise :class:`ValueError`."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    _params: tuple = ()  # the parameters repr shows (those set, or derived so far), as PyTorch's

    @staticmethod
    def set_default_validate_args(value):
        """Turns argument validation on or off for distributions created without ``validate_args``."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected a bool, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = pylucid.Size(tuple(batch_shape))
        self._event_shape = pylucid.Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = validate_args

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _check(self, name, value, ok):
        """Raises ValueError naming parameter ``name`` when the bool tensor ``ok`` is not all True."""
        if self._validate_args and not bool(ok.all()):
            raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) of "
                             f"distribution {self!r} to satisfy its constraint, but found invalid values:\n{value}")

    def _support(self, value):
        """A bool tensor: where ``value`` is in the support (every real number by default)."""
        return value == value

    def _validate_sample(self, value):
        if not self._validate_args:
            return
        if not isinstance(value, pylucid.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        shape = tuple(value.shape)
        n = len(self._event_shape)
        if n and shape[len(shape) - n:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {shape} vs {self._event_shape}.")
        try:
            pylucid.broadcast_shapes(shape, self._batch_shape + self._event_shape)
        except _C.ShapeMismatch:
            raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {shape} vs "
                             f"{self._batch_shape + self._event_shape}.") from None
        if not bool(self._support(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {shape}) to be within the "
                             f"support of {type(self).__name__}, but found invalid values:\n{value}")

    def _extended_shape(self, sample_shape=()):
        return pylucid.Size(tuple(sample_shape) + self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} does not support rsample")

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape`` (not differentiable)."""
        with pylucid.no_grad():
            return self.rsample(sample_shape)

    def sample_n(self, n):
        """``n`` samples: ``sample((n,))``."""
        return self.sample((n,))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return pylucid.exp(self.entropy())

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def __repr__(self):
        shown = [(k, getattr(self, k)) for k in self._params
                 if k in self.__dict__ or isinstance(getattr(type(self), k, None), property)]
        body = ", ".join(f"{k}: {v.size() if v.numel() != 1 else v}" for k, v in shown)
        return f"{type(self).__name__}({body})"


def _float_params(*values):
    """Numbers and tensors as floating tensors of one broadcast shape (PyTorch's ``broadcast_all``)."""
    tensors = [v for v in values if isinstance(v, pylucid.Tensor)]
    dtype = tensors[0].dtype if tensors and tensors[0].dtype.is_floating_point else pylucid.get_default_dtype()
    ts = [v if isinstance(v, pylucid.Tensor) else pylucid.tensor(float(v), dtype=dtype) for v in values]
    ts = [t if t.dtype.is_floating_point else t.to(dtype) for t in ts]
    return pylucid.broadcast_tensors(*ts)


class Independent(Distribution):
    """``base_distribution`` with its last ``reinterpreted_batch_ndims`` batch dims read as event
    dims: ``log_prob`` and ``entropy`` sum over them (e.g. a diagonal Normal over vectors)."""

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = reinterpreted_batch_ndims
        if n > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual "
                             f"{n} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        k = len(base_distribution.event_shape) + n
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        self.has_rsample = base_distribution.has_rsample
        super().__init__(shape[:len(shape) - k], shape[len(shape) - k:], validate_args)

    def _sum_rightmost(self, x):
        n = self.reinterpreted_batch_ndims
        return x.reshape(*x.shape[:x.ndim - n], -1).sum(-1) if n else x

    def rsample(self, sample_shape=()):
        return self.base_dist.rsample(sample_shape)

    def sample(self, sample_shape=()):
        return self.base_dist.sample(sample_shape)

    def log_prob(self, value):
        return self._sum_rightmost(self.base_dist.log_prob(value))

    def entropy(self):
        return self._sum_rightmost(self.base_dist.entropy())

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

