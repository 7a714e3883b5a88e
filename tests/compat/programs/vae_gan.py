"""Generative models from the tutorials: a variational autoencoder (reparameterisation with
torch.randn_like, BCE reconstruction plus the closed-form KL term, sampling from the prior) and
a GAN on a 2-d ring of Gaussians (two Adam optimisers, detach() for the discriminator step,
BCEWithLogitsLoss with ones_like/zeros_like targets, LeakyReLU)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)

# ---- VAE on binary 8x8 "glyphs": random strokes of a few templates ----
templates = (torch.rand(4, 64) > 0.6).float()
data = templates[torch.randint(0, 4, (256,))]
flip = (torch.rand(256, 64) < 0.05).float()
data = (data + flip) % 2


class VAE(nn.Module):
    def __init__(self, latent=2):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc_mu = nn.Linear(32, latent)
        self.fc_logvar = nn.Linear(32, latent)
        self.fc3 = nn.Linear(latent, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


vae = VAE()
opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
history = []
for epoch in range(8):
    vae.train()
    train_loss = 0
    for i in range(0, 256, 32):
        x = data[i:i + 32]
        opt.zero_grad()
        recon, mu, logvar = vae(x)
        loss = loss_function(recon, x, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        opt.step()
    history.append(train_loss / 256)
    if epoch % 2 == 1:
        print(f"vae epoch {epoch} average loss {history[-1]:.4f}")
assert history[-1] < history[0]
vae.eval()
with torch.no_grad():
    sample = vae.decode(torch.randn(4, 2))
    print("prior samples mean", [round(v, 4) for v in sample.mean(1).tolist()])
    mu, logvar = vae.encode(data[:3])
    print("posterior std", [round(v, 4) for v in logvar.mul(0.5).exp().flatten().tolist()])

# ---- GAN on a ring of 8 Gaussians ----
def real_batch(n):
    k = torch.randint(0, 8, (n,)).float()
    angle = 2 * math.pi * k / 8
    centers = torch.stack([torch.cos(angle), torch.sin(angle)], dim=1) * 2
    return centers + 0.05 * torch.randn(n, 2)


G = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2), nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()
for step in range(60):
    real = real_batch(64)
    fake = G(torch.randn(64, 4))
    d_real, d_fake = D(real), D(fake.detach())
    loss_d = criterion(d_real, torch.ones_like(d_real)) + criterion(d_fake, torch.zeros_like(d_fake))
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    out = D(fake)
    loss_g = criterion(out, torch.ones_like(out))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if step % 20 == 0 or step == 59:
        print(f"gan step {step} loss_d {loss_d.item():.5f} loss_g {loss_g.item():.5f}")
with torch.no_grad():
    pts = G(torch.randn(256, 4))
    radius = pts.norm(dim=1)
print(f"generated radius mean {radius.mean().item():.4f} std {radius.std().item():.4f}")
assert torch.isfinite(pts).all()
