"""The "super-resolution with an efficient sub-pixel CNN" example: Conv2d stack ending in
nn.PixelShuffle(upscale_factor), init.orthogonal_(weight, init.calculate_gain('relu')), the
low-resolution input made with F.avg_pool2d / F.interpolate(mode='bicubic') of the target, PSNR
with 10 * log10(1 / mse), Adam, and PixelUnshuffle / F.pixel_shuffle round trips; plus
nn.Upsample-based and ConvTranspose2d(output_padding=1) alternatives."""
import math

import torch
import torch.nn as nn
import torch.nn.init as init
import torch.nn.functional as F

torch.manual_seed(2)


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


yy, xx = torch.meshgrid(torch.linspace(-1, 1, 24), torch.linspace(-1, 1, 24), indexing="ij")
targets = torch.stack([torch.sin(4 * xx + k) * torch.cos(3 * yy - k) for k in torch.linspace(0, 3, 12)]).unsqueeze(1)
inputs = F.avg_pool2d(targets, kernel_size=3)
print("shapes", tuple(targets.shape), tuple(inputs.shape))
bicubic = F.interpolate(inputs, scale_factor=3, mode="bicubic", align_corners=False)
print("bicubic psnr", round(10 * math.log10(4 / F.mse_loss(bicubic, targets).item()), 4))
model = Net(upscale_factor=3)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.003)
print("orthogonal", torch.allclose(model.conv4.weight.flatten(1) @ model.conv4.weight.flatten(1).T, torch.eye(9),
                                   atol=1e-5))
for epoch in range(1, 31):
    epoch_loss = 0
    for i in range(0, 12, 4):
        input, target = inputs[i:i + 4], targets[i:i + 4]
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
    if epoch % 6 == 0:
        with torch.no_grad():
            mse = criterion(model(inputs), targets)
            psnr = 10 * math.log10(4 / mse.item())
        print("===> Epoch {} Complete: Avg. Loss: {:.6f} PSNR {:.4f} dB".format(epoch, epoch_loss / 3, psnr))

assert psnr > 10 * math.log10(4 / F.mse_loss(F.interpolate(inputs, scale_factor=3, mode="nearest"), targets).item())
x = torch.arange(2 * 8 * 2 * 2, dtype=torch.float32).view(2, 8, 2, 2)
ps = F.pixel_shuffle(x, 2)
print("pixel_shuffle", tuple(ps.shape), ps[0, 0].tolist())
print("unshuffle round trip", torch.equal(nn.PixelUnshuffle(2)(ps), x), F.pixel_unshuffle(ps, 2).shape)
up = nn.Sequential(nn.Upsample(scale_factor=3, mode="nearest"), nn.Conv2d(1, 1, 3, padding=1))
ct = nn.ConvTranspose2d(1, 1, kernel_size=3, stride=3, padding=1, output_padding=2)
print("upsample", tuple(up(inputs[:1]).shape), "convtranspose", tuple(ct(inputs[:1]).shape))
print(ct)
print(model)
