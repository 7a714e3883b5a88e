"""A denoising diffusion (DDPM) toy as the "diffusion from scratch" posts write it: a linear beta
schedule with torch.linspace, alphas_cumprod via torch.cumprod, F.pad(..., (1, 0), value=1.0) for
the previous cumprod, an extract() helper with gather + reshape(batch, *((1,) * (len(x_shape) - 1))),
sinusoidal time embeddings (math.log(10000) / (half_dim - 1), torch.exp, torch.cat(sin, cos)),
an MLP denoiser with GroupNorm and SiLU, q_sample with torch.randn_like, a simple MSE noise loss
(and F.smooth_l1_loss), and the reverse sampling loop under @torch.no_grad()."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
timesteps = 50


def linear_beta_schedule(timesteps):
    beta_start = 0.0001
    beta_end = 0.02
    return torch.linspace(beta_start, beta_end, timesteps)


def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps)
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * torch.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0.0001, 0.9999)


betas = linear_beta_schedule(timesteps=timesteps)
alphas = 1. - betas
alphas_cumprod = torch.cumprod(alphas, axis=0)
alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
sqrt_recip_alphas = torch.sqrt(1.0 / alphas)
sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
sqrt_one_minus_alphas_cumprod = torch.sqrt(1. - alphas_cumprod)
posterior_variance = betas * (1. - alphas_cumprod_prev) / (1. - alphas_cumprod)
print("schedule", alphas_cumprod[[0, 10, -1]].tolist(), posterior_variance[:3].tolist())
print("cosine", cosine_beta_schedule(10).tolist())


def extract(a, t, x_shape):
    batch_size = t.shape[0]
    out = a.gather(-1, t.cpu())
    return out.reshape(batch_size, *((1,) * (len(x_shape) - 1))).to(t.device)


class SinusoidalPositionEmbeddings(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, time):
        device = time.device
        half_dim = self.dim // 2
        embeddings = math.log(10000) / (half_dim - 1)
        embeddings = torch.exp(torch.arange(half_dim, device=device) * -embeddings)
        embeddings = time[:, None] * embeddings[None, :]
        embeddings = torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)
        return embeddings


class Denoiser(nn.Module):
    def __init__(self, dim=2, hidden=64, tdim=16):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPositionEmbeddings(tdim), nn.Linear(tdim, hidden), nn.GELU(),
                                      nn.Linear(hidden, hidden))
        self.inp = nn.Linear(dim, hidden)
        self.blocks = nn.ModuleList([nn.Sequential(nn.GroupNorm(4, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
                                     for _ in range(2)])
        self.out = nn.Linear(hidden, dim)

    def forward(self, x, t):
        h = self.inp(x) + self.time_mlp(t)
        for block in self.blocks:
            h = h + block(h)
        return self.out(h)


def q_sample(x_start, t, noise=None):
    if noise is None:
        noise = torch.randn_like(x_start)
    sqrt_alphas_cumprod_t = extract(sqrt_alphas_cumprod, t, x_start.shape)
    sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape)
    return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise


def p_losses(denoise_model, x_start, t, noise=None, loss_type="l2"):
    if noise is None:
        noise = torch.randn_like(x_start)
    x_noisy = q_sample(x_start=x_start, t=t, noise=noise)
    predicted_noise = denoise_model(x_noisy, t)
    if loss_type == 'l1':
        loss = F.l1_loss(noise, predicted_noise)
    elif loss_type == 'l2':
        loss = F.mse_loss(noise, predicted_noise)
    elif loss_type == "huber":
        loss = F.smooth_l1_loss(noise, predicted_noise)
    else:
        raise NotImplementedError()
    return loss


@torch.no_grad()
def p_sample(model, x, t, t_index):
    betas_t = extract(betas, t, x.shape)
    sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x.shape)
    sqrt_recip_alphas_t = extract(sqrt_recip_alphas, t, x.shape)
    model_mean = sqrt_recip_alphas_t * (x - betas_t * model(x, t) / sqrt_one_minus_alphas_cumprod_t)
    if t_index == 0:
        return model_mean
    else:
        posterior_variance_t = extract(posterior_variance, t, x.shape)
        noise = torch.randn_like(x)
        return model_mean + torch.sqrt(posterior_variance_t) * noise


@torch.no_grad()
def p_sample_loop(model, shape):
    b = shape[0]
    img = torch.randn(shape)
    imgs = []
    for i in reversed(range(0, timesteps)):
        img = p_sample(model, img, torch.full((b,), i, dtype=torch.long), i)
        imgs.append(img.cpu().numpy())
    return imgs


# Data: a ring of radius 2.
theta = torch.rand(512) * 2 * math.pi
data = torch.stack([2 * torch.cos(theta), 2 * torch.sin(theta)], 1) + 0.05 * torch.randn(512, 2)
model = Denoiser()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
losses = []
for step in range(150):
    idx = torch.randint(0, 512, (64,))
    batch = data[idx]
    t = torch.randint(0, timesteps, (64,), device="cpu").long()
    loss = p_losses(model, batch, t, loss_type="huber" if step % 2 else "l2")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if step % 30 == 0:
        print(f"step {step} loss {loss.item():.5f}")
assert sum(losses[-20:]) < sum(losses[:20])
samples = p_sample_loop(model, shape=(128, 2))
final = torch.from_numpy(samples[-1])
radius = final.norm(dim=1)
print("samples", len(samples), samples[-1].shape, "mean radius", round(radius.mean().item(), 4),
      "std", round(radius.std().item(), 4))
print("t-embedding", SinusoidalPositionEmbeddings(8)(torch.tensor([0., 1., 49.])).tolist()[2])
