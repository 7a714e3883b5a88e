"""Probabilistic modelling with torch.distributions the way notebooks on likelihoods and
variational inference write it: a robust regression with a Laplace likelihood against a Normal
one on data with outliers, a survival model with an Exponential likelihood (log_prob for events,
log survival 1 - cdf for censored rows), positive scales through LogNormal priors, count data
with a Geometric likelihood parameterised by logits, Bayes-by-backprop for a linear model (a
mean-field Normal posterior, rsample, Independent, kl_divergence to the prior) and posterior
predictive summaries; every number printed with the seed fixed."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import (Exponential, Geometric, Independent, Laplace, LogNormal, Normal,
                                 kl_divergence)

torch.manual_seed(5)

# ---- robust regression: Laplace vs Normal likelihood on data with outliers --------------------
n = 120
x = torch.linspace(-2, 2, n).unsqueeze(1)
y = 1.5 * x.squeeze(1) - 0.5 + 0.3 * torch.randn(n)
outliers = torch.randperm(n)[:12]
y[outliers] += Laplace(0.0, 4.0).sample((12,))
print("data", tuple(x.shape), "outliers", outliers[:4].tolist())


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1, 1)
        self.log_scale = nn.Parameter(torch.zeros(()))

    def forward(self, x):
        return self.lin(x).squeeze(1), self.log_scale.exp()


for name, family in (("normal", Normal), ("laplace", Laplace)):
    torch.manual_seed(0)
    model = Regressor()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for step in range(300):
        loc, scale = model(x)
        nll = -family(loc, scale).log_prob(y).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
    print(f"{name}: slope {model.lin.weight.item():.4f} intercept {model.lin.bias.item():.4f} "
          f"scale {scale.item():.4f} nll {nll.item():.5f}")

# ---- survival analysis with right censoring --------------------------------------------------
torch.manual_seed(1)
m = 200
covariate = torch.randn(m)
true_rate = torch.exp(0.5 * covariate - 1.0)
times = Exponential(true_rate).sample()
censor_at = 4.0
observed = times <= censor_at
t_obs = times.clamp(max=censor_at)
print("censored fraction %.4f" % (1 - observed.float().mean().item()))
w = torch.zeros(2, requires_grad=True)
opt = torch.optim.Adam([w], lr=0.05)
for step in range(400):
    rate = torch.exp(w[0] * covariate + w[1])
    dist = Exponential(rate)
    log_lik = torch.where(observed, dist.log_prob(t_obs), torch.log1p(-dist.cdf(t_obs)))
    loss = -log_lik.mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("exponential survival: coef %.4f log-baseline %.4f nll %.5f" % (w[0].item(), w[1].item(), loss.item()))
d = Exponential(torch.tensor([0.5, 1.0, 2.0]))
print("median survival", [round(v, 4) for v in d.icdf(torch.tensor(0.5)).tolist()], "mean", d.mean.tolist(),
      "entropy", [round(v, 4) for v in d.entropy().tolist()])

# ---- LogNormal priors on positive quantities -------------------------------------------------
prior = LogNormal(torch.tensor(0.0), torch.tensor(0.5))
draws = prior.sample((5000,))
print("lognormal prior mean %.4f (analytic %.4f) median %.4f mode %.4f" % (
    draws.mean().item(), prior.mean.item(), draws.median().item(), prior.mode.item()))
print("lognormal log_prob", [round(v, 5) for v in prior.log_prob(torch.tensor([0.5, 1.0, 2.0])).tolist()])
print("lognormal cdf", [round(v, 5) for v in prior.cdf(torch.tensor([0.5, 1.0, 2.0])).tolist()])

# ---- count data: Geometric likelihood with logits ---------------------------------------------
torch.manual_seed(2)
feature = torch.randn(300)
p_true = torch.sigmoid(0.8 * feature + 0.2)
counts = Geometric(probs=p_true).sample()
print("counts", counts[:10].tolist(), "max", counts.max().item())
theta = torch.zeros(2, requires_grad=True)
opt = torch.optim.Adam([theta], lr=0.05)
for step in range(300):
    logits = theta[0] * feature + theta[1]
    loss = -Geometric(logits=logits).log_prob(counts).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("geometric regression: %.4f %.4f nll %.5f" % (theta[0].item(), theta[1].item(), loss.item()))
g = Geometric(torch.tensor([0.2, 0.5]))
print("geometric mean/var/entropy", g.mean.tolist(), g.variance.tolist(), [round(v, 5) for v in g.entropy().tolist()])

# ---- Bayes by backprop for y = a x + b --------------------------------------------------------
torch.manual_seed(3)
xb = torch.randn(64)
yb = 2.0 * xb + 1.0 + 0.5 * torch.randn(64)
mu = torch.zeros(2, requires_grad=True)
rho = torch.full((2,), -3.0, requires_grad=True)
prior_w = Independent(Normal(torch.zeros(2), torch.ones(2)), 1)
opt = torch.optim.Adam([mu, rho], lr=0.05)
for step in range(500):
    q = Independent(Normal(mu, F.softplus(rho)), 1)
    wts = q.rsample((8,))
    pred = wts[:, :1] * xb + wts[:, 1:]
    log_lik = Normal(pred, 0.5).log_prob(yb).sum(-1).mean()
    kl = kl_divergence(q, prior_w)
    elbo = log_lik - kl
    opt.zero_grad()
    (-elbo).backward()
    opt.step()
    if step % 100 == 99:
        print(f"step {step + 1} elbo {elbo.item():.4f} kl {kl.item():.4f}")
q = Normal(mu.detach(), F.softplus(rho.detach()))
print("posterior mean", [round(v, 4) for v in q.mean.tolist()], "sd", [round(v, 4) for v in q.stddev.tolist()])
with torch.no_grad():
    wts = q.sample((1000,))
    x_new = torch.tensor([-1.0, 0.0, 1.0])
    pred = wts[:, :1] * x_new + wts[:, 1:]
print("predictive mean", [round(v, 3) for v in pred.mean(0).tolist()], "sd", [round(v, 3) for v in pred.std(0).tolist()])
