"""Optimal transport, as the "Sinkhorn in PyTorch" tutorials write it: squared-Euclidean costs from
torch.cdist, the entropic plan by Sinkhorn iterations in the log domain (torch.logsumexp), its
marginals, the exact assignment for a small problem by brute force over permutations
(itertools) that the plan approaches as epsilon falls, the 1-D Wasserstein distance in closed
form from sorted samples and from quantile functions (torch.searchsorted, torch.quantile), the
Sinkhorn divergence between point clouds, and a gradient flow that moves a cloud onto a target
by differentiating the divergence with respect to the points (autograd through every
iteration), with the barycentric map of the final plan."""
import itertools
import math

import torch

torch.manual_seed(0)


def sinkhorn(x, y, eps, iters=200, a=None, b=None):
    C = torch.cdist(x, y) ** 2
    n, m = C.shape
    log_a = torch.full((n,), -math.log(n)) if a is None else a.log()
    log_b = torch.full((m,), -math.log(m)) if b is None else b.log()
    f, g = torch.zeros(n), torch.zeros(m)
    for _ in range(iters):
        f = -eps * torch.logsumexp((g.unsqueeze(0) - C) / eps + log_b.unsqueeze(0), dim=1)
        g = -eps * torch.logsumexp((f.unsqueeze(1) - C) / eps + log_a.unsqueeze(1), dim=0)
    log_P = (f.unsqueeze(1) + g.unsqueeze(0) - C) / eps + log_a.unsqueeze(1) + log_b.unsqueeze(0)
    P = log_P.exp()
    return P, (P * C).sum(), f, g


x = torch.randn(6, 2)
y = torch.randn(6, 2) + torch.tensor([2.0, 1.0])
C = torch.cdist(x, y) ** 2
best = min(itertools.permutations(range(6)), key=lambda p: C[torch.arange(6), torch.tensor(p)].sum().item())
exact = C[torch.arange(6), torch.tensor(best)].mean()
print("exact assignment", list(best), f"cost {exact.item():.6f}")
for eps in (1.0, 0.1, 0.02):
    P, cost, f, g = sinkhorn(x, y, eps, iters=300)
    print(f"eps {eps}: cost {cost.item():.6f} row marginal err {(P.sum(1) - 1 / 6).abs().max().item():.1e} "
          f"col err {(P.sum(0) - 1 / 6).abs().max().item():.1e} argmax {P.argmax(1).tolist()}")

# ---- 1-D Wasserstein distances ------------------------------------------------------------------
u = torch.randn(500)
v = 0.5 * torch.randn(500) + 1.0
w1_sorted = (torch.sort(u).values - torch.sort(v).values).abs().mean()
qs = torch.linspace(0.001, 0.999, 999)
w1_quantile = (torch.quantile(u, qs) - torch.quantile(v, qs)).abs().mean()
print(f"W1 sorted {w1_sorted.item():.6f} quantile {w1_quantile.item():.6f}")
grid = torch.linspace(-4, 4, 81)
cdf_u = torch.searchsorted(torch.sort(u).values, grid, right=True).float() / 500
cdf_v = torch.searchsorted(torch.sort(v).values, grid, right=True).float() / 500
print(f"W1 from CDFs {((cdf_u - cdf_v).abs().sum() * 0.1).item():.6f}",
      "ks statistic", f"{(cdf_u - cdf_v).abs().max().item():.4f}")
hist_u = torch.histc(u, bins=8, min=-4, max=4)
print("histogram", hist_u.long().tolist())

# ---- Sinkhorn divergence and a gradient flow ----------------------------------------------------


def divergence(x, y, eps=0.1, iters=50):
    return (sinkhorn(x, y, eps, iters)[1] - 0.5 * sinkhorn(x, x, eps, iters)[1]
            - 0.5 * sinkhorn(y, y, eps, iters)[1])


torch.manual_seed(1)
source = torch.randn(24, 2) * 0.5
theta = torch.linspace(0, 2 * math.pi, 25)[:-1]
target = torch.stack([torch.cos(theta), torch.sin(theta)], dim=1) * 2 + torch.tensor([1.0, 0.0])
pts = source.clone().requires_grad_(True)
opt = torch.optim.SGD([pts], lr=2.0)
for step in range(25):
    loss = divergence(pts, target)
    opt.zero_grad()
    loss.backward()
    if step % 8 == 0:
        print(f"flow step {step}: divergence {loss.item():.6f} grad norm {pts.grad.norm().item():.6f}")
    opt.step()
print(f"final divergence {divergence(pts, target).item():.6f}",
      "mean radius", f"{(pts.detach() - torch.tensor([1.0, 0.0])).norm(dim=1).mean().item():.5f}")

with torch.no_grad():
    P, _, _, _ = sinkhorn(pts, target, 0.05, 300)
    bary = (P @ target) / P.sum(1, keepdim=True)
print("barycentric map error", f"{(bary - pts).norm(dim=1).mean().item():.5f}")
