"""pylucid.distributions against torch.distributions, distribution by distribution: the same
parameters, values and seeds give the same shapes, supports, constraints, moments, log_prob, cdf,
icdf, entropy, samples (bit for bit under manual_seed), expand and enumerate_support, and the same
error types. Skipped without torch."""
import math

import numpy as np
import pylucid
import pylucid.distributions as D
import pytest

torch = pytest.importorskip("torch")
TD = torch.distributions

RNG = np.random.default_rng(11)
POS = np.abs(RNG.standard_normal(3)) + 0.5
REAL = RNG.standard_normal(3)
PROB = np.array([0.2, 0.5, 0.9])
SIMPLEX = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
UNIT = np.array([0.1, 0.45, 0.8])


def _to(lib, v):
    if isinstance(v, np.ndarray):
        return lib.tensor(v, dtype=lib.float64)
    return v


# name -> (constructor args, values for log_prob/cdf (numpy), seed-exact sampling)
CASES = {
    "Normal": ((REAL, POS), REAL + 0.3, True),
    "Uniform": ((REAL - 1, REAL + 1), REAL, True),
    "Bernoulli": ((PROB,), np.array([0.0, 1.0, 1.0]), True),
    "Exponential": ((POS,), POS, True),
    "Laplace": ((REAL, POS), REAL * 2, True),
    "Cauchy": ((REAL, POS), REAL * 2, True),
    "LogNormal": ((REAL, POS), POS, True),
    "Geometric": ((PROB,), np.array([0.0, 2.0, 5.0]), True),
    "Gamma": ((POS, POS + 1), POS, True),
    "Beta": ((POS, POS + 0.5), UNIT, True),
    "Chi2": ((POS * 3,), POS, True),
    "StudentT": ((POS * 3, REAL, POS), REAL, True),
    "FisherSnedecor": ((POS * 3, POS * 4), POS, True),
    "Dirichlet": ((np.array([[0.5, 1.0, 2.0], [3.0, 0.7, 1.5]]),), SIMPLEX, True),
    "Poisson": ((POS * 4,), np.array([0.0, 3.0, 7.0]), True),
    "Binomial": ((np.array([20.0, 20.0, 20.0]), PROB), np.array([3.0, 10.0, 15.0]), True),
    "NegativeBinomial": ((np.array([3.0, 5.0, 2.5]), PROB * 0.9), np.array([0.0, 4.0, 9.0]), True),
    "HalfNormal": ((POS,), POS, True),
    "HalfCauchy": ((POS,), POS, True),
    "Gumbel": ((REAL, POS), REAL, True),
    "Weibull": ((POS, POS + 1), POS, True),
    "Pareto": ((POS, POS + 1), POS * 3, True),
    "Kumaraswamy": ((POS, POS + 1), UNIT, True),
    "ContinuousBernoulli": ((PROB * 0.9,), UNIT, True),
    "VonMises": ((REAL, POS), REAL, True),
}


def _build(lib_d, name, args, kwargs=None):
    lib = torch if lib_d is TD else pylucid
    return getattr(lib_d, name)(*[_to(lib, a) for a in args], **(kwargs or {}))


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _same(a, b, what, rtol=1e-6, atol=1e-9):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=what)


