"""``kl_divergence(p, q)``: closed forms registered per pair of distribution types with
:func:`register_kl`; the most specific registered pair (by the types' MRO) is used."""
import math

import pylucid
from pylucid import special
from pylucid.nn import functional as F

from .continuous import MultivariateNormal, Normal, Uniform
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Independent
from .gamma import Beta, Gamma
from .more import Cauchy, Exponential, Geometric, Laplace, LogNormal

__all__ = ["kl_divergence", "register_kl"]

_KL: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from ``type_q``."""
    def decorate(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorate


def kl_divergence(p, q):
    """``KL(p || q)``, one value per batch element; NotImplementedError for an unregistered pair."""
    for tp in type(p).__mro__:
        for tq in type(q).__mro__:
            if (tp, tq) in _KL:
                return _KL[tp, tq](p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                              f"{type(q).__name__}")


def _inf_where(t, mask, value):
    return pylucid.where(mask.expand(*t.shape), pylucid.full_like(t, value), t)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _inf_where(t, q.probs == 0, math.inf)
    return _inf_where(t, p.probs == 0, 0.0).sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _inf_where(_inf_where(t1, q.probs == 0, math.inf), p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _inf_where(_inf_where(t2, q.probs == 1, math.inf), p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where(_inf_where(result, q.low > p.low, math.inf), q.high < p.high, math.inf)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different event dims is not implemented")
    return p._sum_rightmost(kl_divergence(p.base_dist, q.base_dist))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = special.lgamma(q.concentration) - special.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * special.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = special.lgamma(q.concentration1) + special.lgamma(q.concentration0) + special.lgamma(sum_p)
    t2 = special.lgamma(p.concentration1) + special.lgamma(p.concentration0) + special.lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * special.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * special.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * special.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    # log|L_q| - log|L_p| + (tr((L_q^-1 L_p)(L_q^-1 L_p)^T) + |L_q^-1 (mu_q - mu_p)|^2 - n) / 2
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = lq.diagonal(0, -2, -1).log().sum(-1) - lp.diagonal(0, -2, -1).log().sum(-1)
    n = p.event_shape[0]
    batch = pylucid.broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2]))
    m = pylucid.linalg.solve_triangular(lq.expand(*batch, n, n), lp.expand(*batch, n, n), upper=False)
    term2 = m.pow(2).sum((-2, -1))
    diff = q.loc - p.loc
    batch = pylucid.broadcast_shapes(tuple(diff.shape[:-1]), tuple(lq.shape[:-2]))
    z = pylucid.linalg.solve_triangular(lq.expand(*batch, n, n), diff.expand(*batch, n).unsqueeze(-1), upper=False)
    term3 = z.squeeze(-1).pow(2).sum(-1)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + loc_abs_diff / q.scale + scale_ratio * pylucid.exp(-loc_abs_diff / p.scale) - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - pylucid.log1p(-q.probs) / p.probs - q.logits


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    # exp is the same bijection on both sides: the KL of the underlying Normals.
    return kl_divergence(p.base_dist, q.base_dist)
