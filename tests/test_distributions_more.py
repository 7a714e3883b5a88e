"""pylucid.distributions without torch: densities integrate (mass functions sum) to one, sample
means and variances agree with the ``mean``/``variance`` properties, reparameterised samples have
float64 finite-difference gradients (the gamma family's implicit gradient against a difference of
its cdf), transforms invert and their log-Jacobians equal numerical derivatives, and constraints,
expand and validation behave as PyTorch's."""
import math

import numpy as np
import pytest

import pylucid
import pylucid.distributions as D
from pylucid.autograd import gradcheck
from pylucid.distributions import _sampling, constraints, transforms


def _t(a, grad=False):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


CONTINUOUS = [
    ("StudentT", (3.0, 0.5, 1.5), (-60, 60)), ("Chi2", (3.0,), (0, 80)), ("FisherSnedecor", (5.0, 7.0), (0, 200)),
    ("HalfNormal", (1.3,), (0, 12)), ("HalfCauchy", (1.0,), (0, 4000)), ("Gumbel", (0.5, 2.0), (-15, 60)),
    ("Weibull", (1.5, 2.0), (0, 15)), ("Pareto", (1.0, 3.0), (1, 300)), ("Kumaraswamy", (2.0, 3.0), (0, 1)),
    ("ContinuousBernoulli", (0.3,), (0, 1)), ("VonMises", (0.5, 2.0), (-math.pi, math.pi)),
    ("Gamma", (2.5, 1.5), (0, 40)), ("Beta", (2.0, 3.0), (0, 1)), ("LogNormal", (0.0, 0.5), (0, 30)),
]


@pytest.mark.parametrize("name,args,span", CONTINUOUS)
def test_density_integrates_to_one_and_moments(name, args, span):
    """Guards against a density off by a constant, or moments that do not match the samples."""
    d = getattr(D, name)(*[_t(a) for a in args])
    lo, hi = span
    x = lo + (hi - lo) * np.linspace(0, 1, 400001)[1:-1] ** 2  # dense near the lower end of the support
    dens = np.exp(d.log_prob(_t(x)).numpy())
    assert np.trapezoid(dens, x) == pytest.approx(1.0, abs=2e-3)
    pylucid.manual_seed(0)
    s = d.sample((40000,)).numpy()
    mean, var = d.mean.numpy(), d.variance.numpy()
    if np.isfinite(mean) and np.isfinite(var) and name != "VonMises":  # (its mean is a circular one)
        assert s.mean() == pytest.approx(float(mean), abs=4 * math.sqrt(var / len(s)) + 1e-3)
        if name != "FisherSnedecor":  # heavy tail: the sample variance converges slowly
            assert s.var() == pytest.approx(float(var), rel=0.08)
    assert bool(d.support.check(pylucid.tensor(s)).all())


@pytest.mark.parametrize("name,args,top", [("Poisson", (3.5,), 60), ("Binomial", (12.0, 0.3), 12),
                                           ("NegativeBinomial", (4.0, 0.4), 200), ("Geometric", (0.3,), 200)])
def test_mass_sums_to_one_and_moments(name, args, top):
    """Guards against a wrong count distribution's mass function or sampler."""
    d = getattr(D, name)(*[_t(a) for a in args])
    k = np.arange(top + 1, dtype=np.float64)
    assert np.exp(d.log_prob(_t(k)).numpy()).sum() == pytest.approx(1.0, abs=1e-9)
    pylucid.manual_seed(1)
    s = d.sample((40000,)).numpy()
    assert s.mean() == pytest.approx(float(d.mean), abs=4 * math.sqrt(float(d.variance) / len(s)))
    assert s.var() == pytest.approx(float(d.variance), rel=0.06)


