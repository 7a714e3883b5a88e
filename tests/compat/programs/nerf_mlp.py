"""A NeRF-style MLP at toy size: the positional encoding [sin(2^k pi x), cos(2^k pi x)] built with
torch.cat over frequency bands (torch.linspace / 2.**torch.arange), a skip connection that
concatenates the input at a middle layer, density and colour heads (F.softplus, torch.sigmoid),
stratified ray sampling with torch.linspace + rand jitter, alpha compositing with torch.cumprod
(exclusive via torch.cat of ones), and Adam fitting a synthetic 1-D-per-ray scene."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, num_freqs=4, include_input=True, log_sampling=True):
        super().__init__()
        self.include_input = include_input
        if log_sampling:
            freq_bands = 2. ** torch.linspace(0., num_freqs - 1, steps=num_freqs)
        else:
            freq_bands = torch.linspace(2. ** 0., 2. ** (num_freqs - 1), steps=num_freqs)
        self.register_buffer("freq_bands", freq_bands, persistent=False)

    def forward(self, x):
        out = [x] if self.include_input else []
        for freq in self.freq_bands:
            for p_fn in [torch.sin, torch.cos]:
                out.append(p_fn(x * freq * torch.pi))
        return torch.cat(out, -1)

    def out_dim(self, d):
        return d * (int(self.include_input) + 2 * len(self.freq_bands))


class NeRF(nn.Module):
    def __init__(self, D=4, W=32, input_ch=3, skips=(2,)):
        super().__init__()
        self.embed = PositionalEncoding(4)
        in_ch = self.embed.out_dim(input_ch)
        self.skips = skips
        self.pts_linears = nn.ModuleList(
            [nn.Linear(in_ch, W)] + [nn.Linear(W, W) if i not in self.skips else nn.Linear(W + in_ch, W)
                                     for i in range(D - 1)])
        self.alpha_linear = nn.Linear(W, 1)
        self.rgb_linear = nn.Linear(W, 3)

    def forward(self, x):
        input_pts = self.embed(x)
        h = input_pts
        for i, l in enumerate(self.pts_linears):
            h = self.pts_linears[i](h)
            h = F.relu(h)
            if i in self.skips:
                h = torch.cat([input_pts, h], -1)
        return torch.sigmoid(self.rgb_linear(h)), F.softplus(self.alpha_linear(h))


def render_rays(model, rays_o, rays_d, near=0.0, far=1.0, N_samples=16, perturb=True):
    t_vals = torch.linspace(0., 1., steps=N_samples)
    z_vals = near * (1. - t_vals) + far * t_vals
    z_vals = z_vals.expand([rays_o.shape[0], N_samples])
    if perturb:
        mids = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
        upper = torch.cat([mids, z_vals[..., -1:]], -1)
        lower = torch.cat([z_vals[..., :1], mids], -1)
        t_rand = torch.rand(z_vals.shape)
        z_vals = lower + (upper - lower) * t_rand
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    rgb, sigma = model(pts)
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    alpha = 1. - torch.exp(-sigma[..., 0] * dists)
    weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth_map = torch.sum(weights * z_vals, -1)
    acc_map = torch.sum(weights, -1)
    return rgb_map, depth_map, acc_map


# Synthetic scene: the colour seen along a ray depends smoothly on its origin.
N_rays = 64
rays_o = torch.rand(N_rays, 3) * 2 - 1
rays_d = F.normalize(torch.randn(N_rays, 3), dim=-1)
target = torch.stack([torch.sin(3 * rays_o[:, 0]) * 0.5 + 0.5, rays_o[:, 1].abs(), torch.cos(rays_o[:, 2]) ** 2], -1)

model = NeRF()
print(model.embed(torch.tensor([[0.25, 0.5, 1.0]])).shape, model.embed.freq_bands.tolist(),
      "buffers in state_dict", [k for k in model.state_dict() if "freq" in k])
optimizer = torch.optim.Adam(params=model.parameters(), lr=5e-3, betas=(0.9, 0.999))
img2mse = lambda x, y: torch.mean((x - y) ** 2)
mse2psnr = lambda x: -10. * torch.log(x) / torch.log(torch.Tensor([10.]))
decay_rate, lrate_decay = 0.1, 50
psnrs = []
for i in range(60):
    rgb, depth, acc = render_rays(model, rays_o, rays_d)
    loss = img2mse(rgb, target)
    psnr = mse2psnr(loss)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    new_lrate = 5e-3 * (decay_rate ** ((i + 1) / lrate_decay))
    for param_group in optimizer.param_groups:
        param_group['lr'] = new_lrate
    psnrs.append(psnr.item())
    if i % 15 == 0:
        print(f"[TRAIN] Iter: {i} Loss: {loss.item():.6f}  PSNR: {psnr.item():.4f} depth {depth.mean().item():.4f}")
assert psnrs[-1] > psnrs[0]
with torch.no_grad():
    rgb, depth, acc = render_rays(model, rays_o[:3], rays_d[:3], perturb=False)
print("rgb", rgb.tolist())
print("acc", acc.tolist(), "depth", depth.tolist())
