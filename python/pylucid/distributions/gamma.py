"""The gamma family: ``Gamma``, :class:`Chi2`, ``Dirichlet``, ``Beta``,
``StudentT`` and ``FisherSnedecor``. Densities and entropies use :func:`pylucid.lgamma`
and :func:`pylucid.digamma`, so they are differentiable in the parameters (to every order).
Samples are drawn by PyTorch's CPU samplers (see ``_sampling``), so a seed gives PyTorch's
numbers, and are reparameterised: a gamma sample's gradient in its concentration is the implicit
``-(dP/da) / density`` at the drawn value, and a Dirichlet sample's flows through its gammas."""
import math
import numbers

import numpy as np

import pylucid
from pylucid import special
from pylucid.autograd import Function
from pylucid.nn import functional as F

from . import _sampling, constraints
from .distribution import Distribution, _float_params

__all__ = ["Beta", "Chi2", "Dirichlet", "FisherSnedecor", "Gamma", "StudentT", "standard_gamma"]


def _np(t):
    return t.detach().numpy()


class _StandardGamma(Function):
    @staticmethod
    def forward(ctx, alpha):
        a = _np(alpha.contiguous())
        x = pylucid.tensor(_sampling.standard_gamma(a, a.dtype.type), dtype=alpha.dtype)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        dx = _sampling.standard_gamma_grad(_np(alpha), _np(x))
        return grad * pylucid.tensor(dx, dtype=alpha.dtype)


def standard_gamma(alpha):
    """Gamma(alpha, 1) samples, one per element of ``alpha`` (PyTorch's ``_standard_gamma``),
    differentiable in ``alpha``."""
    return _StandardGamma.apply(alpha)


class _Dirichlet(Function):
    @staticmethod
    def forward(ctx, alpha):
        a = _np(alpha.contiguous()).astype(np.float64)
        g = _sampling.sample_dirichlet_gammas(a)
        total = g.sum(-1, keepdims=True)
        dtype = _np(alpha).dtype
        x = np.clip((g / total).astype(dtype), np.finfo(dtype).tiny, np.nextafter(dtype.type(1), dtype.type(0)))
        x = pylucid.tensor(x, dtype=alpha.dtype)
        dg = pylucid.tensor(_sampling.standard_gamma_grad(a, g) / total, dtype=alpha.dtype)
        ctx.save_for_backward(x, dg)
        return x

    @staticmethod
    def backward(ctx, grad):
        # x_i = g_i / sum(g): d x_i / d a_j = (delta_ij - x_i) g'_j / sum(g).
        x, dg = ctx.saved_tensors
        return dg * (grad - (x * grad).sum(-1, keepdim=True))


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = _float_params(concentration, rate)
        super().__init__(self.concentration.size(), validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)
        return value.clamp(min=pylucid.finfo(value.dtype).tiny)

    def log_prob(self, value):
        value = pylucid.as_tensor(value, dtype=self.rate.dtype)
        self._check_sample(value)
        a, r = self.concentration, self.rate
        return special.xlogy(a, r) + special.xlogy(a - 1, value) - r * value - special.lgamma(a)

    def cdf(self, value):
        """``gammainc(concentration, rate * value)``, differentiable in ``value`` and ``rate``."""
        self._check_sample(value)
        return _gammainc(self.concentration, self.rate * value)

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
        return self.concentration / self.rate.pow(2)


class _GammaInc(Function):
    @staticmethod
    def forward(ctx, a, x):
        a, x = pylucid.broadcast_tensors(a, x)
        ctx.save_for_backward(a, x)
        return pylucid.tensor(_sampling.gammainc(_np(a), _np(x)), dtype=x.dtype)

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        density = ((a - 1) * x.log() - x - special.lgamma(a)).exp()
        return None, grad * density


def _gammainc(a, x):
    """The regularised lower incomplete gamma function (differentiable in ``x`` only, as PyTorch's)."""
    if a.requires_grad:
        a = a.detach()
    return _GammaInc.apply(a, x)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = Distribution.expand(self, batch_shape, _instance)
        new.concentration = self.concentration.expand(*batch_shape)
        new.rate = self.rate.expand(*batch_shape)
        return new

    @property
    def df(self):
        return self.concentration * 2


class Dirichlet(Distribution):
    """The Dirichlet distribution over the probability simplex, with ``concentration`` (..., K)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.size()[:-1], concentration.size()[-1:], validate_args=validate_args)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(*shape))

    def log_prob(self, value):
        self._check_sample(value)
        c = self.concentration
        return special.xlogy(c - 1.0, value).sum(-1) + special.lgamma(c.sum(-1)) - special.lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, keepdim=True)
        corner = F.one_hot(mode.argmax(-1), cm1.shape[-1]).to(mode.dtype)
        below = (self.concentration < 1).all(-1, keepdim=True)
        return pylucid.where(below, corner, mode)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        a0 = c.sum(-1)
        return (special.lgamma(c).sum(-1) - special.lgamma(a0) - (k - a0) * special.digamma(a0)
                - ((c - 1.0) * special.digamma(c)).sum(-1))


class Beta(Distribution):
    """The beta distribution on [0, 1] with ``concentration1`` (alpha) and ``concentration0``
    (beta): the first coordinate of a two-class ``Dirichlet``."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _batched = ("_dirichlet",)

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0, numbers.Real):
            both = pylucid.tensor([float(concentration1), float(concentration0)])
        else:
            c1, c0 = _float_params(concentration1, concentration0)
            both = pylucid.stack([c1, c0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        self._check_sample(value)
        return self._dirichlet.log_prob(pylucid.stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))


def _where(mask, value, t):
    return pylucid.where(mask, pylucid.full_like(t, value), t)


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and ``scale``."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batched = ("_chi2",)

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = _float_params(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    @property
    def mean(self):
        return _where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        m = self.scale.pow(2) * df / (df - 2)
        m = _where((df <= 2) & (df > 1), math.inf, m)
        return _where(df <= 1, math.nan, m)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        x = pylucid.randn(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * pylucid.rsqrt(z / self.df))

    def log_prob(self, value):
        self._check_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + special.lgamma(0.5 * self.df)
             - special.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * pylucid.log1p(y**2.0 / self.df) - z

    def entropy(self):
        df = self.df
        lbeta = special.lgamma(0.5 * df) + math.lgamma(0.5) - special.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (special.digamma(0.5 * (df + 1)) - special.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)


class FisherSnedecor(Distribution):
    """The F distribution with ``df1`` and ``df2`` degrees of freedom (a ratio of scaled chi-squares)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _batched = ("_gamma1", "_gamma2")

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = _float_params(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    @property
    def mean(self):
        df2 = _where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        df2 = _where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=()):
        tiny = pylucid.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        self._check_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = special.lgamma(ct1 + ct2) - special.lgamma(ct1) - special.lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * pylucid.log(value)
        t3 = (ct1 + ct2) * pylucid.log1p(ct3 * value)
        return t1 + t2 - t3
