"""A RealNVP normalising flow on two moons as the flow tutorials write it: alternating binary
masks registered as buffers, coupling layers with scale (tanh) and translation nets, log|det J|
summed per sample, a base distribution torch.distributions.MultivariateNormal(zeros, eye) (and an
Independent(Normal) twin), log_prob + logdet as the log-likelihood, sampling by the inverse pass,
and a check of the change of variables against torch.autograd.functional.jacobian."""
import math

import numpy as np
import torch
import torch.nn as nn
from torch import distributions
from torch.distributions import MultivariateNormal, Normal, Independent

torch.manual_seed(0)
np.random.seed(0)


def make_moons(n, noise=0.1):
    n_out, n_in = n // 2, n - n // 2
    outer = np.stack([np.cos(np.linspace(0, np.pi, n_out)), np.sin(np.linspace(0, np.pi, n_out))], 1)
    inner = np.stack([1 - np.cos(np.linspace(0, np.pi, n_in)), 1 - np.sin(np.linspace(0, np.pi, n_in)) - .5], 1)
    X = np.concatenate([outer, inner]) + noise * np.random.randn(n, 2)
    return X.astype(np.float32)


class RealNVP(nn.Module):
    def __init__(self, nets, nett, mask, prior):
        super(RealNVP, self).__init__()
        self.prior = prior
        self.mask = nn.Parameter(mask, requires_grad=False)
        self.t = torch.nn.ModuleList([nett() for _ in range(len(mask))])
        self.s = torch.nn.ModuleList([nets() for _ in range(len(mask))])

    def g(self, z):
        x = z
        for i in range(len(self.t)):
            x_ = x * self.mask[i]
            s = self.s[i](x_) * (1 - self.mask[i])
            t = self.t[i](x_) * (1 - self.mask[i])
            x = x_ + (1 - self.mask[i]) * (x * torch.exp(s) + t)
        return x

    def f(self, x):
        log_det_J, z = x.new_zeros(x.shape[0]), x
        for i in reversed(range(len(self.t))):
            z_ = self.mask[i] * z
            s = self.s[i](z_) * (1 - self.mask[i])
            t = self.t[i](z_) * (1 - self.mask[i])
            z = (1 - self.mask[i]) * (z - t) * torch.exp(-s) + z_
            log_det_J -= s.sum(dim=1)
        return z, log_det_J

    def log_prob(self, x):
        z, logp = self.f(x)
        return self.prior.log_prob(z) + logp

    def sample(self, batchSize):
        z = self.prior.sample((batchSize, 1))
        logp = self.prior.log_prob(z)
        x = self.g(z)
        return x


nets = lambda: nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(), nn.Linear(32, 32), nn.LeakyReLU(), nn.Linear(32, 2),
                             nn.Tanh())
nett = lambda: nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(), nn.Linear(32, 32), nn.LeakyReLU(), nn.Linear(32, 2))
masks = torch.from_numpy(np.array([[0, 1], [1, 0]] * 3).astype(np.float32))
prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
flow = RealNVP(nets, nett, masks, prior)
print("params", sum(p.numel() for p in flow.parameters() if p.requires_grad), "keys", list(flow.state_dict())[:3])

optimizer = torch.optim.Adam([p for p in flow.parameters() if p.requires_grad == True], lr=1e-3)
data = torch.from_numpy(make_moons(1000, noise=0.05))
losses = []
for t in range(101):
    idx = torch.randint(0, 1000, (100,))
    loss = -flow.log_prob(data[idx]).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
    losses.append(loss.item())
    if t % 25 == 0:
        print('iter %s:' % t, 'loss = %.4f' % loss)
assert losses[-1] < losses[0]

with torch.no_grad():
    z, logdet = flow.f(data[:5])
    x_back = flow.g(z)
print("invertible", torch.allclose(x_back, data[:5], atol=1e-5), "logdet", logdet.tolist())
samples = flow.sample(4)
print("sample shape", tuple(samples.shape), samples.squeeze(1).tolist())

# log|det J| from the jacobian of f equals the flow's bookkeeping.
x0 = data[7]
J = torch.autograd.functional.jacobian(lambda v: flow.f(v.unsqueeze(0))[0].squeeze(0), x0)
print("jacobian logdet", torch.logdet(J).item(), torch.slogdet(J).logabsdet.item(), flow.f(x0[None])[1].item())

# The base distributions agree.
ind = Independent(Normal(torch.zeros(2), torch.ones(2)), 1)
zz = torch.randn(3, 2)
print("log_prob", prior.log_prob(zz).tolist(), ind.log_prob(zz).tolist())
print("manual", (-0.5 * (zz ** 2).sum(-1) - math.log(2 * math.pi)).tolist())
mvn = MultivariateNormal(torch.tensor([1., -1.]), covariance_matrix=torch.tensor([[2., 0.3], [0.3, 0.5]]))
print("mvn", mvn.log_prob(zz).tolist(), mvn.entropy().item(), mvn.mean.tolist(), mvn.variance.tolist())
print("scale_tril", mvn.scale_tril.tolist())
mvn2 = MultivariateNormal(torch.zeros(2), scale_tril=mvn.scale_tril)
print("rsample", mvn2.rsample((2,)).shape, mvn2.batch_shape, mvn2.event_shape, ind.batch_shape, ind.event_shape)
print("kl", distributions.kl_divergence(mvn, MultivariateNormal(torch.zeros(2), torch.eye(2))).item())
n = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
print("normal", n.log_prob(torch.tensor([0.5, 0.5])).tolist(), n.cdf(torch.tensor(0.3)).tolist(),
      n.icdf(torch.tensor([0.1, 0.9])).tolist(), n.entropy().tolist(), n.stddev.tolist())