def test_multinomial_dirichlet_relaxed_statistics():
    """Guards against the vector samplers drawing from the wrong law."""
    probs = _t([0.2, 0.3, 0.5])
    pylucid.manual_seed(2)
    m = D.Multinomial(10, probs=probs)
    s = m.sample((5000,))
    assert bool((s.sum(-1) == 10).all())
    np.testing.assert_allclose(s.mean(0).numpy(), m.mean.numpy(), atol=0.08)
    dr = D.Dirichlet(_t([0.5, 2.0, 3.0]))
    s = dr.sample((20000,))
    np.testing.assert_allclose(s.mean(0).numpy(), dr.mean.numpy(), atol=0.01)
    np.testing.assert_allclose(s.var(0).numpy(), dr.variance.numpy(), rtol=0.08)
    r = D.RelaxedOneHotCategorical(_t(0.3), probs=probs).sample((20000,))
    np.testing.assert_allclose(r.sum(-1).numpy(), 1.0, rtol=1e-12)
    np.testing.assert_allclose((r.argmax(-1).numpy()[:, None] == np.arange(3)).mean(0), probs.numpy(), atol=0.02)


def test_standard_gamma_matches_the_law():
    """Guards against the Marsaglia-Tsang sampler (and its alpha < 1 boost) drawing the wrong law:
    the empirical cdf agrees with the regularised incomplete gamma function."""
    for a in (0.2, 0.9, 1.0, 4.5):
        pylucid.manual_seed(3)
        s = np.sort(_sampling.standard_gamma(np.full(20000, a), np.float64))
        ecdf = np.arange(1, len(s) + 1) / len(s)
        assert np.abs(_sampling.gammainc(np.full(len(s), a), s) - ecdf).max() < 0.015


def test_gammainc_against_series_and_gamma_cdf():
    """Guards against a wrong incomplete gamma function: P(1, x) = 1 - exp(-x) and P(a, x) for
    integer a is a Poisson tail."""
    x = np.array([0.01, 0.5, 2.0, 7.0, 30.0])
    np.testing.assert_allclose(_sampling.gammainc(np.ones(5), x), -np.expm1(-x), rtol=1e-12)
    a = 4.0
    tail = 1 - np.exp(-x) * sum(x**k / math.factorial(k) for k in range(4))
    np.testing.assert_allclose(_sampling.gammainc(np.full(5, a), x), tail, rtol=1e-9, atol=1e-15)
    c = D.Gamma(_t(2.0), _t(3.0)).cdf(_t([0.5]))
    assert c.item() == pytest.approx(1 - math.exp(-1.5) * (1 + 1.5), rel=1e-12)


