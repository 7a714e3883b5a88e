"""pylucid.distributions: log_prob, entropy, cdf and kl_divergence against closed forms computed
with numpy (and torch where installed), float64 gradcheck/gradgradcheck of log_prob, entropy,
kl and rsample in the parameters, sample shapes, seeding through manual_seed, sample statistics,
and validate_args raising ValueError as PyTorch's."""
import math

import numpy as np
import pytest

import pylucid
from pylucid.autograd import gradcheck, gradgradcheck
from pylucid.distributions import (Bernoulli, Beta, Categorical, Distribution, Gamma, Independent, MultivariateNormal,
                                   Normal, OneHotCategorical, Uniform, kl_divergence, register_kl)

RNG = np.random.default_rng(7)


def _t(a, grad=False):
    return pylucid.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


LOC, SCALE = RNG.standard_normal(3), np.abs(RNG.standard_normal(3)) + 0.3
LOGITS = RNG.standard_normal((2, 4))
COV = (lambda m: m @ m.T + np.eye(3))(RNG.standard_normal((3, 3)))
VALUES = RNG.standard_normal((5, 3))


def test_normal_against_closed_forms():
    """Guards against a wrong Normal log density, entropy, cdf or KL."""
    d = Normal(_t(LOC), _t(SCALE))
    ref = -((VALUES - LOC) ** 2) / (2 * SCALE**2) - np.log(SCALE) - 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(d.log_prob(_t(VALUES)).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), 0.5 + 0.5 * math.log(2 * math.pi) + np.log(SCALE), rtol=1e-12)
    cdf = 0.5 * (1 + np.vectorize(math.erf)((VALUES - LOC) / (SCALE * math.sqrt(2))))
    np.testing.assert_allclose(d.cdf(_t(VALUES)).numpy(), cdf, rtol=1e-12)
    q = Normal(0.5, 2.0)
    kl = np.log(2.0 / SCALE) + (SCALE**2 + (LOC - 0.5) ** 2) / (2 * 4.0) - 0.5
    np.testing.assert_allclose(kl_divergence(d, q).numpy(), kl, rtol=1e-12)
    assert (d.mean is d.loc) and (d.stddev is d.scale) and d.variance.shape == (3,)


def test_categorical_against_closed_forms():
    """Guards against wrong normalisation of probs/logits, log_prob indexing, entropy or KL."""
    p = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
    d = Categorical(logits=_t(LOGITS))
    np.testing.assert_allclose(d.probs.numpy(), p, rtol=1e-12)
    np.testing.assert_allclose(d.logits.numpy(), np.log(p), rtol=1e-12)
    v = np.array([[0, 3], [2, 2], [1, 0]])
    np.testing.assert_allclose(d.log_prob(pylucid.tensor(v)).numpy(), np.log(p[np.arange(2), v]), rtol=1e-12)
    np.testing.assert_allclose(d.entropy().numpy(), -(p * np.log(p)).sum(-1), rtol=1e-12)
    dp = Categorical(probs=_t(p * 3.0))  # unnormalised probs are normalised
    np.testing.assert_allclose(dp.probs.numpy(), p, rtol=1e-12)
    q = np.abs(RNG.standard_normal((2, 4)))
    q /= q.sum(-1, keepdims=True)
    np.testing.assert_allclose(kl_divergence(d, Categorical(probs=_t(q))).numpy(), (p * np.log(p / q)).sum(-1),
                               rtol=1e-12)
    z = Categorical(probs=_t([0.5, 0.5, 0.0]))
    assert z.entropy().item() == pytest.approx(math.log(2))
    assert kl_divergence(z, Categorical(probs=_t([0.5, 0.0, 0.5]))).item() == math.inf
    assert d.enumerate_support().shape == (4, 2) and d.param_shape == (2, 4)


