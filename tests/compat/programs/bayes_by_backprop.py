"""Bayes by Backprop and friends, as the Bayesian-deep-learning blog posts and course notebooks
write them: a BayesianLinear layer with softplus-parameterised Normal weight posteriors sampled by
rsample, a scale-mixture prior (MixtureSameFamily of two zero-mean Normals), the KL estimated by
Monte Carlo and in closed form with kl_divergence, the ELBO trained with Adam and a KL weight,
predictive mean/std by sampling; then a tour of the distributions such posts use: printing,
batch/event shapes, Independent, expand, TransformedDistribution (LogNormal by ExpTransform,
a logistic via SigmoidTransform + AffineTransform), Beta / Dirichlet / Gamma / StudentT / Cauchy /
Binomial / Laplace log-probs, entropies, means and variances, Categorical / OneHotCategorical /
RelaxedOneHotCategorical sampling with seeds, and kl_divergence between several pairs."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import distributions as D

torch.manual_seed(0)
x = torch.linspace(-2, 2, 64).unsqueeze(1)
y = x.pow(3) - x + 0.2 * torch.randn_like(x)


class BayesianLinear(nn.Module):
    def __init__(self, n_in, n_out, prior_pi=0.5, prior_s1=1.0, prior_s2=0.1):
        super().__init__()
        self.w_mu = nn.Parameter(torch.empty(n_out, n_in).uniform_(-0.2, 0.2))
        self.w_rho = nn.Parameter(torch.full((n_out, n_in), -4.0))
        self.b_mu = nn.Parameter(torch.zeros(n_out))
        self.b_rho = nn.Parameter(torch.full((n_out,), -4.0))
        mix = D.Categorical(torch.tensor([prior_pi, 1 - prior_pi]))
        comp = D.Normal(torch.zeros(2), torch.tensor([prior_s1, prior_s2]))
        self.prior = D.MixtureSameFamily(mix, comp)
        self.kl = torch.tensor(0.0)

    def forward(self, x):
        w_q = D.Normal(self.w_mu, F.softplus(self.w_rho))
        b_q = D.Normal(self.b_mu, F.softplus(self.b_rho))
        w = w_q.rsample()
        b = b_q.rsample()
        self.kl = (w_q.log_prob(w) - self.prior.log_prob(w)).sum() + (b_q.log_prob(b) - self.prior.log_prob(b)).sum()
        return F.linear(x, w, b)


class BNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = BayesianLinear(1, 32)
        self.l2 = BayesianLinear(32, 1)
        self.log_noise = nn.Parameter(torch.tensor(-1.0))

    def forward(self, x):
        return self.l2(torch.tanh(self.l1(x)))

    def kl(self):
        return self.l1.kl + self.l2.kl


model = BNN()
print(model.l1.prior)
print(model.l1.prior.mixture_distribution, model.l1.prior.component_distribution)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
n_batches = 4
for epoch in range(100):
    perm = torch.randperm(64)
    for i in range(n_batches):
        idx = perm[i * 16:(i + 1) * 16]
        pred = model(x[idx])
        nll = -D.Normal(pred, model.log_noise.exp()).log_prob(y[idx]).sum()
        kl_weight = 2 ** (n_batches - i - 1) / (2 ** n_batches - 1)
        loss = nll + kl_weight * model.kl() / 4
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if epoch % 50 == 0 or epoch == 99:
        print(f"epoch {epoch:3d} loss {loss.item():.4f} nll {nll.item():.4f} kl {model.kl().item():.3f} "
              f"noise {model.log_noise.exp().item():.4f}")
with torch.no_grad():
    x_test = torch.tensor([[-2.5], [-1.0], [0.0], [1.0], [2.5]])
    preds = torch.stack([model(x_test) for _ in range(200)])
    mean, std = preds.mean(0).squeeze(1), preds.std(0).squeeze(1)
    print("pred mean", mean)
    print("pred std ", std)
    print("extrapolation more uncertain:", bool(std[0] > std[2] and std[4] > std[2]))
    q = D.Normal(model.l1.w_mu, F.softplus(model.l1.w_rho))
    p = D.Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
    print(f"closed-form KL(q||N(0,1)) {D.kl_divergence(q, p).sum().item():.4f}")

print("== distributions tour ==")
torch.manual_seed(1)
n = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
print(n, n.batch_shape, n.event_shape)
print("sample", n.sample(), n.sample((3,)).shape, n.rsample((2, 4)).shape)
print("log_prob", n.log_prob(torch.tensor([0.5, 0.5])), "cdf", n.cdf(torch.tensor([0.0, 0.0])),
      "icdf", n.icdf(torch.tensor([0.975, 0.5])))
print("entropy", n.entropy(), "mean", n.mean, "stddev", n.stddev, "variance", n.variance)
ind = D.Independent(n, 1)
print(ind, ind.batch_shape, ind.event_shape, ind.log_prob(torch.zeros(2)))
print(n.expand((3, 2)).batch_shape, D.Normal(0.0, 1.0).expand([4]).sample().shape)
mvn = D.MultivariateNormal(torch.zeros(2), torch.tensor([[1.0, 0.5], [0.5, 2.0]]))
print(mvn, mvn.log_prob(torch.tensor([0.3, -0.2])), mvn.entropy(), mvn.scale_tril)
lognormal = D.TransformedDistribution(D.Normal(0.0, 0.5), [D.transforms.ExpTransform()])
ln = D.LogNormal(0.0, 0.5)
v = torch.tensor([0.5, 1.0, 2.0])
print("lognormal", lognormal.log_prob(v), ln.log_prob(v), ln.mean, ln.variance)
logistic = D.TransformedDistribution(D.Uniform(0.0, 1.0),
                                     [D.transforms.SigmoidTransform().inv, D.transforms.AffineTransform(1.0, 2.0)])
print("logistic", logistic.log_prob(torch.tensor([0.0, 1.0, 3.0])), logistic.sample((3,)))
beta = D.Beta(torch.tensor([2.0, 0.5]), torch.tensor([3.0, 0.5]))
print(beta, beta.mean, beta.variance, beta.log_prob(torch.tensor([0.3, 0.9])), beta.entropy())
print("beta sample", beta.sample((2,)))
dir_ = D.Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
s = dir_.sample()
print(dir_, s, s.sum(), dir_.log_prob(torch.tensor([0.2, 0.3, 0.5])), dir_.mean, dir_.entropy())
gamma = D.Gamma(torch.tensor([2.0, 5.0]), torch.tensor([1.0, 0.5]))
print(gamma, gamma.mean, gamma.variance, gamma.log_prob(torch.tensor([1.5, 8.0])), gamma.sample())
st = D.StudentT(df=3.0, loc=0.0, scale=1.0)
print(st, st.log_prob(torch.tensor([0.0, 2.0, 10.0])), st.variance, st.sample((3,)))
cauchy = D.Cauchy(0.0, 1.0)
print(cauchy.log_prob(torch.tensor([0.0, 1.0])), cauchy.cdf(torch.tensor(1.0)), cauchy.mean, cauchy.sample((2,)))
binom = D.Binomial(10, probs=torch.tensor([0.2, 0.7]))
print(binom, binom.log_prob(torch.tensor([2.0, 7.0])), binom.mean, binom.variance, binom.sample())
lap = D.Laplace(0.0, 2.0)
print(lap.log_prob(torch.tensor([1.0])), lap.entropy(), lap.sample((2,)))
pois = D.Poisson(torch.tensor([1.0, 4.0]))
print(pois.log_prob(torch.tensor([0.0, 4.0])), pois.sample((3,)))
bern = D.Bernoulli(logits=torch.tensor([-1.0, 0.0, 2.0]))
print(bern, bern.probs, bern.entropy(), bern.sample(), bern.log_prob(torch.tensor([0.0, 1.0, 1.0])))
geo = D.Geometric(probs=torch.tensor(0.3))
print(geo.log_prob(torch.tensor(2.0)), geo.mean, geo.sample((4,)))

cat = D.Categorical(logits=torch.tensor([1.0, 2.0, 0.5]))
print(cat, cat.probs, cat.entropy(), cat.sample((6,)), cat.log_prob(torch.tensor([0, 1, 2])))
print(cat.param_shape, cat.enumerate_support())
ohc = D.OneHotCategorical(probs=torch.tensor([0.2, 0.5, 0.3]))
print(ohc.sample((2,)), ohc.log_prob(torch.tensor([0.0, 1.0, 0.0])))
relaxed = D.RelaxedOneHotCategorical(torch.tensor(0.5), logits=torch.tensor([1.0, 2.0, 0.5]))
r = relaxed.rsample()
print("relaxed", r, r.sum(), relaxed.log_prob(r))
rb = D.RelaxedBernoulli(torch.tensor(0.3), probs=torch.tensor([0.2, 0.8]))
print("relaxed bernoulli", rb.rsample())
g = torch.Generator().manual_seed(7)
print("multinomial with generator", torch.multinomial(cat.probs, 8, replacement=True, generator=g))
mult = D.Multinomial(20, probs=torch.tensor([0.2, 0.5, 0.3]))
print("multinomial dist", mult.sample(), mult.log_prob(torch.tensor([4.0, 10.0, 6.0])))

print("== kl_divergence ==")
pairs = [
    (D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)),
    (D.Bernoulli(0.3), D.Bernoulli(0.6)),
    (D.Categorical(torch.tensor([0.2, 0.8])), D.Categorical(torch.tensor([0.5, 0.5]))),
    (D.Beta(2.0, 3.0), D.Beta(1.0, 1.0)),
    (D.Gamma(2.0, 1.0), D.Gamma(3.0, 2.0)),
    (D.Dirichlet(torch.tensor([1.0, 2.0])), D.Dirichlet(torch.tensor([2.0, 2.0]))),
    (D.Laplace(0.0, 1.0), D.Laplace(1.0, 2.0)),
    (D.Exponential(1.0), D.Exponential(3.0)),
    (D.Uniform(0.0, 1.0), D.Uniform(-1.0, 2.0)),
    (D.Poisson(2.0), D.Poisson(3.0)),
    (mvn, D.MultivariateNormal(torch.ones(2), torch.eye(2))),
    (D.Independent(D.Normal(torch.zeros(3), 1.0), 1), D.Independent(D.Normal(torch.ones(3), 2.0), 1)),
]
for p_, q_ in pairs:
    print(f"KL({type(p_).__name__}||{type(q_).__name__}) = {D.kl_divergence(p_, q_).item():.6f}")
mc = (D.Normal(0.0, 1.0).log_prob(z := D.Normal(0.0, 1.0).sample((20000,))) - D.Normal(1.0, 2.0).log_prob(z)).mean()
print(f"MC estimate {mc.item():.4f} vs closed form {D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)).item():.4f}")
try:
    D.kl_divergence(D.Beta(2.0, 3.0), D.Normal(0.0, 1.0))
except NotImplementedError:
    print("Beta||Normal not implemented")
try:
    D.Normal(0.0, -1.0)
except ValueError as e:
    print("validation:", "scale" in str(e))
print(f"log 2pi {math.log(2 * math.pi):.6f}")
