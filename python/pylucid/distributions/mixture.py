"""``MixtureSameFamily`` (a categorical mixture of one batched component distribution),
``LowRankMultivariateNormal`` (covariance ``W W^T + diag(D)``, with the capacitance
``I + W^T D^-1 W`` doing the work: Woodbury for the Mahalanobis term, the matrix determinant
lemma for the log-determinant) and ``VonMises`` (Best and Fisher's rejection sampler on
double-precision uniforms, as PyTorch's, so a seed gives PyTorch's samples)."""
import math

import pylucid
from pylucid import special

from . import constraints
from .discrete import Categorical
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["LowRankMultivariateNormal", "MixtureSameFamily", "VonMises"]


class MixtureSameFamily(Distribution):
    """A mixture with weights from ``mixture_distribution`` (a ``Categorical`` over k) of
    the k components indexed by the rightmost batch dim of ``component_distribution``."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = pylucid.Size(tuple(batch_shape))
        new = _instance if _instance is not None else type(self).__new__(type(self))
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        dist_batch_ndims = len(self.batch_shape)
        cat_batch_ndims = len(self.mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else dist_batch_ndims - cat_batch_ndims
        xs = tuple(x.shape)
        return x.reshape(*xs[:-1], *[1] * pad_ndims, *xs[-1:], *[1] * self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # The law of total variance: Var(Y) = E[Var(Y|X)] + Var(E[Y|X]).
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        mean_cond_var = (probs * self.component_distribution.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(
            -1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        self._check_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # [S, B, k]
        log_mix_prob = pylucid.log_softmax(self.mixture_distribution.logits, dim=-1)  # [B, k]
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape=()):
        with pylucid.no_grad():
            gather_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            mix_sample = self.mixture_distribution.sample(sample_shape)  # [n, B]
            mix_shape = tuple(mix_sample.shape)
            comp_samples = self.component_distribution.sample(sample_shape)  # [n, B, k, E]
            index = mix_sample.reshape(*mix_shape, *[1] * (len(es) + 1))
            index = index.repeat(*[1] * len(mix_shape), 1, *es)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"


def _batch_mv(mat, vec):
    return (mat @ vec.unsqueeze(-1)).squeeze(-1)


def _capacitance_tril(w, d):
    """The Cholesky factor of ``I + W^T D^-1 W`` (m x m)."""
    m = w.shape[-1]
    k = (w.transpose(-1, -2) / d.unsqueeze(-2)) @ w
    return pylucid.linalg.cholesky(k + pylucid.eye(m, dtype=w.dtype))


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` (..., n) and covariance
    ``cov_factor @ cov_factor.T + diag(cov_diag)`` (``cov_factor`` (..., n, m), ``cov_diag`` (..., n))."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {pylucid.Size((n,))}")
        try:
            loc_, self.cov_factor, cov_diag_ = pylucid.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                         cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], (n,), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        for k in ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag", "_capacitance_tril"):
            new.__dict__[k] = self.__dict__[k]
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        v = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return v.expand(*self._batch_shape, *self._event_shape)

    @lazy_property
    def scale_tril(self):
        n = self._event_shape[0]
        d_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dw = self._unbroadcasted_cov_factor / d_sqrt
        k = dw @ dw.transpose(-1, -2) + pylucid.eye(n, dtype=dw.dtype)
        return (d_sqrt * pylucid.linalg.cholesky(k)).expand(*self._batch_shape, n, n)

    @lazy_property
    def covariance_matrix(self):
        w = self._unbroadcasted_cov_factor
        cov = w @ w.transpose(-1, -2) + pylucid.diag_embed(self._unbroadcasted_cov_diag)
        n = self._event_shape[0]
        return cov.expand(*self._batch_shape, n, n)

    @lazy_property
    def precision_matrix(self):
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv = w.transpose(-1, -2) / d.unsqueeze(-2)
        a = pylucid.linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        p = pylucid.diag_embed(d.reciprocal()) - a.transpose(-1, -2) @ a
        n = self._event_shape[0]
        return p.expand(*self._batch_shape, n, n)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = pylucid.randn(w_shape, dtype=self.loc.dtype)
        eps_d = pylucid.randn(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def _logdet(self):
        tril = self._capacitance_tril
        return 2 * tril.diagonal(0, -2, -1).log().sum(-1) + self._unbroadcasted_cov_diag.log().sum(-1)

    def log_prob(self, value):
        self._check_sample(value)
        diff = value - self.loc
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv_x = _batch_mv(w.transpose(-1, -2) / d.unsqueeze(-2), diff)
        term1 = (diff.pow(2) / d).sum(-1)
        tril = self._capacitance_tril
        shape = pylucid.broadcast_shapes(tuple(tril.shape[:-2]), tuple(wt_dinv_x.shape[:-1]))
        m = tril.shape[-1]
        z = pylucid.linalg.solve_triangular(tril.expand(*shape, m, m), wt_dinv_x.expand(*shape, m).unsqueeze(-1),
                                            upper=False).squeeze(-1)
        mahalanobis = term1 - z.pow(2).sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + mahalanobis)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return h.expand(*self._batch_shape) if len(self._batch_shape) else h


def _log_i0(x):
    return special.i0e(x).log() + x


def _log_i1(x):
    return special.i1e(x).log() + x


class VonMises(Distribution):
    """The von Mises (circular normal) distribution on angles ``[-pi, pi)`` with mean direction
    ``loc`` and ``concentration``; ``sample`` is not reparameterised (as PyTorch's)."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value):
        self._check_sample(value)
        lp = self.concentration * pylucid.cos(value - self.loc)
        return lp - math.log(2 * math.pi) - _log_i0(self.concentration)

    @lazy_property
    def _loc(self):
        return self.loc.to(pylucid.float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(pylucid.float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho**2) / (2 * rho)
        return pylucid.where(kappa < 1e-5, 1 / kappa + kappa, r)  # small kappa: second-order Taylor

    def sample(self, sample_shape=()):
        with pylucid.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            loc, kappa, r = self._loc.detach(), self._concentration.detach(), self._proposal_r.detach()
            x = pylucid.zeros(shape, dtype=pylucid.float64)
            done = pylucid.zeros(shape, dtype=pylucid._C.dtype.bool)
            while not bool(done.all()):
                u1, u2, u3 = pylucid.rand((3,) + shape, dtype=pylucid.float64).unbind()
                z = pylucid.cos(math.pi * u1)
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                if bool(accept.any()):
                    x = pylucid.where(accept, (u3 - 0.5).sign() * f.acos(), x)
                    done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        for k in ("_loc", "_concentration", "_proposal_r"):
            new.__dict__.pop(k, None)
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return 1 - (_log_i1(self.concentration) - _log_i0(self.concentration)).exp()
