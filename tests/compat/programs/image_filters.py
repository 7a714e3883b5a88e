"""Classic image processing with tensor ops, as the "computer vision basics in PyTorch" posts and
course labs do it on a synthetic image: RGB -> grayscale by a weighted sum, Gaussian blur and
Sobel edges by F.conv2d with hand-built kernels (groups= for per-channel filters, padding='same',
nn.Conv2d(padding_mode='reflect'/'circular')), F.pad in every mode, resizing by F.interpolate
(nearest, nearest-exact, bilinear with and without align_corners and antialias, bicubic, area)
and nn.Upsample, histogram equalisation with histc + cumsum, morphology by max_pool2d (dilation,
erosion, opening), a median filter from F.unfold, non-overlapping patches and their fold back,
pixel_shuffle / pixel_unshuffle, a rotation by affine_grid + grid_sample (padding modes),
and a learned 3x3 filter recovering the Sobel kernel by gradient descent."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
H = W = 16
yy, xx = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(W, dtype=torch.float32), indexing="ij")
r = ((xx - 7.5) ** 2 + (yy - 7.5) ** 2).sqrt()
img = torch.stack([(r < 5).float(), (xx / (W - 1)), ((xx + yy) % 4 < 2).float() * 0.5])
img = (img + 0.05 * torch.randn_like(img)).clamp(0, 1).unsqueeze(0)  # (1, 3, H, W)
print("image", tuple(img.shape), f"{img.mean().item():.5f}", f"{img.std().item():.5f}")

gray = (img * torch.tensor([0.299, 0.587, 0.114]).view(1, 3, 1, 1)).sum(1, keepdim=True)
print("gray", tuple(gray.shape), f"{gray.sum().item():.4f}")


def gaussian_kernel(size=5, sigma=1.0):
    ax = torch.arange(size, dtype=torch.float32) - (size - 1) / 2
    g = torch.exp(-ax ** 2 / (2 * sigma ** 2))
    k = torch.outer(g, g)
    return k / k.sum()


k = gaussian_kernel()
print("gaussian kernel sum", k.sum().item(), k[2, 2].item())
blur = F.conv2d(img, k.expand(3, 1, 5, 5), padding=2, groups=3)
blur_same = F.conv2d(img, k.expand(3, 1, 5, 5), padding="same", groups=3)
print("blur", tuple(blur.shape), torch.allclose(blur, blur_same), f"{blur.std().item():.5f}")
sobel_x = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]])
sobel = torch.stack([sobel_x, sobel_x.T]).unsqueeze(1)  # (2, 1, 3, 3)
edges = F.conv2d(F.pad(gray, (1, 1, 1, 1), mode="replicate"), sobel)
mag = edges.pow(2).sum(1).sqrt()
print("sobel", tuple(edges.shape), f"max {mag.max().item():.5f}", f"mean {mag.mean().item():.5f}")
angle = torch.atan2(edges[:, 1], edges[:, 0])
print("angle histogram", torch.histc(angle, bins=8, min=-math.pi, max=math.pi).tolist())
print(mag[0, 6:10, 2:6])

print("== padding ==")
small = torch.arange(9.0).view(1, 1, 3, 3)
for mode in ["constant", "reflect", "replicate", "circular"]:
    padded = F.pad(small, (2, 1, 1, 2), mode=mode) if mode != "constant" else F.pad(small, (2, 1, 1, 2), value=-1.0)
    print(mode, tuple(padded.shape))
    print(padded[0, 0])
print(F.pad(torch.arange(4.0).view(1, 4), (1, 2), mode="reflect"), F.pad(torch.ones(2, 2), (1, 1)))
for mode in ["zeros", "reflect", "replicate", "circular"]:
    conv = nn.Conv2d(1, 1, 3, padding=1, padding_mode=mode, bias=False)
    with torch.no_grad():
        conv.weight.fill_(1 / 9)
    print(mode, conv(small)[0, 0, 0].tolist(), conv)

print("== resizing ==")
for mode, kw in [("nearest", {}), ("nearest-exact", {}), ("bilinear", {"align_corners": False}),
                 ("bilinear", {"align_corners": True}), ("bicubic", {"align_corners": False}), ("area", {})]:
    up = F.interpolate(small, size=(5, 4), mode=mode, **kw)
    print(mode, kw, [[round(v, 5) for v in row] for row in up[0, 0, :2].tolist()])
down = F.interpolate(img, scale_factor=0.5, mode="bilinear", align_corners=False)
down_aa = F.interpolate(img, scale_factor=0.5, mode="bilinear", align_corners=False, antialias=True)
down_area = F.interpolate(img, size=(8, 8), mode="area")
print("downsample", tuple(down.shape), f"{down.std().item():.5f} aa {down_aa.std().item():.5f} "
      f"area {down_area.std().item():.5f}", torch.allclose(down_area, F.avg_pool2d(img, 2)))
print(F.interpolate(small, scale_factor=1.5, mode="bicubic", antialias=True, align_corners=False)[0, 0, 0])
print(nn.Upsample(scale_factor=2, mode="nearest")(small).shape, nn.Upsample(size=(4, 6), mode="bilinear"))
print(F.interpolate(torch.arange(4.0).view(1, 1, 4), scale_factor=2, mode="linear", align_corners=True))

print("== histogram equalisation ==")
levels = (gray.clamp(0, 1) * 255).round()
hist = torch.histc(levels, bins=256, min=0, max=255)
cdf = hist.cumsum(0)
cdf_min = cdf[cdf > 0].min()
lut = ((cdf - cdf_min) / (cdf[-1] - cdf_min) * 255).round().clamp(0, 255)
equalized = lut[levels.long()]
print("hist nonzero bins", int((hist > 0).sum()), "lut[128]", lut[128].item(),
      f"before std {levels.std().item():.4f} after {equalized.std().item():.4f}")
print("bincount equal", torch.equal(torch.bincount(levels.long().flatten(), minlength=256).float(), hist))

print("== morphology and median ==")
mask = (gray > 0.5).float()
dilate = F.max_pool2d(mask, 3, stride=1, padding=1)
erode = -F.max_pool2d(-mask, 3, stride=1, padding=1)
opening = F.max_pool2d(-F.max_pool2d(-mask, 3, 1, 1), 3, 1, 1)
print("mask", int(mask.sum()), "dilate", int(dilate.sum()), "erode", int(erode.sum()), "open", int(opening.sum()))
noisy = gray.clone()
flip = torch.rand_like(noisy) < 0.1
noisy[flip] = 1.0 - noisy[flip]
patches = F.unfold(F.pad(noisy, (1, 1, 1, 1), mode="reflect"), kernel_size=3)  # (1, 9, H*W)
median = patches.median(dim=1).values.view(1, 1, H, W)
print("unfold", tuple(patches.shape), f"noisy err {(noisy - gray).abs().mean().item():.5f}",
      f"median err {(median - gray).abs().mean().item():.5f}")
tiles = F.unfold(img, kernel_size=4, stride=4)  # (1, 3*16, 16)
print("tiles", tuple(tiles.shape), torch.equal(F.fold(tiles, (H, W), kernel_size=4, stride=4), img))
over = F.unfold(img, kernel_size=4, stride=2)
counts = F.fold(torch.ones_like(over), (H, W), kernel_size=4, stride=2)
recon = F.fold(over, (H, W), kernel_size=4, stride=2) / counts
print("overlapping fold", tuple(over.shape), counts[0, 0, :3, :3].tolist(), torch.allclose(recon, img))
ps = F.pixel_unshuffle(img, 2)
print("pixel_unshuffle", tuple(ps.shape), torch.equal(F.pixel_shuffle(ps, 2), img))

print("== rotation ==")
theta_deg = 30.0
t = math.radians(theta_deg)
theta = torch.tensor([[math.cos(t), -math.sin(t), 0.0], [math.sin(t), math.cos(t), 0.0]]).unsqueeze(0)
grid = F.affine_grid(theta, img.shape, align_corners=False)
print("grid", tuple(grid.shape), grid[0, 0, 0].tolist())
for pm in ["zeros", "border", "reflection"]:
    rot = F.grid_sample(img, grid, mode="bilinear", padding_mode=pm, align_corners=False)
    print(pm, f"{rot.sum().item():.4f}", f"{rot[0, 0, 8, 8].item():.5f}")
rot_nn = F.grid_sample(img, grid, mode="nearest", align_corners=False)
print("nearest", f"{rot_nn.sum().item():.4f}", torch.isin(rot_nn, torch.cat([img.flatten(), torch.zeros(1)])).all().item())
back = F.grid_sample(F.grid_sample(img, grid, align_corners=True, padding_mode="border"),
                     F.affine_grid(torch.linalg.inv(torch.cat([theta, torch.tensor([[[0.0, 0.0, 1.0]]])], 1))[:, :2],
                                   img.shape, align_corners=True), align_corners=True, padding_mode="border")
print("rotate back centre error", f"{(back - img)[..., 5:11, 5:11].abs().mean().item():.5f}")

print("== learn a filter ==")
torch.manual_seed(1)
target = F.conv2d(gray, sobel_x.view(1, 1, 3, 3), padding=1)
learned = nn.Conv2d(1, 1, 3, padding=1, bias=False)
opt = torch.optim.SGD(learned.parameters(), lr=0.5, momentum=0.9)
for step in range(60):
    opt.zero_grad()
    loss = F.mse_loss(learned(gray), target)
    loss.backward()
    opt.step()
    if step % 20 == 0 or step == 59:
        print(f"step {step} loss {loss.item():.6f}")
print(learned.weight.detach().view(3, 3))