def test_gamma_rsample_gradient_is_the_implicit_one():
    """Guards against a wrong reparameterised gamma gradient: dx/da must equal -dP(a, x)/da over
    the density at the drawn x, here by a central difference of P in a, and flow through rate."""
    a = _t([0.4, 1.0, 3.0, 12.0], grad=True)
    rate = _t([2.0, 1.0, 0.5, 3.0], grad=True)
    pylucid.manual_seed(4)
    x = D.Gamma(a, rate).rsample()
    x.sum().backward()
    z = (x * rate).detach().numpy()  # the standard gamma draw
    av, h = a.detach().numpy(), 1e-6
    dp = (_sampling.gammainc(av + h, z) - _sampling.gammainc(av - h, z)) / (2 * h)
    dens = np.exp((av - 1) * np.log(z) - z - np.vectorize(math.lgamma)(av))
    np.testing.assert_allclose(a.grad.numpy(), -dp / dens / rate.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(rate.grad.numpy(), -x.detach().numpy() / rate.detach().numpy(), rtol=1e-12)


def test_dirichlet_and_beta_rsample_gradients_are_unbiased():
    """Guards against a wrong Dirichlet/Beta reparameterisation: the mean of the sample gradient
    equals the gradient of the mean, d/da a / (a + b) = b / (a + b)^2."""
    a = _t([2.0], grad=True)
    pylucid.manual_seed(5)
    D.Beta(a, _t([3.0])).rsample((40000,)).mean().backward()
    assert a.grad.item() == pytest.approx(3.0 / 25.0, rel=0.05)
    c = _t([1.0, 2.0, 3.0], grad=True)
    D.Dirichlet(c).rsample((40000,))[:, 0].mean().backward()
    np.testing.assert_allclose(c.grad.numpy(), [5 / 36, -1 / 36, -1 / 36], atol=0.006)


REPARAM = [("StudentT", lambda df, loc: D.StudentT(5.0, loc, df)), ("HalfNormal", lambda s, _: D.HalfNormal(s)),
           ("Gumbel", lambda s, loc: D.Gumbel(loc, s)), ("Weibull", lambda s, c: D.Weibull(s, c + 1.0)),
           ("Pareto", lambda s, a: D.Pareto(s, a + 1.0)), ("Kumaraswamy", lambda a, b: D.Kumaraswamy(a, b + 1.0)),
           ("LogisticNormal", lambda s, loc: D.LogisticNormal(loc, s)),
           ("RelaxedBernoulli", lambda t, p: D.RelaxedBernoulli(t, probs=p.sigmoid())),
           ("RelaxedOneHotCategorical", lambda t, p: D.RelaxedOneHotCategorical(t[0], logits=p)),
           ("ContinuousBernoulli", lambda s, p: D.ContinuousBernoulli(logits=p)),
           ("LowRankMultivariateNormal", lambda s, p: D.LowRankMultivariateNormal(p, p.reshape(2, 1) * s, s + 1.0))]


@pytest.mark.parametrize("name,make", REPARAM)
def test_rsample_and_log_prob_gradcheck(name, make):
    """Guards against a wrong gradient of a reparameterised sample (seeded, so the map from
    parameters to sample is fixed) or of log_prob."""
    s0, p0 = _t([1.3, 0.8], grad=True), _t([0.3, 0.6], grad=True)

    def sample(s, p):
        pylucid.manual_seed(6)
        return make(s, p).rsample((3,))

    assert gradcheck(sample, (s0, p0))
    value = sample(s0, p0).detach()
    assert gradcheck(lambda s, p: make(s, p).log_prob(value), (s0, p0))


def test_transforms_invert_and_log_jacobians():
    """Guards against a transform whose inverse or log|det J| is wrong (numerical Jacobian)."""
    x = _t([-0.7, 0.2, 1.1])
    for t in (transforms.ExpTransform(), transforms.SigmoidTransform(), transforms.TanhTransform(),
              transforms.AffineTransform(1.0, -3.0), transforms.SoftplusTransform(),
              transforms.ComposeTransform([transforms.AffineTransform(0.5, 2.0), transforms.ExpTransform()]),
              transforms.ExpTransform().inv):
        xx = x.exp() if isinstance(t, transforms._InverseTransform) else x
        y = t(xx)
        np.testing.assert_allclose(t.inv(y).numpy(), xx.numpy(), rtol=1e-12)
        h = 1e-6
        num = np.log(np.abs((t(xx + h).numpy() - t(xx - h).numpy()) / (2 * h)))
        np.testing.assert_allclose(t.log_abs_det_jacobian(xx, y).numpy(), num, rtol=1e-6, atol=1e-7)
    sb = transforms.StickBreakingTransform()
    y = sb(x)
    assert y.shape == (4,) and y.sum().item() == pytest.approx(1.0)
    np.testing.assert_allclose(sb.inv(y).numpy(), x.numpy(), rtol=1e-10)
    jac = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = 1e-6
        jac[:, j] = (sb(_t(x.numpy() + e)).numpy()[:3] - sb(_t(x.numpy() - e)).numpy()[:3]) / 2e-6
    assert sb.log_abs_det_jacobian(x, y).item() == pytest.approx(np.log(abs(np.linalg.det(jac))), rel=1e-6)
    cached = transforms.ExpTransform(cache_size=1)
    y = cached(x)
    assert cached.inv(y) is x and cached.inv.inv is cached


def test_transformed_distribution_change_of_variables():
    """Guards against TransformedDistribution's log_prob, cdf, icdf or shapes: LogNormal built by
    hand equals LogNormal, and a vector transform moves batch dims into the event."""
    base = D.Normal(_t([0.1, -0.3]), _t([0.5, 1.2]))
    td = D.TransformedDistribution(base, [transforms.ExpTransform()])
    ln = D.LogNormal(_t([0.1, -0.3]), _t([0.5, 1.2]))
    v = _t([0.7, 2.5])
    np.testing.assert_allclose(td.log_prob(v).numpy(), ln.log_prob(v).numpy(), rtol=1e-12)
    np.testing.assert_allclose(td.cdf(v).numpy(), ln.cdf(v).numpy(), rtol=1e-12)
    np.testing.assert_allclose(td.icdf(td.cdf(v)).numpy(), v.numpy(), rtol=1e-9)
    neg = D.TransformedDistribution(base, [transforms.AffineTransform(0.0, -1.0)])
    np.testing.assert_allclose(neg.cdf(-v).numpy(), 1 - base.cdf(v).numpy(), rtol=1e-12)
    ln2 = D.LogisticNormal(_t([0.1, -0.3]), _t([0.5, 1.2]))
    assert ln2.batch_shape == () and ln2.event_shape == (3,)
    assert D.kl_divergence(td, D.TransformedDistribution(D.Normal(0.0, 1.0), transforms.ExpTransform())).shape == (2,)


def test_mixture_same_family():
    """Guards against a mixture's log_prob not being the log of the weighted component densities."""
    w = _t([0.3, 0.7])
    locs, scales = _t([-1.0, 2.0]), _t([0.5, 1.5])
    mix = D.MixtureSameFamily(D.Categorical(probs=w), D.Normal(locs, scales))
    x = _t([0.3, -2.0, 4.0])
    want = np.log((w.numpy() * np.exp(D.Normal(locs, scales).log_prob(x.reshape(3, 1)).numpy())).sum(-1))
    np.testing.assert_allclose(mix.log_prob(x).numpy(), want, rtol=1e-12)
    pylucid.manual_seed(7)
    s = mix.sample((40000,)).numpy()
    assert s.mean() == pytest.approx(mix.mean.item(), abs=0.05)
    assert s.var() == pytest.approx(mix.variance.item(), rel=0.05)
    assert mix.expand((4,)).log_prob(x.reshape(3, 1)).shape == (3, 4)


def test_constraints_and_validation():
    """Guards against constraints accepting the wrong values and parameters or values outside
    them passing silently (PyTorch raises ValueError, and set_default_validate_args turns it off)."""
    assert constraints.simplex.check(_t([[0.2, 0.8], [0.5, 0.6]])).tolist() == [True, False]
    assert constraints.integer_interval(0, 3).check(_t([0.0, 3.0, 3.5, 4.0])).tolist() == [True, True, False, False]
    assert constraints.independent(constraints.positive, 1).check(_t([[1.0, 2.0], [1.0, -1.0]])).tolist() == \
        [True, False]
    assert constraints.lower_cholesky.check(_t([[1.0, 0.0], [2.0, 3.0]])).item()
    assert constraints.positive_definite.check(_t([[2.0, 1.0], [1.0, 2.0]])).item()
    assert constraints.is_dependent(D.Uniform.support) and not constraints.is_dependent(constraints.real)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.HalfNormal(_t([-1.0]))
    with pytest.raises(ValueError, match="within the support"):
        D.Poisson(_t([2.0])).log_prob(_t([1.5]))
    with pytest.raises(ValueError, match="must be at least one-dimensional"):
        D.Dirichlet(_t(1.0))
    D.Distribution.set_default_validate_args(False)
    try:
        assert D.Gamma(_t(-1.0), _t(1.0)).batch_shape == ()
    finally:
        D.Distribution.set_default_validate_args(True)
    e = D.StudentT(_t([3.0, 4.0])).expand((5, 2))
    assert e.batch_shape == (5, 2) and e.sample().shape == (5, 2)
