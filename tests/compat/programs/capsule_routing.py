"""Capsules and discrete latents, as the CapsNet and Gumbel-softmax tutorials write them: a
primary-capsule conv layer reshaped into 8-D capsules, the squash nonlinearity, routing-by-
agreement between capsule layers (prediction vectors from a 5-D weight tensor by broadcasting
torch.matmul, coupling coefficients by softmax over the output capsules, agreement by dot
products, logits updated without gradient through the routing iterations), the margin loss on
capsule lengths, a decoder reconstructing the input from the masked true capsule, and a small
categorical VAE whose latent codes are sampled with F.gumbel_softmax(hard=True) (straight-through
gradients) with a KL term against the uniform prior and temperature annealing."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def squash(s, dim=-1, eps=1e-8):
    n2 = (s**2).sum(dim=dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + eps)


v = squash(torch.tensor([[3.0, 4.0], [0.1, 0.0]]))
print("squash lengths", [round(x, 6) for x in v.norm(dim=-1).tolist()])


class CapsNet(nn.Module):
    def __init__(self, n_classes=3, routing_iters=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3)  # 10x10 -> 8x8
        self.primary = nn.Conv2d(16, 4 * 8, 3, stride=2)  # -> 3x3, 4 capsule types of dim 8
        self.n_primary = 4 * 3 * 3
        self.W = nn.Parameter(0.05 * torch.randn(1, self.n_primary, n_classes, 12, 8))
        self.iters = routing_iters
        self.decoder = nn.Sequential(nn.Linear(12 * n_classes, 64), nn.ReLU(), nn.Linear(64, 100), nn.Sigmoid())

    def forward(self, x):
        h = F.relu(self.conv(x))
        u = self.primary(h)  # (B, 32, 3, 3)
        B = x.shape[0]
        u = u.view(B, 4, 8, 3, 3).permute(0, 1, 3, 4, 2).reshape(B, self.n_primary, 8)
        u = squash(u)
        u_hat = torch.matmul(self.W, u[:, :, None, :, None]).squeeze(-1)  # (B, N, C, 12)
        b = torch.zeros(B, self.n_primary, u_hat.shape[2])
        u_hat_detached = u_hat.detach()
        for r in range(self.iters):
            c = F.softmax(b, dim=2)
            if r == self.iters - 1:
                s = (c.unsqueeze(-1) * u_hat).sum(dim=1)
                v = squash(s)
            else:
                s = (c.unsqueeze(-1) * u_hat_detached).sum(dim=1)
                v = squash(s)
                b = b + (u_hat_detached * v.unsqueeze(1)).sum(-1)
        return v, c

    def reconstruct(self, v, y):
        mask = F.one_hot(y, v.shape[1]).float().unsqueeze(-1)
        return self.decoder((v * mask).flatten(1))


def margin_loss(lengths, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    T = F.one_hot(y, lengths.shape[1]).float()
    loss = T * F.relu(m_pos - lengths) ** 2 + lam * (1 - T) * F.relu(lengths - m_neg) ** 2
    return loss.sum(1).mean()


def shapes(n, gen):
    y = torch.randint(0, 3, (n,), generator=gen)
    x = 0.05 * torch.rand(n, 1, 10, 10, generator=gen)
    for i in range(n):
        if y[i] == 0:
            x[i, 0, 2:8, 2:8] += 0.9  # square
        elif y[i] == 1:
            x[i, 0, :, 4:6] += 0.9  # vertical bar
        else:
            x[i, 0, torch.arange(10), torch.arange(10)] += 0.9  # diagonal
    return x.clamp(0, 1), y


gen = torch.Generator().manual_seed(1)
X, Y = shapes(48, gen)
torch.manual_seed(2)
net = CapsNet()
opt = torch.optim.Adam(net.parameters(), lr=5e-3)
for epoch in range(6):
    v, c = net(X)
    lengths = v.norm(dim=-1)
    rec = net.reconstruct(v, Y)
    loss = margin_loss(lengths, Y) + 0.0005 * F.mse_loss(rec, X.flatten(1), reduction="sum") / len(X)
    opt.zero_grad()
    loss.backward()
    opt.step()
    acc = (lengths.argmax(1) == Y).float().mean().item()
    print(f"capsnet epoch {epoch}: loss {loss.item():.6f} accuracy {acc:.4f} mean coupling max {c.max(2).values.mean().item():.5f}")

# ---- a categorical VAE with Gumbel-softmax latents ----------------------------------------------
K, L = 4, 3  # 3 categorical latents with 4 classes each


class CatVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(100, 64), nn.ReLU(), nn.Linear(64, L * K))
        self.dec = nn.Sequential(nn.Linear(L * K, 64), nn.ReLU(), nn.Linear(64, 100))

    def forward(self, x, tau):
        logits = self.enc(x).view(-1, L, K)
        z = F.gumbel_softmax(logits, tau=tau, hard=True)
        return self.dec(z.flatten(1)), logits


torch.manual_seed(3)
vae = CatVAE()
opt = torch.optim.Adam(vae.parameters(), lr=3e-3)
flat = X.flatten(1)
for step in range(40):
    tau = max(0.5, math.exp(-0.03 * step))
    recon, logits = vae(flat, tau)
    q = F.softmax(logits, dim=-1)
    kl = (q * (torch.log(q + 1e-20) + math.log(K))).sum((1, 2)).mean()
    rec_loss = F.binary_cross_entropy_with_logits(recon, flat, reduction="sum") / len(flat)
    loss = rec_loss + kl
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0 or step == 39:
        print(f"cat-vae step {step}: tau {tau:.4f} recon {rec_loss.item():.5f} kl {kl.item():.5f}")
with torch.no_grad():
    codes = vae.enc(flat).view(-1, L, K).argmax(-1)
for cls in range(3):
    vals, counts = torch.unique(codes[Y == cls], dim=0, return_counts=True)
    print(f"class {cls}: most common code {vals[counts.argmax()].tolist()} ({counts.max().item()} of {int((Y == cls).sum())})")
