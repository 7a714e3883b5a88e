"""Bayesian-flavoured regression tricks from the uncertainty posts: MC dropout (model.train() at
test time, torch.stack of T stochastic passes, mean/std), a heteroscedastic Gaussian NLL head
(nn.GaussianNLLLoss with var from F.softplus), a deep-ensemble average, quantile (pinball) loss
with torch.maximum, nn.PoissonNLLLoss(log_input=True), torch.distributions.Normal(mu, sigma)
.cdf/.icdf for calibration coverage, and torch.quantile/nanquantile of the predictive samples."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

torch.manual_seed(0)
x = torch.linspace(-3, 3, 160).unsqueeze(1)
noise_std = 0.1 + 0.3 * (x.abs() / 3)
y = torch.sin(x) + noise_std * torch.randn_like(x)


class HeteroNet(nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), nn.Dropout(p), nn.Linear(64, 64), nn.ReLU(),
                                  nn.Dropout(p))
        self.mu = nn.Linear(64, 1)
        self.var = nn.Linear(64, 1)

    def forward(self, x):
        h = self.body(x)
        return self.mu(h), F.softplus(self.var(h)) + 1e-6


gnll = nn.GaussianNLLLoss(full=True, eps=1e-6)
ensemble = []
for seed in range(3):
    torch.manual_seed(seed)
    net = HeteroNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for step in range(150):
        mu, var = net(x)
        loss = gnll(mu, y, var)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"member {seed} nll {loss.item():.5f}")
    ensemble.append(net)
assert loss.item() < 1.0

torch.manual_seed(10)
net = ensemble[0]
net.train()
with torch.no_grad():
    samples = torch.stack([net(x)[0] for _ in range(20)])
mean, std = samples.mean(0), samples.std(0)
print("mc dropout std mean", round(std.mean().item(), 5), "max", round(std.max().item(), 5))
q = torch.quantile(samples.squeeze(-1), torch.tensor([0.05, 0.5, 0.95]), dim=0)
print("quantiles", [round(v, 5) for v in q[:, 80].tolist()], torch.nanquantile(samples[:, 0, 0], 0.5).item())
for m in ensemble:
    m.eval()
with torch.no_grad():
    mus = torch.stack([m(x)[0] for m in ensemble])
    vars_ = torch.stack([m(x)[1] for m in ensemble])
ens_mu = mus.mean(0)
ens_var = (vars_ + mus.pow(2)).mean(0) - ens_mu.pow(2)
pred = Normal(ens_mu, ens_var.sqrt())
z = pred.cdf(y)
coverage = ((z > 0.05) & (z < 0.95)).float().mean().item()
print("coverage90", round(coverage, 4), "rmse", round(F.mse_loss(ens_mu, y).sqrt().item(), 5))
print("icdf", [round(v, 5) for v in pred.icdf(torch.full_like(y, 0.975))[:3, 0].tolist()])
print("log_prob mean", round(pred.log_prob(y).mean().item(), 5))


def pinball(pred, target, tau):
    diff = target - pred
    return torch.maximum(tau * diff, (tau - 1) * diff).mean()


print("pinball", [round(pinball(ens_mu, y, t).item(), 6) for t in (0.1, 0.5, 0.9)])
counts = torch.poisson(torch.full((20,), 3.0))
log_rate = torch.zeros(20, requires_grad=True)
pl = nn.PoissonNLLLoss(log_input=True, full=True)(log_rate, counts)
pl.backward()
print("poisson", round(pl.item(), 5), round(log_rate.grad.sum().item(), 5), counts[:6].tolist())
print("gnll none", gnll.__class__.__name__, F.gaussian_nll_loss(torch.zeros(3), torch.ones(3), torch.full((3,), 2.0),
                                                                 reduction="none").tolist())
print(math.isclose(F.gaussian_nll_loss(torch.zeros(3), torch.ones(3), torch.full((3,), 2.0), full=True).item(),
                   0.5 * (math.log(2.0) + 0.5) + 0.5 * math.log(2 * math.pi), rel_tol=1e-6))
