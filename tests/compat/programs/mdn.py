"""A mixture density network for the inverse-sine toy problem, as the MDN posts write it: a tanh
body with pi/mu/sigma heads, the mixture built with torch.distributions.MixtureSameFamily(
Categorical(logits=...), Normal(mu, sigma)) (and Independent(Normal) components for 2-D targets),
the loss -log_prob(y).mean(), sampling predictions per input with .sample(), and the mean and
variance of the predictive mixture."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, Independent, MixtureSameFamily, Normal

torch.manual_seed(0)
n = 400
y_data = torch.rand(n, 1) * 10.5 - 5.25
x_data = torch.sin(0.75 * y_data) * 7.0 + y_data * 0.5 + torch.randn(n, 1)


class MDN(nn.Module):
    def __init__(self, n_hidden=24, n_gaussians=5, out_dim=1):
        super().__init__()
        self.out_dim = out_dim
        self.z_h = nn.Sequential(nn.Linear(1, n_hidden), nn.Tanh())
        self.z_pi = nn.Linear(n_hidden, n_gaussians)
        self.z_mu = nn.Linear(n_hidden, n_gaussians * out_dim)
        self.z_sigma = nn.Linear(n_hidden, n_gaussians * out_dim)

    def forward(self, x):
        h = self.z_h(x)
        logits = self.z_pi(h)
        mu = self.z_mu(h)
        sigma = torch.exp(self.z_sigma(h)).clamp(min=1e-3)
        if self.out_dim == 1:
            return MixtureSameFamily(Categorical(logits=logits), Normal(mu, sigma))
        k = logits.shape[-1]
        comp = Independent(Normal(mu.view(-1, k, self.out_dim), sigma.view(-1, k, self.out_dim)), 1)
        return MixtureSameFamily(Categorical(logits=logits), comp)


model = MDN()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
losses = []
for epoch in range(120):
    dist = model(x_data)
    loss = -dist.log_prob(y_data.squeeze(1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if epoch % 30 == 0:
        print(f"epoch {epoch} nll {loss.item():.5f}")
assert losses[-1] < losses[0]
x_test = torch.linspace(-10, 10, 5).unsqueeze(1)
with torch.no_grad():
    d = model(x_test)
    print("mixture weights", [[round(v, 4) for v in row] for row in d.mixture_distribution.probs.tolist()])
    print("mean", [round(v, 4) for v in d.mean.tolist()], "std", [round(v, 4) for v in d.variance.sqrt().tolist()])
    torch.manual_seed(1)
    print("samples", [[round(v, 4) for v in row] for row in d.sample((3,)).tolist()])
model2 = MDN(out_dim=2)
opt2 = torch.optim.Adam(model2.parameters(), lr=0.01)
y2 = torch.cat([y_data, torch.cos(y_data)], 1)
for epoch in range(60):
    loss2 = -model2(x_data).log_prob(y2).mean()
    opt2.zero_grad()
    loss2.backward()
    opt2.step()
print("2-d nll", round(loss2.item(), 5), model2(x_test).event_shape, model2(x_test).sample().shape)