def test_bernoulli_uniform_onehot_independent():
    """Guards against wrong values of the smaller distributions."""
    p = np.array([0.2, 0.9, 0.0])
    b = Bernoulli(probs=_t(p))
    x = np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(b.log_prob(_t(x)).numpy(), [math.log(0.2), math.log(0.1), 0.0], atol=1e-6)
    np.testing.assert_allclose(Bernoulli(logits=_t([0.0])).entropy().numpy(), [math.log(2)], rtol=1e-12)
    u = Uniform(_t([0.0, 1.0]), 4.0)
    np.testing.assert_allclose(u.log_prob(_t([1.0, 3.5])).numpy(), -np.log([4.0, 3.0]), rtol=1e-12)
    np.testing.assert_allclose(u.entropy().numpy(), np.log([4.0, 3.0]), rtol=1e-12)
    assert kl_divergence(Uniform(0.0, 1.0), Uniform(-1.0, 2.0)).item() == pytest.approx(math.log(3))
    assert kl_divergence(Uniform(0.0, 1.0), Uniform(0.5, 2.0)).item() == math.inf
    oh = OneHotCategorical(logits=_t(LOGITS))
    assert oh.event_shape == (4,) and oh.batch_shape == (2,)
    np.testing.assert_allclose(oh.log_prob(_t([[0, 1, 0, 0], [0, 0, 0, 1]])).numpy(),
                               Categorical(logits=_t(LOGITS)).log_prob(pylucid.tensor([1, 3])).numpy())
    ind = Independent(Normal(_t(LOC), _t(SCALE)), 1)
    assert ind.batch_shape == () and ind.event_shape == (3,)
    np.testing.assert_allclose(ind.log_prob(_t(VALUES)).numpy(),
                               Normal(_t(LOC), _t(SCALE)).log_prob(_t(VALUES)).numpy().sum(-1), rtol=1e-12)
    other = Normal(0.0, _t(SCALE[::-1].copy()))
    np.testing.assert_allclose(kl_divergence(ind, Independent(other, 1)).numpy(),
                               kl_divergence(Normal(_t(LOC), _t(SCALE)), other).numpy().sum())


