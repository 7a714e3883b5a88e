"""Transfer learning the way the fine-tuning tutorial does it, on a small CNN "pretrained" here:
children()/named_children() to cut the network, freezing with requires_grad_(False), replacing the
head (model.fc = nn.Linear(model.fc.in_features, n)), optimizers over only the trainable
parameters or with per-group learning rates, partial loading with model_dict.update(...) and
load_state_dict(strict=False) (its missing_keys/unexpected_keys), the size-mismatch error,
torch.save/torch.load of a checkpoint dict through io.BytesIO and a temporary file, buffers with
persistent=False, state_dict(keep_vars=True), copy.deepcopy and model.double()."""
import copy
import io
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import lr_scheduler

torch.manual_seed(0)


class SmallNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d((1, 1)))
        self.fc = nn.Linear(16, num_classes)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x):
        self.calls += 1
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def make_data(n, num_classes, seed):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, num_classes, (n,), generator=g)
    x = torch.randn(n, 1, 12, 12, generator=g) * 0.5
    for c in range(num_classes):  # each class lights up one quadrant
        r, col = divmod(c % 4, 2)
        x[y == c, :, r * 6:(r + 1) * 6, col * 6:(col + 1) * 6] += 1.0
    return x, y


def train(model, optimizer, x, y, epochs, scheduler=None, bs=32):
    model.train()
    for epoch in range(epochs):
        perm = torch.randperm(len(x))
        total = 0.0
        for i in range(0, len(x), bs):
            idx = perm[i:i + bs]
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        if scheduler is not None:
            scheduler.step()
    return total / len(x)


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    return (model(x).argmax(1) == y).float().mean().item()


# "pretraining" on a 4-class task
x4, y4 = make_data(256, 4, 1)
base = SmallNet(4)
opt = torch.optim.Adam(base.parameters(), lr=1e-2)
print("pretrain loss %.5f" % train(base, opt, x4, y4, 4))
print("pretrain acc %.4f" % accuracy(base, x4, y4))
print("calls buffer", base.calls.item(), "in state_dict:", "calls" in base.state_dict())
print([name for name, _ in base.named_children()], len(list(base.modules())))
print([k for k in base.state_dict()][:8])

# save the pretrained weights to a file and to memory
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "pretrained.pt")
torch.save({"epoch": 4, "model_state_dict": base.state_dict(), "optimizer_state_dict": opt.state_dict(),
            "classes": ["tl", "tr", "bl", "br"]}, path)
buf = io.BytesIO()
torch.save(base.state_dict(), buf)
buf.seek(0)
print("checkpoint keys", sorted(torch.load(path, weights_only=True).keys()))

# fine-tune on a 2-class task: new head, frozen features
x2, y2 = make_data(128, 2, 2)
model = SmallNet(4)
model.load_state_dict(torch.load(buf))
for param in model.parameters():
    param.requires_grad = False
num_ftrs = model.fc.in_features
model.fc = nn.Linear(num_ftrs, 2)
trainable = [n for n, p in model.named_parameters() if p.requires_grad]
print("trainable", trainable, sum(p.numel() for p in model.parameters() if p.requires_grad))
optimizer_conv = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.05, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=2, gamma=0.1)
frozen_before = model.features[0].weight.clone()
print("feature-extractor loss %.5f" % train(model, optimizer_conv, x2, y2, 4, exp_lr_scheduler))
print("features unchanged", torch.equal(frozen_before, model.features[0].weight), "lr",
      optimizer_conv.param_groups[0]["lr"])
print("feature-extractor acc %.4f" % accuracy(model, x2, y2))

# unfreeze everything with a smaller learning rate for the body
for p in model.parameters():
    p.requires_grad_(True)
optimizer_ft = torch.optim.SGD([{"params": model.features.parameters(), "lr": 1e-3},
                                {"params": model.fc.parameters()}], lr=1e-2, momentum=0.9)
print("groups", [(len(g["params"]), g["lr"], g["momentum"]) for g in optimizer_ft.param_groups])
print("fine-tune loss %.5f" % train(model, optimizer_ft, x2, y2, 2))
print("fine-tune acc %.4f" % accuracy(model, x2, y2))

# a headless feature extractor from children()
body = nn.Sequential(*list(base.children())[:-1])
with torch.no_grad():
    feats = body(x2[:5]).flatten(1)
print("features", tuple(feats.shape), round(feats.sum().item(), 4))

# partial loading: keep only the keys that exist with the same shape
pretrained_dict = torch.load(path)["model_state_dict"]
new_model = SmallNet(2)
model_dict = new_model.state_dict()
pretrained_dict = {k: v for k, v in pretrained_dict.items() if k in model_dict and v.shape == model_dict[k].shape}
print("kept", len(pretrained_dict), "of", len(model_dict))
model_dict.update(pretrained_dict)
new_model.load_state_dict(model_dict)
print("conv copied", torch.equal(new_model.features[0].weight, base.features[0].weight))

try:
    SmallNet(2).load_state_dict(base.state_dict())
except RuntimeError as e:
    msg = str(e)
    print("size mismatch reported:", "size mismatch for fc.weight" in msg, "size mismatch for fc.bias" in msg)

sd = base.state_dict()
sd["extra.weight"] = torch.zeros(1)
del sd["fc.bias"]
result = SmallNet(4).load_state_dict(sd, strict=False)
print(result.missing_keys, result.unexpected_keys)
print(result)
print(SmallNet(4).load_state_dict(base.state_dict()))

# keep_vars, deepcopy, double
kv = base.state_dict(keep_vars=True)
print("keep_vars", type(kv["fc.weight"]).__name__, kv["fc.weight"].requires_grad,
      base.state_dict()["fc.weight"].requires_grad)
clone = copy.deepcopy(base)
clone.fc.weight.data.fill_(0)
print("deepcopy independent", base.fc.weight.abs().sum().item() > 0, clone.fc.weight.abs().sum().item())
d = copy.deepcopy(base).double()
print("double", d.fc.weight.dtype, d.features[1].running_mean.dtype, d.features[1].num_batches_tracked.dtype)
with torch.no_grad():
    print("double agrees", torch.allclose(d.eval()(x4[:4].double()).float(), base.eval()(x4[:4]), atol=1e-5))
print("bn running stats", [round(v, 5) for v in base.features[1].running_mean[:4].tolist()],
      base.features[1].num_batches_tracked.item())
