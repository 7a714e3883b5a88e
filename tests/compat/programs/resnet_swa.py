"""A small residual network trained the way image-classification tutorials do, then averaged:
BasicBlocks with BatchNorm2d and identity/1x1 shortcuts, AdaptiveAvgPool2d, SGD with Nesterov
momentum and CosineAnnealingWarmRestarts, then stochastic weight averaging (AveragedModel,
SWALR, update_bn) and an EMA copy of the weights (get_ema_multi_avg_fn)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(8)
n = 256
images = torch.randn(n, 3, 16, 16) * 0.5
labels = torch.randint(0, 4, (n,))
for i in range(n):  # a class-dependent stripe makes the labels learnable
    c = int(labels[i])
    images[i, :, 4 * c:4 * c + 4, :] += 1.0
loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True,
                    generator=torch.Generator().manual_seed(0))


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


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 4)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


def evaluate(m):
    m.eval()
    with torch.no_grad():
        logits = m(images)
        return F.cross_entropy(logits, labels).item(), (logits.argmax(1) == labels).float().mean().item()


model = ResNet()
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=2, T_mult=2)
swa_model = AveragedModel(model)
swa_scheduler = SWALR(optimizer, swa_lr=0.01, anneal_epochs=2, anneal_strategy="linear")
for epoch in range(6):
    model.train()
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        ema.update_parameters(model)
        if epoch < 3:
            scheduler.step(epoch + i / len(loader))
    if epoch >= 3:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    val_loss, acc = evaluate(model)
    # (accuracies are left out of the printout: an image at the decision boundary may flip with
    # float32 rounding, while the losses agree to ~1e-4)
    print(f"epoch {epoch} train {loss.item():.4f} eval {val_loss:.4f} lr {optimizer.param_groups[0]['lr']:.5f}")
update_bn(loader, swa_model)
swa_loss, swa_acc = evaluate(swa_model)
print(f"swa loss {swa_loss:.4f} averaged {int(swa_model.n_averaged)}")
update_bn(loader, ema)
print(f"ema loss {evaluate(ema)[0]:.4f} updates {int(ema.n_averaged)}")
assert swa_acc > 0.8 and acc > 0.8
