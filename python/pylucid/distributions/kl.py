"""``kl_divergence(p, q)``: closed forms registered per pair of distribution types with
:func:`register_kl` (the pairs PyTorch registers); the most specific registered pair (by the
types' MRO) is used. Pairs whose supports do not nest give inf, as PyTorch's."""
import math

import pylucid
from pylucid import special
from pylucid.nn import functional as F

from .continuous import MultivariateNormal, Normal, Uniform
from .counts import Binomial, ContinuousBernoulli, Poisson
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Independent, _sum_rightmost
from .gamma import Beta, Dirichlet, Gamma
from .mixture import LowRankMultivariateNormal
from .more import Cauchy, Exponential, Geometric, Laplace
from .transformed import Gumbel, HalfNormal, Pareto, TransformedDistribution

__all__ = ["kl_divergence", "register_kl"]

_EULER = 0.57721566490153286060

_KL: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of ``type_p`` from ``type_q``."""
    if not isinstance(type_p, type) or not isinstance(type_q, type):
        raise TypeError(f"Expected type_p and type_q to be subclasses of Distribution but got {type_p} and {type_q}")

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


def _inf_where(t, mask, value=math.inf):
    shape = pylucid.broadcast_shapes(tuple(t.shape), tuple(mask.shape))
    t = t.expand(*shape)
    return pylucid.where(mask.expand(*shape), pylucid.full_like(t, value), t)


def _infinite_like(t):
    return pylucid.full_like(t, math.inf)


def _x_log_x(t):
    return t * t.log()


def _trace_xxt(bmat):
    """The trace of ``X X^T`` for each matrix of a batch: the sum of its squares."""
    return bmat.pow(2).reshape(*bmat.shape[:-2], -1).sum(-1)


def _mahalanobis(tril, x):
    """``|tril^-1 x|^2`` for lower-triangular ``tril`` (..., n, n) and vectors ``x`` (..., n)."""
    shape = pylucid.broadcast_shapes(tuple(tril.shape[:-2]), tuple(x.shape[:-1]))
    n = tril.shape[-1]
    z = pylucid.linalg.solve_triangular(tril.expand(*shape, n, n), x.expand(*shape, n).unsqueeze(-1), upper=False)
    return z.squeeze(-1).pow(2).sum(-1)


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
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


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


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
@register_kl(Uniform, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - pylucid.log1p(-q.probs) - q._cont_bern_log_norm()
    if isinstance(p, Uniform):
        result = _inf_where(result, (p.high >= 1.0) | (p.low <= 0.0))
    return result


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    c1, c0 = p.concentration1, p.concentration0
    t2 = special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (special.digamma(c1) - special.digamma(c1 + c0))
    return -p.entropy() + t2 - t3 + q.rate * c1 / (c1 + c0)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    c1, c0 = p.concentration1, p.concentration0
    e_beta = c1 / (c1 + c0)
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (e_beta * (1 - e_beta) / (c1 + c0 + 1) + e_beta.pow(2)) * 0.5
    return -p.entropy() + t2 + (t3 - q.loc * e_beta + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low > 0.0) | (q.high < 1.0))


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _inf_where(kl, p.total_count > q.total_count)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log() - (4 * p.scale * q.scale).log()


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + pylucid.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - pylucid.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low >= 0.0) | (q.high <= 1.0))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = special.lgamma(sum_p) - special.lgamma(sum_q)
    t2 = (special.lgamma(p.concentration) - special.lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = special.digamma(p.concentration) - special.digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * ratio.log() + ratio + special.lgamma(q.concentration) + q.concentration * _EULER
            - (1 + _EULER))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    return prod.log() - 1 - ratio + ratio.exp() * prod / (prod + 1) + prod.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    return t1 - 1 + (rate_sqr.reciprocal() - q.loc / p.rate + q.loc.pow(2) * 0.5) / var_normal


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    a = p.concentration
    prod = p.rate * q.scale
    ratio = q.loc / q.scale
    t1 = (a - 1) * special.digamma(a) - special.lgamma(a) - a
    t2 = prod.log() + a / prod
    t3 = ratio.exp() * (1 + prod.reciprocal()).pow(-a) - ratio
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    a = p.concentration
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = 0.5 * (beta_sqr * var_normal * 2 * math.pi).log() - a - special.lgamma(a)
    t2 = 0.5 * (a.pow(2) + a) / beta_sqr
    t3 = q.loc * a / p.rate
    return t1 + (a - 1) * special.digamma(a) + (t2 - t3 + 0.5 * q.loc.pow(2)) / var_normal


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - pylucid.log1p(-q.probs) / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t3 = (ct2 + special.lgamma(1 + ct1) - ct3).exp()
    return -ct1.log() - ct2 + ct3 + ct1 * _EULER + t3 - (1 + _EULER)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + diff / q.scale + scale_ratio * (-diff / p.scale).exp() - 1


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * ratio / math.pi).log()
    return -t1 + ratio + (0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)) / var_normal - 1


def _lowrank_logdet(d):
    tril = d._capacitance_tril
    return 2 * tril.diagonal(0, -2, -1).log().sum(-1) + d._unbroadcasted_cov_diag.log().sum(-1)


def _lowrank_mahalanobis(d, x):
    w, diag = d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag
    wt_dinv_x = ((w.transpose(-1, -2) / diag.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x.pow(2) / diag).sum(-1) - _mahalanobis(d._capacitance_tril, wt_dinv_x)


def _check_events(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         "cannot be computed")


def _woodbury_a(q):
    qwt_qdinv = q._unbroadcasted_cov_factor.transpose(-1, -2) / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return pylucid.linalg.solve_triangular(q._capacitance_tril, qwt_qdinv, upper=False)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_events(p, q)
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    a = _woodbury_a(q)
    pw, pd, qd = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    term21 = (pd / qd).sum(-1)
    term22 = _trace_xxt(pw * qd.rsqrt().unsqueeze(-1))
    term23 = _trace_xxt(a * pd.sqrt().unsqueeze(-2))
    term24 = _trace_xxt(a @ pw)
    return 0.5 * (term1 + term21 + term22 - term23 - term24 + term3 - p.event_shape[0])


def _combined(a, b, n, m):
    shape = pylucid.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    return a.expand(*shape, *a.shape[-2:]), b.expand(*shape, n, m)


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _check_events(p, q)
    q_tril = q._unbroadcasted_scale_tril
    term1 = 2 * q_tril.diagonal(0, -2, -1).log().sum(-1) - _lowrank_logdet(p)
    term3 = _mahalanobis(q_tril, q.loc - p.loc)
    n = p.event_shape[0]
    qt, pw = _combined(q_tril, p._unbroadcasted_cov_factor, n, p.cov_factor.shape[-1])
    qt2, pd = _combined(q_tril, pylucid.diag_embed(p._unbroadcasted_cov_diag.sqrt()), n, n)
    term21 = _trace_xxt(pylucid.linalg.solve_triangular(qt, pw, upper=False))
    term22 = _trace_xxt(pylucid.linalg.solve_triangular(qt2, pd, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - n)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _check_events(p, q)
    p_tril = p._unbroadcasted_scale_tril
    term1 = _lowrank_logdet(q) - 2 * p_tril.diagonal(0, -2, -1).log().sum(-1)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    a = _woodbury_a(q)
    term21 = _trace_xxt(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _trace_xxt(a @ p_tril)
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    pt, qt = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = qt.diagonal(0, -2, -1).log().sum(-1) - pt.diagonal(0, -2, -1).log().sum(-1)
    n = p.event_shape[0]
    qt_b, pt_b = _combined(qt, pt, n, n)
    term2 = _trace_xxt(pylucid.linalg.solve_triangular(qt_b, pt_b, upper=False))
    term3 = _mahalanobis(qt, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    t3 = (-mean_ratio + 0.5 * var_ratio + loc_ratio).exp()
    return -var_ratio.log() * 0.5 + mean_ratio - loc_ratio + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    diff = p.loc - q.loc
    ratio = p.scale / q.scale
    diff_ratio = diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * diff_ratio.pow(2)).exp()
    t3 = diff * pylucid.erf(math.sqrt(0.5) * diff_ratio)
    return -ratio.log() + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    prod = p.scale * q.rate
    result = (p.alpha / prod).log() - p.alpha.reciprocal() + p.alpha * prod / (p.alpha - 1) - 1
    return _inf_where(result, p.alpha <= 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t2 = special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    result = p.alpha.log() - common + t2 + (1 - q.concentration) * common + t4 - 1
    return _inf_where(result, p.alpha <= 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    return _inf_where(t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1, p.alpha <= 2)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(result, p.scale < q.scale)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    common = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - common) / common
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + common) / common
    t4 = (special.lgamma(q.concentration1) + special.lgamma(q.concentration0)
          - special.lgamma(q.concentration1 + q.concentration0))
    return _inf_where(t3 + t4 - common.log() - t2, (p.high > 1.0) | (p.low < 0.0))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(result, p.low < 0.0)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    common = p.high - p.low
    t2 = special.lgamma(q.concentration) - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - common) / common
    result = -common.log() + t2 + t3 + q.rate * (p.high + p.low) / 2
    return _inf_where(result, p.low < 0.0)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    return common.log() + 0.5 * (high + low) - common * ((-high).exp() - (-low).exp())


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common).log()
    return t1 + 0.5 * (common.pow(2) / 12 + ((p.high + p.low - 2 * q.loc) / 2).pow(2)) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _inf_where(t2 * (q.alpha + 1) - t1, p.low < q.scale)


def _register_infinite(pairs, param):
    def fn(p, q):
        return _infinite_like(getattr(p, param))
    for tp, tq in pairs:
        register_kl(tp, tq)(fn)


_register_infinite([(Beta, Pareto)], "concentration1")
_register_infinite([(ContinuousBernoulli, Pareto)], "probs")
_register_infinite([(Exponential, t) for t in (Beta, ContinuousBernoulli, Pareto, Uniform)], "rate")
_register_infinite([(Gamma, t) for t in (Beta, ContinuousBernoulli, Pareto, Uniform)], "concentration")
_register_infinite([(Gumbel, t) for t in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)], "loc")
_register_infinite([(Laplace, t) for t in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)], "loc")
_register_infinite([(Normal, t) for t in (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)], "loc")
_register_infinite([(Pareto, t) for t in (Beta, ContinuousBernoulli, Uniform)], "scale")
_register_infinite([(Poisson, t) for t in (Bernoulli, Binomial)], "rate")
