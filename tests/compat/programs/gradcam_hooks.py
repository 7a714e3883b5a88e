"""Model-introspection recipes: Grad-CAM with register_forward_hook / register_full_backward_hook
(activations and gradients stashed in dicts, weights = grads.mean((2, 3), keepdim=True),
F.relu((weights * acts).sum(1)), F.interpolate to the input size, min-max normalised), a feature
extractor via named_children and nn.Sequential(*list(model.children())[:-1]), forward pre-hooks
editing the input, hook handles removed, loading a "DataParallel" checkpoint by stripping the
"module." prefix with collections.OrderedDict, model.apply to count/initialise layers, and
named_modules/get_submodule/parameters counting per module type."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv1", nn.Conv2d(3, 8, 3, padding=1)), ("relu1", nn.ReLU()), ("pool1", nn.MaxPool2d(2)),
            ("conv2", nn.Conv2d(8, 16, 3, padding=1)), ("relu2", nn.ReLU())]))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 5)

    def forward(self, x):
        x = self.features(x)
        x = self.pool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


model = SmallCNN().eval()
activations, gradients = {}, {}


def fwd_hook(module, inp, out):
    activations["value"] = out.detach()


def bwd_hook(module, grad_input, grad_output):
    gradients["value"] = grad_output[0].detach()


h1 = model.features.conv2.register_forward_hook(fwd_hook)
h2 = model.features.conv2.register_full_backward_hook(bwd_hook)
img = torch.randn(2, 3, 16, 16, requires_grad=True)
logits = model(img)
cls = logits.argmax(1)
model.zero_grad()
logits.gather(1, cls.unsqueeze(1)).sum().backward()
acts, grads = activations["value"], gradients["value"]
weights = grads.mean(dim=(2, 3), keepdim=True)
cam = F.relu((weights * acts).sum(dim=1, keepdim=True))
cam = F.interpolate(cam, size=img.shape[2:], mode="bilinear", align_corners=False)
cam_min = cam.flatten(1).min(1)[0].view(-1, 1, 1, 1)
cam_max = cam.flatten(1).max(1)[0].view(-1, 1, 1, 1)
cam = (cam - cam_min) / (cam_max - cam_min + 1e-8)
print("cam", tuple(cam.shape), [round(v, 5) for v in cam[0, 0, 5, :6].tolist()], "class", cls.tolist())
print("input grad", round(img.grad.abs().sum().item(), 5))
h1.remove()
h2.remove()
print("hooks left", len(model.features.conv2._forward_hooks), len(model.features.conv2._backward_hooks))


def scale_input(module, args):
    return (args[0] * 2,)


h3 = model.features.register_forward_pre_hook(scale_input)
with torch.no_grad():
    doubled = model(img)
h3.remove()
with torch.no_grad():
    manual = model(img * 2)
print("pre-hook", torch.allclose(doubled, manual))

backbone = nn.Sequential(*list(model.children())[:-1])
with torch.no_grad():
    feats = backbone(img).flatten(1)
print("backbone", tuple(feats.shape), [name for name, _ in model.named_children()])
print("modules", [name for name, _ in model.named_modules()])
print("get_submodule", model.get_submodule("features.conv2"))

dp_state = OrderedDict(("module." + k, v) for k, v in model.state_dict().items())
new_state = OrderedDict()
for k, v in dp_state.items():
    name = k[7:] if k.startswith("module.") else k
    new_state[name] = v
fresh = SmallCNN()
result = fresh.load_state_dict(new_state)
print("loaded", result, all(torch.equal(a, b) for a, b in zip(fresh.parameters(), model.parameters())))

counts = {}


def count(m):
    counts[type(m).__name__] = counts.get(type(m).__name__, 0) + 1


model.apply(count)
print("counts", counts)
per_type = {}
for name, m in model.named_modules():
    n = sum(p.numel() for p in m.parameters(recurse=False))
    if n:
        per_type[name] = n
print("params per module", per_type)


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        if m.bias is not None:
            nn.init.constant_(m.bias, 0)
    elif isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0, 0.01)
        nn.init.constant_(m.bias, 0)


torch.manual_seed(3)
fresh.apply(init_weights)
print("init", round(fresh.features.conv1.weight.std().item(), 5), round(fresh.fc.weight.std().item(), 6))
print(fresh)
