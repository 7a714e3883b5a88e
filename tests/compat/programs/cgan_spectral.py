"""A conditional GAN with the tricks the GAN posts collect: label embeddings concatenated to the
noise (nn.Embedding + torch.cat), a discriminator with torch.nn.utils.spectral_norm (and the
parametrizations.spectral_norm form), LeakyReLU(0.2), hinge losses (F.relu(1 - d_real).mean()),
one-sided label smoothing with BCEWithLogits on a side head, R1-free but with a gradient penalty
from torch.autograd.grad(create_graph=True), TTUR Adam(betas=(0.0, 0.9)), and sampling per class
under torch.no_grad()."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm
from torch.nn.utils.parametrizations import spectral_norm as sn_param

torch.manual_seed(0)
n_classes, z_dim, x_dim = 3, 8, 2
means = torch.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])


def real_batch(n):
    y = torch.randint(0, n_classes, (n,))
    return means[y] + 0.2 * torch.randn(n, x_dim), y


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label_emb = nn.Embedding(n_classes, n_classes)
        self.model = nn.Sequential(nn.Linear(z_dim + n_classes, 32), nn.LeakyReLU(0.2, inplace=True),
                                   nn.Linear(32, 32), nn.BatchNorm1d(32, 0.8), nn.LeakyReLU(0.2, inplace=True),
                                   nn.Linear(32, x_dim))

    def forward(self, noise, labels):
        return self.model(torch.cat((self.label_emb(labels), noise), -1))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.label_embedding = nn.Embedding(n_classes, n_classes)
        self.body = nn.Sequential(spectral_norm(nn.Linear(x_dim + n_classes, 32)), nn.LeakyReLU(0.2, inplace=True),
                                  sn_param(nn.Linear(32, 32)), nn.LeakyReLU(0.2, inplace=True))
        self.adv = spectral_norm(nn.Linear(32, 1))
        self.aux = nn.Linear(32, 1)

    def forward(self, x, labels):
        h = self.body(torch.cat((x, self.label_embedding(labels)), -1))
        return self.adv(h).squeeze(1), self.aux(h).squeeze(1)


G, D = Generator(), Discriminator()
print("D params", [n for n, _ in D.named_parameters()])
print("D buffers", [n for n, _ in D.named_buffers()])
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3, betas=(0.0, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=4e-3, betas=(0.0, 0.9))
for step in range(40):
    real, y = real_batch(64)
    z = torch.randn(64, z_dim)
    fake = G(z, y)
    d_real, aux_real = D(real, y)
    d_fake, _ = D(fake.detach(), y)
    real.requires_grad_(True)
    d_gp, _ = D(real, y)
    grad, = torch.autograd.grad(d_gp.sum(), real, create_graph=True)
    gp = grad.pow(2).sum(1).mean()
    loss_d = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean() + 0.1 * gp + \
        F.binary_cross_entropy_with_logits(aux_real, torch.full_like(aux_real, 0.9))
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    d_gen, _ = D(G(torch.randn(64, z_dim), y), y)
    loss_g = -d_gen.mean()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    if step % 10 == 0:
        print(f"step {step} loss_d {loss_d.item():.5f} loss_g {loss_g.item():.5f} gp {gp.item():.5f}")
G.eval()
with torch.no_grad():
    for c in range(n_classes):
        s = G(torch.randn(200, z_dim), torch.full((200,), c, dtype=torch.long))
        print("class", c, "mean", [round(v, 4) for v in s.mean(0).tolist()], "target", means[c].tolist())
w = D.adv.weight
print("sigma", torch.linalg.matrix_norm(w, 2).item(), "u norm", D.adv.weight_u.norm().item())
print("param sigma", torch.linalg.svdvals(D.body[2].weight)[0].item())
