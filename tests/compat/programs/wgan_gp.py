"""WGAN-GP on a 2-D Gaussian mixture, as the improved-WGAN reference code writes it: a critic with
LeakyReLU (and LayerNorm, no BatchNorm), the gradient penalty from torch.autograd.grad of the
critic's output at random interpolates (create_graph=True, retain_graph=True, only_inputs=True,
grad_outputs=torch.ones(...)), gradients.norm(2, dim=1), Adam(betas=(0.5, 0.9)) and n_critic
steps; then an R1 penalty on real data and a DRAGAN-style penalty with .view(size, -1)."""
import torch
import torch.autograd as autograd
import torch.nn as nn

torch.manual_seed(0)


def real_batch(n):
    centers = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    idx = torch.randint(0, 4, (n,))
    return centers[idx] + 0.1 * torch.randn(n, 2)


G = nn.Sequential(nn.Linear(4, 64), nn.ReLU(True), nn.Linear(64, 64), nn.ReLU(True), nn.Linear(64, 2))
D = nn.Sequential(nn.Linear(2, 64), nn.LayerNorm(64), nn.LeakyReLU(0.2), nn.Linear(64, 64), nn.LeakyReLU(0.2),
                  nn.Linear(64, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.5, 0.9))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.9))
LAMBDA = 10.0


def gradient_penalty(D, real, fake):
    alpha = torch.rand(real.size(0), 1)
    alpha = alpha.expand(real.size())
    interpolates = alpha * real + (1 - alpha) * fake
    interpolates = autograd.Variable(interpolates, requires_grad=True)
    disc = D(interpolates)
    gradients = autograd.grad(outputs=disc, inputs=interpolates, grad_outputs=torch.ones(disc.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA


one = torch.tensor(1.0)
mone = one * -1
for it in range(25):
    for p in D.parameters():
        p.requires_grad = True
    for _ in range(5):
        real = real_batch(64)
        D.zero_grad()
        d_real = D(real).mean()
        d_real.backward(mone)
        noise = torch.randn(64, 4)
        with torch.no_grad():
            fake = G(noise)
        d_fake = D(fake).mean()
        d_fake.backward(one)
        gp = gradient_penalty(D, real, fake)
        gp.backward()
        opt_d.step()
        w_dist = d_real - d_fake
    for p in D.parameters():
        p.requires_grad = False
    G.zero_grad()
    g_loss = -D(G(torch.randn(64, 4))).mean()
    g_loss.backward()
    opt_g.step()
    if it % 5 == 0 or it == 24:
        print(f"it {it} W {w_dist.item():.6f} gp {gp.item():.6f} g_loss {g_loss.item():.6f}")
print("critic frozen", all(not p.requires_grad for p in D.parameters()), "G has grads",
      all(p.grad is not None for p in G.parameters()))

# R1 penalty: gradient of the critic on real data, squared norm, all in one graph.
for p in D.parameters():
    p.requires_grad_(True)
real = real_batch(32).requires_grad_()
out = D(real)
(grad_real,) = torch.autograd.grad(outputs=out.sum(), inputs=real, create_graph=True)
r1 = grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()
D.zero_grad()
(out.mean() + 5.0 * r1).backward()
print(f"r1 {r1.item():.8f} |dW0| {D[0].weight.grad.norm().item():.8f} |dLN| {D[1].weight.grad.norm().item():.8f}")

# DRAGAN-style: perturbed real data, per-sample gradient norms with view(size, -1).
x = real_batch(16)
x_hat = (x + 0.5 * x.std() * torch.rand(x.size())).detach().requires_grad_(True)
pred = D(x_hat)
g = torch.autograd.grad(pred, x_hat, grad_outputs=torch.ones_like(pred), create_graph=True)[0]
gnorm = g.view(g.size(0), -1).norm(2, dim=1)
pen = ((gnorm - 1) ** 2).mean()
D.zero_grad()
pen.backward()
print("grad norms", [round(v, 6) for v in gnorm[:4].tolist()], f"penalty {pen.item():.8f}")
print("penalty grad", f"{sum(p.grad.abs().sum().item() for p in D.parameters() if p.grad is not None):.6f}",
      "no grad for the last bias", D[5].bias.grad is None, g.requires_grad, x_hat.grad is None)
