"""CIFAR-style training tricks written by hand, as the "bag of tricks" posts do: random crop with
F.pad(reflect) + torch.randint offsets, horizontal flip with torch.flip on a torch.rand mask,
per-channel Normalize, mixup with lam from np.random.beta and torch.randperm partners, cutmix
with a box from np.sqrt(1 - lam) and in-place slice assignment, cross_entropy with soft targets
(probabilities) and label_smoothing, SequentialLR(LinearLR warmup, CosineAnnealingLR),
SGD(nesterov, weight_decay) on a ResNet-ish block with BatchNorm2d and a 1x1 shortcut."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR

torch.manual_seed(0)
np.random.seed(0)
N, C, H = 96, 3, 12
labels = torch.randint(0, 4, (N,))
images = torch.randn(N, C, H, H) * 0.5
for i in range(N):
    k = labels[i].item()
    images[i, k % 3, (k // 2) * 6:(k // 2) * 6 + 6, (k % 2) * 6:(k % 2) * 6 + 6] += 1.5
mean = images.mean(dim=(0, 2, 3), keepdim=True)
std = images.std(dim=(0, 2, 3), keepdim=True)


def augment(x):
    b = x.size(0)
    x = F.pad(x, (2, 2, 2, 2), mode="reflect")
    i = torch.randint(0, 5, (b,))
    j = torch.randint(0, 5, (b,))
    x = torch.stack([x[n, :, i[n]:i[n] + H, j[n]:j[n] + H] for n in range(b)])
    flip = torch.rand(b) < 0.5
    x[flip] = torch.flip(x[flip], dims=[3])
    return (x - mean) / std


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), BasicBlock(8, 16, 2),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 4))
epochs, steps = 6, N // 16
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
warmup = LinearLR(optimizer, start_factor=0.1, total_iters=steps)
cosine = CosineAnnealingLR(optimizer, T_max=(epochs - 1) * steps)
scheduler = SequentialLR(optimizer, schedulers=[warmup, cosine], milestones=[steps])


def rand_bbox(size, lam):
    W, Hh = size[2], size[3]
    cut_rat = np.sqrt(1. - lam)
    cut_w, cut_h = int(W * cut_rat), int(Hh * cut_rat)
    cx, cy = np.random.randint(W), np.random.randint(Hh)
    bbx1, bby1 = np.clip(cx - cut_w // 2, 0, W), np.clip(cy - cut_h // 2, 0, Hh)
    bbx2, bby2 = np.clip(cx + cut_w // 2, 0, W), np.clip(cy + cut_h // 2, 0, Hh)
    return bbx1, bby1, bbx2, bby2


for epoch in range(epochs):
    model.train()
    perm = torch.randperm(N)
    total = 0.0
    for s in range(steps):
        idx = perm[s * 16:(s + 1) * 16]
        x, y = augment(images[idx]), labels[idx]
        lam = float(np.random.beta(1.0, 1.0))
        index = torch.randperm(x.size(0))
        if s % 2 == 0:
            mixed = lam * x + (1 - lam) * x[index, :]
            soft = lam * F.one_hot(y, 4).float() + (1 - lam) * F.one_hot(y[index], 4).float()
            loss = F.cross_entropy(model(mixed), soft)
        else:
            bbx1, bby1, bbx2, bby2 = rand_bbox(x.size(), lam)
            x[:, :, bbx1:bbx2, bby1:bby2] = x[index, :, bbx1:bbx2, bby1:bby2]
            lam = 1 - ((bbx2 - bbx1) * (bby2 - bby1) / (x.size(-1) * x.size(-2)))
            out = model(x)
            loss = lam * F.cross_entropy(out, y, label_smoothing=0.1) + \
                (1 - lam) * F.cross_entropy(out, y[index], label_smoothing=0.1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item()
    model.eval()
    with torch.no_grad():
        acc = (model((images - mean) / std).argmax(1) == labels).float().mean().item()
    print(f"epoch {epoch} loss {total / steps:.5f} acc {acc:.4f} lr {scheduler.get_last_lr()[0]:.6f}")
assert acc > 0.5
