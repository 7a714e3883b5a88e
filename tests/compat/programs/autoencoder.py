"""Autoencoders as the tutorials write them: a fully connected one (nn.Sequential of Linear,
ReLU and Sigmoid, MSELoss, Adam) and a convolutional one (Conv2d with stride, ConvTranspose2d,
BatchNorm2d, nn.Unflatten), trained on synthetic 16x16 "digits" that live on a low-dimensional
manifold; prints reconstruction losses and the size of the codes."""
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(3)
# Images made of a few random smooth blobs: mixtures of 6 fixed basis images.
basis = torch.sigmoid(torch.randn(6, 1, 4, 4) * 2)
basis = F.interpolate(basis, size=(16, 16), mode="bilinear", align_corners=False)
coeffs = torch.rand(512, 6)
images = (coeffs @ basis.view(6, -1)).view(-1, 1, 16, 16) / 3
images = images.clamp(0, 1)
print(f"data mean {images.mean():.5f} std {images.std():.5f}")


class DenseAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(256, 64), nn.ReLU(True), nn.Linear(64, 8))
        self.decoder = nn.Sequential(nn.Linear(8, 64), nn.ReLU(True), nn.Linear(64, 256), nn.Sigmoid(),
                                     nn.Unflatten(1, (1, 16, 16)))

    def forward(self, x):
        return self.decoder(self.encoder(x))


class ConvAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1),
            nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1), nn.Sigmoid())

    def forward(self, x):
        z = self.encoder(x)
        return self.decoder(z), z


def fit(model, epochs=6):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-5)
    criterion = nn.MSELoss()
    history = []
    for epoch in range(epochs):
        perm = torch.randperm(len(images))
        total = 0.0
        for i in range(0, len(images), 64):
            batch = images[perm[i:i + 64]]
            out = model(batch)
            recon = out[0] if isinstance(out, tuple) else out
            loss = criterion(recon, batch)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * batch.size(0)
        history.append(total / len(images))
        print(f"{type(model).__name__} epoch {epoch} loss {history[-1]:.6f}")
    return history


for model in (DenseAE(), ConvAE()):
    h = fit(model)
    assert h[-1] < h[0] / 2, h
    model.eval()
    with torch.no_grad():
        out = model(images[:4])
    if isinstance(out, tuple):
        print("code shape", list(out[1].shape), f"code mean {out[1].mean().item():.5f}")
        out = out[0]
    print("recon error per image", [round(v, 5) for v in ((out - images[:4]) ** 2).mean(dim=(1, 2, 3)).tolist()])