def test_multivariate_normal():
    """Guards against a wrong Cholesky factor, triangular solve or log-determinant."""
    d = MultivariateNormal(_t(LOC), covariance_matrix=_t(COV))
    np.testing.assert_allclose(d.scale_tril.numpy(), np.linalg.cholesky(COV), rtol=1e-12)
    np.testing.assert_allclose(d.covariance_matrix.numpy(), COV, rtol=1e-12)
    diff = VALUES - LOC
    maha = np.einsum("ni,ij,nj->n", diff, np.linalg.inv(COV), diff)
    ref = -0.5 * (3 * math.log(2 * math.pi) + np.linalg.slogdet(COV)[1] + maha)
    np.testing.assert_allclose(d.log_prob(_t(VALUES)).numpy(), ref, rtol=1e-12)
    e = MultivariateNormal(_t(LOC), scale_tril=_t(np.linalg.cholesky(COV)))
    np.testing.assert_allclose(e.log_prob(_t(VALUES)).numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(e.entropy().numpy(), 0.5 * (3 * (1 + math.log(2 * math.pi)) + np.linalg.slogdet(COV)[1]))
    np.testing.assert_allclose(d.variance.numpy(), np.diag(COV), rtol=1e-12)
    prec = MultivariateNormal(_t(LOC), precision_matrix=_t(np.linalg.inv(COV)))
    np.testing.assert_allclose(prec.log_prob(_t(VALUES)).numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(prec.scale_tril.numpy(), np.linalg.cholesky(COV), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(COV), rtol=1e-10, atol=1e-12)
    batched = MultivariateNormal(_t(np.stack([LOC, -LOC])), covariance_matrix=_t(COV))
    assert batched.batch_shape == (2,) and batched.log_prob(_t(VALUES[:, None, :])).shape == (5, 2)


def test_against_torch():
    """Guards against a value differing from PyTorch's (log_prob, entropy, kl, derived parameters)."""
    torch = pytest.importorskip("torch")
    TD = torch.distributions
    pr = np.abs(LOGITS)
    cases = [
        lambda m, D: D.Normal(m.tensor(LOC), m.tensor(SCALE)).log_prob(m.tensor(VALUES)),
        lambda m, D: D.Normal(0.0, 2.0).entropy(),
        lambda m, D: D.Categorical(probs=m.tensor(pr)).logits,
        lambda m, D: D.Categorical(probs=m.tensor(pr)).entropy(),
        lambda m, D: D.Categorical(logits=m.tensor(LOGITS)).log_prob(m.tensor([[0, 3], [1, 2]])),
        lambda m, D: D.kl_divergence(D.Categorical(logits=m.tensor(LOGITS)), D.Categorical(probs=m.tensor(pr))),
        lambda m, D: D.Bernoulli(probs=m.tensor([0.2, 0.9, 0.0])).log_prob(m.tensor([1.0, 0.0, 0.0])),
        lambda m, D: D.Bernoulli(probs=m.tensor([0.2, 0.9, 0.0])).logits,
        lambda m, D: D.kl_divergence(D.Bernoulli(probs=m.tensor([0.2, 0.9, 0.0])), D.Bernoulli(logits=m.tensor(LOC))),
        lambda m, D: D.Uniform(m.tensor([0.0, 1.0]), 4.0).log_prob(m.tensor([1.0, 3.5])),
        lambda m, D: D.MultivariateNormal(m.tensor(LOC), covariance_matrix=m.tensor(COV)).log_prob(m.tensor(VALUES)),
        lambda m, D: D.MultivariateNormal(m.tensor(LOC), covariance_matrix=m.tensor(COV)).entropy(),
        lambda m, D: D.MultivariateNormal(m.tensor(LOC), precision_matrix=m.tensor(COV)).log_prob(m.tensor(VALUES)),
        lambda m, D: D.Independent(D.Normal(m.tensor(LOC), m.tensor(SCALE)), 1).entropy(),
        lambda m, D: D.OneHotCategorical(logits=m.tensor(LOGITS)).entropy(),
    ]
    for fn in cases:
        np.testing.assert_allclose(np.asarray(fn(pylucid, pylucid.distributions)),
                                   fn(torch, TD).numpy(), rtol=1e-6, atol=1e-7)
    for make in (lambda m, D: D.Normal(0.0, 1.0), lambda m, D: D.Categorical(logits=m.zeros(2, 3)),
                 lambda m, D: D.MultivariateNormal(m.zeros(2), covariance_matrix=m.eye(2)),
                 lambda m, D: D.Independent(D.Normal(m.zeros(2), 1.0), 1), lambda m, D: D.Beta(1.0, 2.0),
                 lambda m, D: D.OneHotCategorical(probs=m.ones(3)), lambda m, D: D.Gamma(1.0, 2.0)):
        assert repr(make(pylucid, pylucid.distributions)).replace("pylucid.", "") == \
            repr(make(torch, TD)).replace("torch.", "")


def test_gradients_of_every_order():
    """Guards against log_prob, entropy, kl or rsample not being differentiable in the parameters."""
    loc, scale = _t(LOC, True), _t(SCALE, True)
    logits = _t(LOGITS, True)
    cov_root = _t(np.linalg.cholesky(COV), True)
    checks = [
        (lambda a, b: Normal(a, b).log_prob(_t(VALUES)), [loc, scale]),
        (lambda a, b: kl_divergence(Normal(a, b), Normal(b, 1.5)), [loc, scale]),
        (lambda a: Categorical(logits=a).entropy(), [logits]),
        (lambda a: Categorical(logits=a).log_prob(pylucid.tensor([1, 2])), [logits]),
        (lambda a: kl_divergence(Categorical(logits=a), Categorical(logits=a.flip(-1))), [logits]),
        (lambda a: Bernoulli(logits=a).log_prob(_t([1.0, 0.0, 1.0])), [loc]),
        (lambda a, b: MultivariateNormal(a, covariance_matrix=b @ b.transpose(0, 1)).log_prob(_t(VALUES)),
         [loc, cov_root]),
        (lambda a: Uniform(a, a + 3.0).entropy(), [loc]),
        (lambda a, b: MultivariateNormal(a, precision_matrix=b @ b.transpose(0, 1)).log_prob(_t(VALUES)),
         [loc, cov_root]),
    ]
    for fn, args in checks:
        assert gradcheck(fn, args) and gradgradcheck(fn, args)
    pylucid.manual_seed(0)
    g = pylucid.autograd.grad(Normal(loc, scale).rsample((4,)).sum(), [loc, scale])
    assert g[0].tolist() == [4.0, 4.0, 4.0] and g[1].shape == (3,)


def test_sampling_shapes_and_seed():
    """Guards against wrong sample shapes or samples ignoring manual_seed."""
    assert Normal(pylucid.zeros(3), 1.0).sample((4, 2)).shape == (4, 2, 3)
    assert Categorical(logits=pylucid.zeros(2, 5)).sample((7,)).shape == (7, 2)
    assert Categorical(logits=pylucid.zeros(5)).sample().shape == ()
    assert Categorical(logits=pylucid.zeros(5)).sample_n(3).shape == (3,)
    assert OneHotCategorical(logits=pylucid.zeros(2, 5)).sample((7,)).shape == (7, 2, 5)
    assert Bernoulli(0.3).sample((3,)).shape == (3,)
    assert MultivariateNormal(pylucid.zeros(3), scale_tril=pylucid.eye(3)).rsample((4,)).shape == (4, 3)
    assert Uniform(0.0, 1.0).rsample((2,)).shape == (2,)
    assert not Normal(_t(LOC, True), 1.0).sample().requires_grad
    draws = []
    for _ in range(2):
        pylucid.manual_seed(11)
        draws.append([Normal(0.0, 1.0).sample((3,)).tolist(),
                      Categorical(logits=pylucid.zeros(4)).sample((5,)).tolist()])
    assert draws[0] == draws[1]


def test_sample_statistics():
    """Guards against samples from the wrong distribution (means and frequencies)."""
    pylucid.manual_seed(1)
    n = 20000
    s = Normal(_t([1.0, -2.0]), _t([0.5, 2.0])).sample((n,)).numpy()
    np.testing.assert_allclose(s.mean(0), [1.0, -2.0], atol=0.05)
    np.testing.assert_allclose(s.std(0), [0.5, 2.0], rtol=0.03)
    c = Categorical(probs=_t([0.1, 0.6, 0.3])).sample((n,)).numpy()
    np.testing.assert_allclose(np.bincount(c, minlength=3) / n, [0.1, 0.6, 0.3], atol=0.02)
    m = MultivariateNormal(_t([0.0, 0.0, 0.0]), covariance_matrix=_t(COV)).sample((n,)).numpy()
    np.testing.assert_allclose(np.cov(m.T), COV, atol=0.25 * np.abs(COV).max())
    u = Uniform(2.0, 3.0).sample((n,)).numpy()
    assert u.min() >= 2.0 and u.max() < 3.0


def test_validation():
    """Guards against invalid parameters or out-of-support values passing silently."""
    bad = [
        lambda: Normal(0.0, -1.0), lambda: Categorical(probs=_t([-0.1, 1.1])), lambda: Bernoulli(probs=_t(1.5)),
        lambda: Categorical(logits=_t([0.0, 1.0])).log_prob(pylucid.tensor(2)), lambda: Categorical(),
        lambda: Categorical(probs=_t([1.0]), logits=_t([1.0])), lambda: Uniform(1.0, 0.0),
        lambda: MultivariateNormal(pylucid.zeros(2), covariance_matrix=_t([[1.0, 2.0], [2.0, 1.0]])),
        lambda: MultivariateNormal(pylucid.zeros(2), precision_matrix=_t([[1.0, 0.0], [1.0, 1.0]])),
        lambda: Bernoulli(0.5).log_prob(_t(0.5)), lambda: Normal(0.0, 1.0).log_prob(_t([1.0, math.nan])),
        lambda: Uniform(0.0, 1.0).log_prob(_t(2.0)), lambda: Normal(pylucid.zeros(3), 1.0).log_prob(pylucid.zeros(2)),
        lambda: Independent(Normal(0.0, 1.0), 1),
    ]
    for fn in bad:
        with pytest.raises(ValueError):
            fn()
    assert Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    assert Uniform(0.0, 1.0, validate_args=False).log_prob(_t(2.0)).item() == -math.inf
    assert Uniform(0.0, 1.0).log_prob(_t(0.5)).shape == ()
    Distribution.set_default_validate_args(False)
    try:
        Normal(0.0, -1.0)
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(NotImplementedError):
        kl_divergence(Normal(0.0, 1.0), Categorical(logits=pylucid.zeros(2)))


def test_register_kl():
    """Guards against user-registered KL pairs not being found (through subclasses too)."""
    class MyNormal(Normal):
        pass

    @register_kl(MyNormal, Uniform)
    def _kl(p, q):
        return pylucid.tensor(42.0)

    assert kl_divergence(MyNormal(0.0, 1.0), Uniform(0.0, 1.0)).item() == 42.0
    assert kl_divergence(MyNormal(0.0, 1.0), Normal(0.0, 1.0)).item() == 0.0


def test_gamma_and_beta():
    """Guards against wrong Gamma/Beta densities, entropies, KLs or samples (the values use
    lgamma/digamma, so they are differentiable in the parameters)."""
    from math import lgamma
    a, b, x = np.array([0.5, 1.0, 2.5]), np.array([1.5, 0.3, 2.0]), np.array([0.2, 1.0, 3.0])
    g = Gamma(_t(a), _t(b))
    ref = a * np.log(b) + (a - 1) * np.log(x) - b * x - np.vectorize(lgamma)(a)
    np.testing.assert_allclose(g.log_prob(_t(x)).numpy(), ref, rtol=1e-12)
    u = np.array([0.2, 0.5, 0.9])
    lbeta = np.vectorize(lgamma)(a) + np.vectorize(lgamma)(b) - np.vectorize(lgamma)(a + b)
    np.testing.assert_allclose(Beta(_t(a), _t(b)).log_prob(_t(u)).numpy(),
                               (a - 1) * np.log(u) + (b - 1) * np.log(1 - u) - lbeta, rtol=1e-12)
    assert kl_divergence(Gamma(_t(a), _t(b)), Gamma(_t(a), _t(b))).abs().max().item() < 1e-12
    assert kl_divergence(Beta(_t(a), _t(b)), Beta(_t(a), _t(b))).abs().max().item() < 1e-12
    # Away from concentration 1, where xlogy's gradient in its first argument is 0 by PyTorch's
    # convention (so log_prob's gradient there leaves out log(value), as PyTorch's does).
    ca, cb = _t([0.5, 1.3, 2.5], True), _t(b, True)
    for fn in (lambda p, q: Gamma(p, q).entropy(), lambda p, q: Beta(p, q).entropy(),
               lambda p, q: kl_divergence(Gamma(p, q), Gamma(q, p)), lambda p, q: Beta(p, q).log_prob(_t(u))):
        assert gradcheck(fn, [ca, cb]) and gradgradcheck(fn, [ca, cb])
    pylucid.manual_seed(2)
    s = Gamma(_t([0.5, 3.0]), _t([1.0, 2.0])).sample((40000,)).numpy()
    np.testing.assert_allclose(s.mean(0), [0.5, 1.5], rtol=0.03)
    assert s.min() > 0
    s = Beta(_t([0.5, 2.0]), _t([0.5, 6.0])).sample((40000,)).numpy()
    np.testing.assert_allclose(s.mean(0), [0.5, 0.25], rtol=0.03)
    for fn in (lambda: Gamma(-1.0, 1.0), lambda: Beta(1.0, 0.0), lambda: Beta(1.0, 1.0).log_prob(_t(1.5)),
               lambda: Gamma(1.0, 1.0).log_prob(_t(-1.0))):
        with pytest.raises(ValueError):
            fn()


def test_gamma_and_beta_against_torch():
    """Guards against a Gamma/Beta value differing from PyTorch's."""
    torch = pytest.importorskip("torch")
    a, b, x = np.array([0.5, 1.0, 2.5, 7.0]), np.array([1.5, 0.3, 2.0, 1.0]), np.array([0.2, 1.0, 3.0, 0.05])
    u = np.array([0.2, 0.5, 0.9, 0.01])
    cases = [
        lambda m, D: D.Gamma(m.tensor(a), m.tensor(b)).log_prob(m.tensor(x)),
        lambda m, D: D.Gamma(m.tensor(a), m.tensor(b)).entropy(),
        lambda m, D: D.kl_divergence(D.Gamma(m.tensor(a), m.tensor(b)), D.Gamma(m.tensor(b), m.tensor(a))),
        lambda m, D: D.Beta(m.tensor(a), m.tensor(b)).log_prob(m.tensor(u)),
        lambda m, D: D.Beta(m.tensor(a), m.tensor(b)).entropy(),
        lambda m, D: D.kl_divergence(D.Beta(m.tensor(a), m.tensor(b)), D.Beta(m.tensor(b), m.tensor(a))),
        lambda m, D: D.Beta(m.tensor(a), m.tensor(b)).variance,
        lambda m, D: D.Gamma(m.tensor(a), m.tensor(b)).mode,
    ]
    for fn in cases:
        np.testing.assert_allclose(np.asarray(fn(pylucid, pylucid.distributions)),
                                   fn(torch, torch.distributions).numpy(), rtol=1e-10)


def test_normal_icdf():
    """Guards against icdf not inverting cdf (it needs pylucid.erfinv, which it uses when present)."""
    d = Normal(_t(LOC), _t(SCALE))
    p = _t([0.1, 0.5, 0.93])
    if not hasattr(pylucid, "erfinv"):
        with pytest.raises(NotImplementedError):
            d.icdf(p)
        return
    np.testing.assert_allclose(d.cdf(d.icdf(p)).numpy(), p.numpy(), rtol=1e-10)


def test_more_kl_pairs_against_torch_and_gradcheck():
    """Guards against kl_divergence raising NotImplementedError for pairs PyTorch registers
    (MultivariateNormal, Exponential, Laplace, Cauchy, Geometric, LogNormal) or their values
    differing from PyTorch's; the MultivariateNormal form is float64-gradchecked in both locs
    and scale factors, batched against unbatched."""
    D = pylucid.distributions
    lq = np.linalg.cholesky(np.stack([COV, COV + np.eye(3)]))
    mvn = lambda m, T: (T.MultivariateNormal(m.tensor(LOC), covariance_matrix=m.tensor(COV)),
                        T.MultivariateNormal(m.tensor(np.stack([LOC[::-1], -LOC])), scale_tril=m.tensor(lq)))
    cases = [
        lambda m, T: T.kl_divergence(*mvn(m, T)),
        lambda m, T: T.kl_divergence(*mvn(m, T)[::-1]),
        lambda m, T: T.kl_divergence(T.Exponential(m.tensor(SCALE)), T.Exponential(m.tensor(SCALE[::-1].copy()))),
        lambda m, T: T.kl_divergence(T.Laplace(m.tensor(LOC), m.tensor(SCALE)), T.Laplace(0.5, 1.5)),
        lambda m, T: T.kl_divergence(T.Cauchy(m.tensor(LOC), m.tensor(SCALE)), T.Cauchy(0.5, 1.5)),
        lambda m, T: T.kl_divergence(T.Geometric(m.tensor([0.2, 0.7])), T.Geometric(m.tensor([0.5, 0.1]))),
        lambda m, T: T.kl_divergence(T.LogNormal(m.tensor(LOC), m.tensor(SCALE)), T.LogNormal(0.5, 1.5)),
    ]
    ours = [np.asarray(fn(pylucid, D)) for fn in cases]
    # The MVN closed form against the textbook formula in numpy.
    for b in range(2):
        cq = lq[b] @ lq[b].T
        mu_q = np.stack([LOC[::-1], -LOC])[b]
        ref = 0.5 * (np.trace(np.linalg.solve(cq, COV)) + (mu_q - LOC) @ np.linalg.solve(cq, mu_q - LOC) - 3
                     + np.log(np.linalg.det(cq) / np.linalg.det(COV)))
        np.testing.assert_allclose(ours[0][b], ref, rtol=1e-10)
    assert gradcheck(lambda a, l: kl_divergence(MultivariateNormal(a, scale_tril=l.tril() + 2 * pylucid.eye(3)),
                                                MultivariateNormal(a.flip(0), covariance_matrix=_t(COV))),
                     [_t(LOC, True), _t(np.tril(RNG.standard_normal((3, 3))) * 0.3, True)])
    with pytest.raises(ValueError):
        kl_divergence(MultivariateNormal(pylucid.zeros(2), pylucid.eye(2)), MultivariateNormal(pylucid.zeros(3),
                                                                                                pylucid.eye(3)))
    torch = pytest.importorskip("torch")
    for fn, got in zip(cases, ours):
        np.testing.assert_allclose(got, fn(torch, torch.distributions).numpy(), rtol=1e-10, atol=1e-12)


def test_mixture_same_family_against_torch_and_gradcheck():
    """Guards against MixtureSameFamily (mixture density networks) missing, or its log_prob,
    mean, variance, cdf or seeded samples differing from PyTorch's; log_prob is float64-gradchecked
    in the logits, locs and scales; bad mixtures raise ValueError."""
    from pylucid.distributions import MixtureSameFamily
    logits, loc, scale = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3)), np.abs(RNG.standard_normal((4, 3))) + 0.5
    x = RNG.standard_normal((5, 4))

    def build(m, D, a, b, c):
        return D.MixtureSameFamily(D.Categorical(logits=a), D.Normal(b, c))

    gmm = build(pylucid, pylucid.distributions, _t(logits), _t(loc), _t(scale))
    assert gmm.batch_shape == (4,) and gmm.event_shape == ()
    ref = np.log((np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
                  * np.exp(-((x[..., None] - loc) / scale) ** 2 / 2) / (scale * math.sqrt(2 * math.pi))).sum(-1))
    np.testing.assert_allclose(gmm.log_prob(_t(x)).numpy(), ref, rtol=1e-12)
    assert gradcheck(lambda a, b, c: build(pylucid, pylucid.distributions, a, b, c).log_prob(_t(x)),
                     [_t(logits, True), _t(loc, True), _t(scale, True)])
    g2 = MixtureSameFamily(Categorical(logits=pylucid.zeros(3)),
                           Independent(Normal(pylucid.zeros(3, 2), pylucid.ones(3, 2)), 1))
    assert g2.event_shape == (2,) and g2.sample((5,)).shape == (5, 2) and g2.log_prob(pylucid.zeros(7, 2)).shape == (7,)
    with pytest.raises(ValueError):
        MixtureSameFamily(Normal(0.0, 1.0), Normal(pylucid.zeros(3), 1.0))
    with pytest.raises(ValueError):
        MixtureSameFamily(Categorical(logits=pylucid.zeros(2)), Normal(pylucid.zeros(3), 1.0))
    torch = pytest.importorskip("torch")
    theirs = build(torch, torch.distributions, torch.tensor(logits), torch.tensor(loc), torch.tensor(scale))
    for f in (lambda d, m: d.log_prob(m.tensor(x)), lambda d, m: d.mean, lambda d, m: d.variance,
              lambda d, m: d.cdf(m.tensor(x[0]))):
        np.testing.assert_allclose(f(gmm, pylucid).numpy(), f(theirs, torch).numpy(), rtol=1e-10)
    pylucid.manual_seed(2)
    torch.manual_seed(2)
    assert gmm.sample((6,)).tolist() == theirs.sample((6,)).tolist()