def _both(fn_p, fn_t, what, **tol):
    """Both raise NotImplementedError, or both give the same values."""
    try:
        want = fn_t()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            fn_p()
        return
    _same(fn_p(), want, what, **tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    """Guards against any attribute, method or sample of a distribution drifting from PyTorch's."""
    args, values, exact = CASES[name]
    p, t = _build(D, name, args), _build(TD, name, args)
    assert tuple(p.batch_shape) == tuple(t.batch_shape) and tuple(p.event_shape) == tuple(t.event_shape)
    assert repr(p.support).replace("pylucid.", "torch.") == repr(t.support), name
    assert {k: repr(v).replace("pylucid.", "torch.") for k, v in p.arg_constraints.items()} == \
        {k: repr(v) for k, v in t.arg_constraints.items()}
    assert p.has_rsample == t.has_rsample and p.has_enumerate_support == t.has_enumerate_support
    for attr in ("mean", "mode", "variance", "stddev"):
        _both(lambda: getattr(p, attr), lambda: getattr(t, attr), f"{name}.{attr}")
    _both(p.entropy, t.entropy, f"{name}.entropy")
    vp, vt = _to(pylucid, values), _to(torch, values)
    _same(p.log_prob(vp), t.log_prob(vt), f"{name}.log_prob")
    _both(lambda: p.cdf(vp), lambda: t.cdf(vt), f"{name}.cdf", rtol=1e-6, atol=1e-8)
    q = np.array([0.1, 0.5, 0.7])
    _both(lambda: p.icdf(_to(pylucid, q)), lambda: t.icdf(_to(torch, q)), f"{name}.icdf")
    for method in ("sample", "rsample") if t.has_rsample else ("sample",):
        torch.manual_seed(5)
        want = getattr(t, method)((4,))
        pylucid.manual_seed(5)
        got = getattr(p, method)((4,))
        assert tuple(got.shape) == tuple(want.shape) and got.dtype == getattr(pylucid, str(want.dtype)[6:])
        if exact:
            _same(got, want, f"{name}.{method}", rtol=1e-12, atol=0)
        # the generator is left where PyTorch leaves it
        _same(pylucid.rand(3, dtype=pylucid.float64), torch.rand(3, dtype=torch.float64), f"{name} after {method}",
              rtol=0, atol=0)
    batch = (2,) + tuple(t.batch_shape)
    pe, te = p.expand(batch), t.expand(batch)
    assert tuple(pe.batch_shape) == tuple(te.batch_shape) and tuple(pe.event_shape) == tuple(te.event_shape)
    _same(pe.log_prob(vp), te.log_prob(vt), f"{name}.expand.log_prob")
    if t.has_enumerate_support:
        _same(p.enumerate_support(), t.enumerate_support(), f"{name}.enumerate_support")
        _same(p.enumerate_support(False), t.enumerate_support(False), f"{name}.enumerate_support(False)")


def test_float32_sampling_matches_torch():
    """Guards against float32 gamma/beta/binomial draws rounding intermediates differently."""
    for name, args in (("Gamma", (POS * 0.5, 2.0)), ("Beta", (POS * 0.3, POS)), ("Binomial", (30.0, PROB)),
                       ("StudentT", (POS * 3,)), ("Dirichlet", (SIMPLEX * 2,))):
        targs = [torch.tensor(a, dtype=torch.float32) if isinstance(a, np.ndarray) else a for a in args]
        pargs = [pylucid.tensor(a, dtype=pylucid.float32) if isinstance(a, np.ndarray) else a for a in args]
        torch.manual_seed(9)
        want = getattr(TD, name)(*targs).sample((50,))
        pylucid.manual_seed(9)
        got = getattr(D, name)(*pargs).sample((50,))
        assert got.dtype == pylucid.float32
        _same(got, want, name, rtol=0, atol=0)


def test_multivariate_and_mixtures_against_torch():
    """Guards against the vector-valued distributions (MVN, low-rank MVN, multinomial, relaxed,
    logistic normal, mixture) drifting from PyTorch."""
    loc = RNG.standard_normal((2, 3))
    w = RNG.standard_normal((2, 3, 2))
    diag = np.abs(RNG.standard_normal((2, 3))) + 0.5
    cov = (lambda m: m @ m.T + np.eye(3))(RNG.standard_normal((3, 3)))
    x = RNG.standard_normal((4, 2, 3))
    cases = [("LowRankMultivariateNormal", (loc, w, diag), {}, x),
             ("MultivariateNormal", (loc, cov), {}, x),
             ("Multinomial", (10,), {"probs": SIMPLEX}, np.array([[2.0, 3.0, 5.0], [7.0, 1.0, 2.0]])),
             ("RelaxedOneHotCategorical", (np.array(0.7),), {"probs": SIMPLEX}, SIMPLEX),
             ("RelaxedBernoulli", (np.array(0.5),), {"probs": PROB}, UNIT),
             ("LogisticNormal", (REAL[:2], POS[:2]), {}, np.array([0.2, 0.3, 0.5])),
             ("OneHotCategorical", (), {"probs": SIMPLEX}, np.eye(3)[[0, 2]]),
             ("Categorical", (), {"logits": SIMPLEX}, np.array([0.0, 2.0]))]
    for name, args, kwargs, value in cases:
        p = getattr(D, name)(*[_to(pylucid, a) for a in args], **{k: _to(pylucid, v) for k, v in kwargs.items()})
        t = getattr(TD, name)(*[_to(torch, a) for a in args], **{k: _to(torch, v) for k, v in kwargs.items()})
        assert tuple(p.batch_shape) == tuple(t.batch_shape) and tuple(p.event_shape) == tuple(t.event_shape), name
        assert repr(p.support).replace("pylucid.", "torch.") == repr(t.support), name
        _same(p.log_prob(_to(pylucid, value)), t.log_prob(_to(torch, value)), f"{name}.log_prob")
        for attr in ("mean", "variance"):
            _both(lambda: getattr(p, attr), lambda: getattr(t, attr), f"{name}.{attr}")
        _both(p.entropy, t.entropy, f"{name}.entropy")
        torch.manual_seed(3)
        want = t.sample((5,))
        pylucid.manual_seed(3)
        _same(p.sample((5,)), want, f"{name}.sample", rtol=1e-10, atol=1e-12)
    mix = D.MixtureSameFamily(D.Categorical(probs=_to(pylucid, SIMPLEX)),
                              D.Normal(_to(pylucid, SIMPLEX * 4), _to(pylucid, SIMPLEX + 0.5)))
    tmix = TD.MixtureSameFamily(TD.Categorical(probs=_to(torch, SIMPLEX)),
                                TD.Normal(_to(torch, SIMPLEX * 4), _to(torch, SIMPLEX + 0.5)))
    _same(mix.log_prob(_to(pylucid, REAL[:2])), tmix.log_prob(_to(torch, REAL[:2])), "mixture.log_prob")
    _same(mix.cdf(_to(pylucid, REAL[:2])), tmix.cdf(_to(torch, REAL[:2])), "mixture.cdf")
    _same(mix.mean, tmix.mean, "mixture.mean")
    _same(mix.variance, tmix.variance, "mixture.variance")
    torch.manual_seed(1)
    want = tmix.sample((6,))
    pylucid.manual_seed(1)
    _same(mix.sample((6,)), want, "mixture.sample", rtol=0, atol=0)


def test_validation_errors_match_torch():
    """Guards against bad parameters or out-of-support values passing silently, or raising a
    different exception type or message than PyTorch."""
    bad = [("Normal", (0.0, -1.0)), ("Gamma", (-1.0, 1.0)), ("Beta", (1.0, 0.0)), ("Poisson", (-2.0,)),
           ("Dirichlet", (np.array([1.0, -1.0]),)), ("StudentT", (-1.0,)), ("HalfNormal", (-1.0,)),
           ("Binomial", (np.array(3.5), np.array(0.5))), ("Pareto", (1.0, -1.0)), ("VonMises", (0.0, -1.0))]
    for name, args in bad:
        with pytest.raises(ValueError) as tp:
            _build(TD, name, args)
        with pytest.raises(ValueError) as pp:
            _build(D, name, args)
        assert str(pp.value).split(" of distribution")[0] == str(tp.value).split(" of distribution")[0], name
    for name, args, value in [("Gamma", (1.0, 1.0), -1.0), ("Beta", (1.0, 1.0), 2.0), ("Poisson", (1.0,), 1.5),
                              ("Dirichlet", (np.array([1.0, 1.0]),), np.array([0.3, 0.3]))]:
        vt, vp = _to(torch, np.asarray(value, dtype=np.float64)), _to(pylucid, np.asarray(value, dtype=np.float64))
        with pytest.raises(ValueError) as tp:
            _build(TD, name, args).log_prob(vt)
        with pytest.raises(ValueError) as pp:
            _build(D, name, args).log_prob(vp)
        assert str(pp.value).split(" of the distribution")[0] == str(tp.value).split(" of the distribution")[0]


def test_transforms_against_torch():
    """Guards against a transform's value, inverse, Jacobian, shapes or domains drifting from PyTorch."""
    x = RNG.standard_normal((4, 3))
    cases = [("ExpTransform", (), x), ("SigmoidTransform", (), x), ("TanhTransform", (), x * 0.5),
             ("AffineTransform", (0.5, -2.0), x), ("PowerTransform", (np.array(1.7),), np.abs(x) + 0.1),
             ("SoftplusTransform", (), x), ("StickBreakingTransform", (), x), ("SoftmaxTransform", (), x),
             ("AbsTransform", (), x), ("LowerCholeskyTransform", (), RNG.standard_normal((2, 3, 3)))]
    for name, args, value in cases:
        p = getattr(D.transforms, name)(*[_to(pylucid, a) for a in args])
        t = getattr(TD.transforms, name)(*[_to(torch, a) for a in args])
        xp, xt = _to(pylucid, value), _to(torch, value)
        yp, yt = p(xp), t(xt)
        _same(yp, yt, f"{name} forward")
        _same(p.inv(yp), t.inv(yt), f"{name} inverse")
        assert repr(p.domain) == repr(t.domain) and repr(p.codomain) == repr(t.codomain), name
        assert p.bijective == t.bijective, name
        _both(lambda p=p, xp=xp, yp=yp: p.log_abs_det_jacobian(xp, yp),
              lambda t=t, xt=xt, yt=yt: t.log_abs_det_jacobian(xt, yt), f"{name} ladj")
        assert tuple(p.forward_shape((4, 3))) == tuple(t.forward_shape((4, 3)))
    tp = TD.TransformedDistribution(TD.Normal(torch.zeros(3, dtype=torch.float64), 1.0),
                                    [TD.transforms.AffineTransform(1.0, 2.0), TD.transforms.TanhTransform()])
    pp = D.TransformedDistribution(D.Normal(pylucid.zeros(3, dtype=pylucid.float64), 1.0),
                                   [D.transforms.AffineTransform(1.0, 2.0), D.transforms.TanhTransform()])
    v = np.array([-0.5, 0.1, 0.9])
    _same(pp.log_prob(_to(pylucid, v)), tp.log_prob(_to(torch, v)), "tanh-normal log_prob")
    _same(pp.cdf(_to(pylucid, v)), tp.cdf(_to(torch, v)), "tanh-normal cdf")
    torch.manual_seed(2)
    want = tp.rsample((3,))
    pylucid.manual_seed(2)
    _same(pp.rsample((3,)), want, "tanh-normal rsample", rtol=1e-12, atol=0)


def test_kl_against_torch():
    """Guards against a registered KL pair giving other values than PyTorch's (inf included)."""
    ps = {"Normal": (REAL, POS), "Uniform": (REAL - 1, REAL + 2), "Exponential": (POS,), "Gamma": (POS + 1, POS),
          "Beta": (POS, POS + 1), "Laplace": (REAL, POS), "Gumbel": (REAL, POS), "Pareto": (POS, POS + 2.5),
          "Poisson": (POS,), "Cauchy": (REAL, POS), "HalfNormal": (POS,), "Geometric": (PROB,),
          "ContinuousBernoulli": (PROB * 0.9,), "Bernoulli": (PROB,), "Binomial": (np.array(5.0), PROB),
          "Dirichlet": (SIMPLEX * 3,), "LogNormal": (REAL, POS)}
    qs = {k: tuple(a * 1.3 + 0.1 if isinstance(a, np.ndarray) and k not in ("Geometric", "Bernoulli", "Binomial",
                                                                            "ContinuousBernoulli") else a
                   for a in v) for k, v in ps.items()}
    checked = 0
    for (tp_, tq_) in list(TD.kl._KL_REGISTRY):
        a, b = tp_.__name__, tq_.__name__
        if a not in ps or b not in ps:
            continue
        p_t, q_t = _build(TD, a, ps[a]), _build(TD, b, qs[b])
        p_p, q_p = _build(D, a, ps[a]), _build(D, b, qs[b])
        try:
            want = TD.kl_divergence(p_t, q_t)
        except (NotImplementedError, RuntimeError):
            continue
        _same(D.kl_divergence(p_p, q_p), want, f"KL({a} || {b})", rtol=1e-6, atol=1e-9)
        checked += 1
    assert checked > 50


def test_gamma_rsample_gradient_against_torch():
    """Guards against a wrong reparameterised gamma gradient: it equals PyTorch's approximation
    of -dP(a, x)/da / density to its accuracy."""
    a = np.array([0.3, 1.0, 2.5, 8.0, 40.0])
    pa = pylucid.tensor(a, requires_grad=True)
    pylucid.manual_seed(0)
    x = D.Gamma(pa, 1.0).rsample()
    x.sum().backward()
    want = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x.detach().numpy()))
    np.testing.assert_allclose(pa.grad.numpy(), want.numpy(), rtol=2e-3)
    torch.manual_seed(0)
    _same(x, torch._standard_gamma(torch.tensor(a)), "standard_gamma", rtol=0, atol=0)
    assert math.isfinite(float(pa.grad.sum()))
