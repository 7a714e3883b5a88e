"""pylucid.distributions (Normal, Uniform, Bernoulli, Categorical, kl_divergence): the same
samples as PyTorch for the same seed, log_prob/entropy/KL values and gradients equal to
PyTorch's (skipped without torch), float64 gradcheck of the differentiable parts, and the
lazily computed probs/logits staying differentiable when first used under no_grad."""
import numpy as np
import pylucid
import pytest
from pylucid import distributions as D
from pylucid.autograd import gradcheck

RNG = np.random.default_rng(3)


def _np(t):
    return np.asarray(t.detach().numpy())


def _build(L, name, params):
    ts = {k: L.tensor(v, requires_grad=True) for k, v in params.items()}
    return getattr(L.distributions, name)(**ts), ts


CASES = [
    ("Normal", {"loc": RNG.standard_normal(3), "scale": RNG.random(3) + 0.5}, RNG.standard_normal((4, 3))),
    ("Uniform", {"low": np.array([-1.0, 0.0]), "high": np.array([1.0, 2.5])}, np.array([[0.5, 2.0], [-0.9, 0.1]])),
    ("Bernoulli", {"probs": np.array([0.2, 0.7, 0.99])}, np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])),
    ("Bernoulli", {"logits": np.array([-1.0, 0.3])}, np.array([1.0, 0.0])),
    ("Categorical", {"probs": np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])}, np.array([[2, 0], [1, 1]])),
    ("Categorical", {"logits": RNG.standard_normal((2, 4))}, np.array([3, 0])),
]


@pytest.mark.parametrize("name,params,value", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_equal_torch(name, params, value):
    """Guards against other random calls than PyTorch's (samples would differ for the same seed),
    and wrong log_prob, entropy or their gradients."""
    torch = pytest.importorskip("torch")
    res = []
    for L in (pylucid, torch):
        L.manual_seed(5)
        d, ts = _build(L, name, params)
        sample = d.sample((2, 3)).float()
        v = L.tensor(value)
        lp = d.log_prob(v if name != "Categorical" else v.long())
        out = [sample.numpy(), lp.detach().numpy()]
        total = lp.sum()
        if name != "Uniform":
            ent = d.entropy()
            out.append(ent.detach().numpy())
            total = total + ent.sum()
        if d.has_rsample:
            L.manual_seed(6)
            rs = d.rsample((5,))
            out.append(rs.detach().numpy())
            total = total + rs.sum()
        total.backward()
        out += [t.grad.numpy() if t.grad is not None else np.zeros(1) for t in ts.values()]
        res.append(out)
    for p, q in zip(*res):
        np.testing.assert_allclose(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64), rtol=1e-6,
                                   atol=1e-7)


def test_kl_divergence_equals_torch():
    torch = pytest.importorskip("torch")
    pairs = [("Normal", {"loc": [0.0, 1.0], "scale": [1.0, 2.0]}, {"loc": [0.5, -1.0], "scale": [0.5, 1.0]}),
             ("Categorical", {"probs": [[0.2, 0.8, 0.0], [0.3, 0.3, 0.4]]}, {"probs": [[0.5, 0.25, 0.25], [0.1, 0.0, 0.9]]}),
             ("Bernoulli", {"probs": [0.2, 0.0, 0.6]}, {"probs": [0.5, 0.3, 0.6]}),
             ("Uniform", {"low": [0.0, -1.0], "high": [1.0, 1.0]}, {"low": [-1.0, 0.0], "high": [2.0, 3.0]})]
    for name, a, b in pairs:
        ours = D.kl_divergence(getattr(D, name)(**{k: pylucid.tensor(v) for k, v in a.items()}),
                               getattr(D, name)(**{k: pylucid.tensor(v) for k, v in b.items()}))
        theirs = torch.distributions.kl_divergence(
            getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in a.items()}),
            getattr(torch.distributions, name)(**{k: torch.tensor(v) for k, v in b.items()}))
        np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-6)


def test_gradcheck_and_lazy_probs_without_torch():
    """float64 gradcheck of log_prob/entropy/KL/rsample in the parameters; a Categorical whose probs
    were first computed by sample() under no_grad still differentiates its entropy."""
    loc = pylucid.tensor(RNG.standard_normal(3), requires_grad=True)
    scale = pylucid.tensor(RNG.random(3) + 0.5, requires_grad=True)
    x = pylucid.tensor(RNG.standard_normal(3))
    assert gradcheck(lambda m, s: D.Normal(m, s).log_prob(x) + D.Normal(m, s).entropy(), [loc, scale])
    assert gradcheck(lambda m, s: D.kl_divergence(D.Normal(m, s), D.Normal(m * 0.5, s + 1)), [loc, scale])
    logits = pylucid.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    assert gradcheck(lambda lg: D.Categorical(logits=lg).entropy() + D.Categorical(logits=lg).log_prob(
        pylucid.tensor([1, 2])), [logits])
    assert gradcheck(lambda lg: D.Bernoulli(logits=lg).log_prob(pylucid.tensor([[1.0, 0.0, 1.0]] * 2)), [logits])
    d = D.Categorical(logits=logits)
    d.sample()
    d.entropy().sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0
    pylucid.manual_seed(0)
    draws = D.Categorical(probs=pylucid.tensor([0.0, 1.0, 0.0])).sample((20,))
    assert draws.tolist() == [1] * 20
    with pytest.raises(ValueError, match="probs"):
        D.Categorical(probs=pylucid.ones(3), logits=pylucid.ones(3))
    with pytest.raises(RuntimeError, match="kl_divergence"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))
