"""Energy-based models, as the Hopfield / Boltzmann / EBM tutorials write them in PyTorch: a
classical Hopfield network (Hebbian weights, asynchronous sign updates, the energy never rising,
recall of corrupted patterns), a modern continuous Hopfield network (Ramsauer et al.: one
softmax-attention update retrieves a stored pattern; its log-sum-exp energy falls), a restricted
Boltzmann machine on binary bars trained by contrastive divergence (torch.bernoulli Gibbs
sampling, the free energy, a reconstruction error that falls), and a small energy-based model on a
2-D Gaussian mixture trained with short-run Langevin dynamics (gradients of the energy with
torch.autograd.grad, noise from torch.randn_like, a replay buffer)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

# ---- classical Hopfield network ---------------------------------------------------------------
N, K = 64, 4
patterns = torch.sign(torch.randn(K, N))
W = patterns.T @ patterns / N
W.fill_diagonal_(0)


def energy(s):
    return -0.5 * s @ W @ s


def recall(s, sweeps=4, gen=None):
    s = s.clone()
    energies = [energy(s).item()]
    for _ in range(sweeps):
        for i in torch.randperm(N, generator=gen).tolist():
            h = W[i] @ s
            s[i] = 1.0 if h >= 0 else -1.0
        energies.append(energy(s).item())
    return s, energies


gen = torch.Generator().manual_seed(1)
for k in range(K):
    noisy = patterns[k].clone()
    flip = torch.randperm(N, generator=gen)[:12]
    noisy[flip] *= -1
    s, es = recall(noisy, gen=gen)
    overlaps = (patterns @ s / N).tolist()
    monotone = all(b <= a + 1e-6 for a, b in zip(es, es[1:]))
    print(f"pattern {k}: overlap before {(patterns[k] @ noisy / N).item():.4f} after {overlaps[k]:.4f} "
          f"energy {es[0]:.4f} -> {es[-1]:.4f} monotone {monotone}")

# ---- modern (continuous) Hopfield network -------------------------------------------------------
d, M = 16, 10
X = F.normalize(torch.randn(d, M), dim=0) * 4  # stored patterns as columns
beta = 0.4


def lse_energy(xi):
    return -torch.logsumexp(beta * X.T @ xi, 0) / beta + 0.5 * xi @ xi


query = X[:, 3] + 0.8 * torch.randn(d)
xi = query
for step in range(3):
    p = torch.softmax(beta * X.T @ xi, dim=0)
    new = X @ p
    print(f"modern step {step}: energy {lse_energy(xi).item():.5f} -> {lse_energy(new).item():.5f} "
          f"argmax {p.argmax().item()} p_max {p.max().item():.5f}")
    xi = new
print("retrieved pattern 3", torch.allclose(xi, X[:, 3], atol=0.5), f"{(xi - X[:, 3]).norm().item():.3e}")

# ---- restricted Boltzmann machine with CD-1 ------------------------------------------------------
side = 4
bars = []
for i in range(side):
    img = torch.zeros(side, side)
    img[i, :] = 1
    bars.append(img.flatten())
    img = torch.zeros(side, side)
    img[:, i] = 1
    bars.append(img.flatten())
data = torch.stack(bars)  # (8, 16)


class RBM(nn.Module):
    def __init__(self, n_vis, n_hid):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n_hid, n_vis) * 0.1)
        self.v_bias = nn.Parameter(torch.zeros(n_vis))
        self.h_bias = nn.Parameter(torch.zeros(n_hid))

    def sample_h(self, v):
        p = torch.sigmoid(F.linear(v, self.W, self.h_bias))
        return p, torch.bernoulli(p)

    def sample_v(self, h):
        p = torch.sigmoid(F.linear(h, self.W.t(), self.v_bias))
        return p, torch.bernoulli(p)

    def free_energy(self, v):
        vbias_term = v.mv(self.v_bias)
        hidden_term = F.softplus(F.linear(v, self.W, self.h_bias)).sum(dim=1)
        return (-hidden_term - vbias_term).mean()


torch.manual_seed(2)
rbm = RBM(16, 12)
opt = torch.optim.SGD(rbm.parameters(), lr=0.5)
for epoch in range(150):
    v0 = data[torch.randperm(len(data))]
    _, h0 = rbm.sample_h(v0)
    pv1, v1 = rbm.sample_v(h0)
    loss = rbm.free_energy(v0) - rbm.free_energy(v1.detach())
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 50 == 49:
        with torch.no_grad():
            ph, _ = rbm.sample_h(data)
            recon = torch.sigmoid(F.linear(ph, rbm.W.t(), rbm.v_bias))
            print(f"rbm epoch {epoch + 1}: cd loss {loss.item():.5f} recon error "
                  f"{F.binary_cross_entropy(recon, data).item():.5f} free energy {rbm.free_energy(data).item():.5f}")

# ---- an energy-based model trained with Langevin dynamics -----------------------------------------
torch.manual_seed(3)
centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0]])
real = centers[torch.randint(0, 3, (256,))] + 0.3 * torch.randn(256, 2)
energy_net = nn.Sequential(nn.Linear(2, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 1))
opt = torch.optim.Adam(energy_net.parameters(), lr=1e-3, betas=(0.0, 0.999))
buffer = torch.rand(128, 2) * 6 - 3


def langevin(x, steps=10, step_size=0.05):
    x = x.clone().requires_grad_(True)
    for _ in range(steps):
        e = energy_net(x).sum()
        (g,) = torch.autograd.grad(e, x)
        x = (x - step_size * g + math.sqrt(2 * step_size) * 0.1 * torch.randn_like(x)).detach().requires_grad_(True)
    return x.detach()


for it in range(40):
    idx = torch.randint(0, len(buffer), (64,))
    init = buffer[idx]
    fresh = torch.rand(64, 2) < 0.05
    init = torch.where(fresh, torch.rand(64, 2) * 6 - 3, init)
    fake = langevin(init)
    buffer[idx] = fake
    batch = real[torch.randint(0, 256, (64,))]
    e_real, e_fake = energy_net(batch), energy_net(fake)
    loss = e_real.mean() - e_fake.mean() + 0.1 * (e_real.pow(2).mean() + e_fake.pow(2).mean())
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 10 == 9:
        print(f"ebm iter {it + 1}: loss {loss.item():.5f} E(real) {e_real.mean().item():.5f} "
              f"E(fake) {e_fake.mean().item():.5f}")
with torch.no_grad():
    grid = torch.stack(torch.meshgrid(torch.linspace(-3, 3, 7), torch.linspace(-3, 3, 7), indexing="ij"), -1)
    e_grid = energy_net(grid.reshape(-1, 2)).reshape(7, 7)
    lowest = grid.reshape(-1, 2)[e_grid.flatten().argmin()]
print("lowest energy on the grid at", [round(v, 2) for v in lowest.tolist()],
      "E at centers", [round(v, 4) for v in energy_net(centers).squeeze(-1).tolist()])
