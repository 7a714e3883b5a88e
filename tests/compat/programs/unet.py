"""A small U-Net as the segmentation blog posts write it: DoubleConv blocks (Conv2d + BatchNorm2d
+ ReLU(inplace=True)), MaxPool2d down, ConvTranspose2d or Upsample(bilinear, align_corners=True)
up, F.pad to fix odd sizes, torch.cat skips, BCEWithLogitsLoss + a dice loss, F.interpolate with
nearest/bilinear/align_corners on masks, and a sigmoid-threshold IoU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)


class DoubleConv(nn.Module):
    """(convolution => [BN] => ReLU) * 2"""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True)
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    def __init__(self, in_channels, out_channels, bilinear=True):
        super().__init__()
        if bilinear:
            self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
            self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        else:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
            self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class OutConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(OutConv, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes, bilinear=False):
        super(UNet, self).__init__()
        self.n_channels, self.n_classes, self.bilinear = n_channels, n_classes, bilinear
        self.inc = DoubleConv(n_channels, 8)
        self.down1 = Down(8, 16)
        factor = 2 if bilinear else 1
        self.down2 = Down(16, 32 // factor)
        self.up1 = Up(32, 16 // factor, bilinear)
        self.up2 = Up(16, 8, bilinear)
        self.outc = OutConv(8, n_classes)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def dice_coeff(input, target, reduce_batch_first=False, epsilon=1e-6):
    sum_dim = (-1, -2) if input.dim() == 2 or not reduce_batch_first else (-1, -2, -3)
    inter = 2 * (input * target).sum(dim=sum_dim)
    sets_sum = input.sum(dim=sum_dim) + target.sum(dim=sum_dim)
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def dice_loss(input, target):
    return 1 - dice_coeff(input, target, reduce_batch_first=True)


# Synthetic: images with a bright disc; the mask is the disc.
N, H = 24, 18
yy, xx = torch.meshgrid(torch.arange(H, dtype=torch.float32), torch.arange(H, dtype=torch.float32), indexing="ij")
centres = torch.rand(N, 2) * 10 + 4
radii = torch.rand(N) * 3 + 2
masks = (((yy[None] - centres[:, 0, None, None]) ** 2 + (xx[None] - centres[:, 1, None, None]) ** 2)
         < radii[:, None, None] ** 2).float().unsqueeze(1)
images = masks * 0.8 + 0.3 * torch.randn(N, 1, H, H)

for bilinear in (False, True):
    torch.manual_seed(5)
    model = UNet(n_channels=1, n_classes=1, bilinear=bilinear)
    print("bilinear", bilinear, "params", sum(p.numel() for p in model.parameters()),
          "buffers", len(list(model.buffers())))
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, weight_decay=1e-8, momentum=0.9, foreach=True)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'max', patience=2)
    criterion = nn.BCEWithLogitsLoss()
    losses = []
    for epoch in range(4):
        model.train()
        epoch_loss = 0
        for i in range(0, N, 8):
            x, m = images[i:i + 8], masks[i:i + 8]
            pred = model(x)
            loss = criterion(pred, m)
            loss += dice_loss(F.sigmoid(pred.squeeze(1)), m.squeeze(1).float())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            epoch_loss += loss.item()
        model.eval()
        with torch.no_grad():
            p = (torch.sigmoid(model(images)) > 0.5).float()
            inter = (p * masks).sum()
            union = ((p + masks) > 0).float().sum()
            score = dice_coeff(p, masks, reduce_batch_first=False).item()
        scheduler.step(score)
        losses.append(epoch_loss)
        print(f"epoch {epoch} loss {epoch_loss:.5f} iou {(inter / union).item():.4f} dice {score:.4f}")
    assert losses[-1] < losses[0]
    print("bn running_mean", model.inc.double_conv[1].running_mean[:3].tolist(),
          "num_batches_tracked", model.inc.double_conv[1].num_batches_tracked.item())

x = torch.arange(16.).view(1, 1, 4, 4)
print(F.interpolate(x, scale_factor=2, mode="nearest")[0, 0, :2])
print(F.interpolate(x, size=(6, 6), mode="bilinear", align_corners=False)[0, 0, 1])
print(F.interpolate(x, size=(6, 6), mode="bilinear", align_corners=True)[0, 0, 1])
print(F.interpolate(x, scale_factor=0.5, mode="bilinear")[0, 0])
print(F.interpolate(x, size=(3, 5), mode="bicubic", align_corners=False)[0, 0, 0])
print(F.interpolate(masks[:1], size=(9, 9), mode="nearest-exact").sum().item())
print(F.interpolate(torch.arange(5.).view(1, 1, 5), size=8, mode="linear")[0, 0])
print(nn.Upsample(scale_factor=(2, 3), mode="nearest")(x).shape)
