"""The pruning tutorial on a LeNet: prune.random_unstructured on conv1.weight (weight_orig as the
parameter, weight_mask as the buffer, the forward pre-hook), prune.l1_unstructured on a bias,
iterative pruning with prune.ln_structured combined in a PruningContainer, state_dict keys,
prune.remove to make it permanent, pruning every Conv2d/Linear in a loop, global_unstructured
with L1Unstructured and the sparsity report, a custom BasePruningMethod, then fine-tuning a
pruned model and checking the pruned weights stay zero."""
import torch
from torch import nn
import torch.nn.utils.prune as prune
import torch.nn.functional as F

torch.manual_seed(42)


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


model = LeNet()
module = model.conv1
print(list(module.named_parameters())[1])
print(list(module.named_buffers()))

prune.random_unstructured(module, name="weight", amount=0.3)
print([n for n, _ in module.named_parameters()])
print([(n, tuple(b.shape)) for n, b in module.named_buffers()])
print(module.weight[0])
print(module._forward_pre_hooks.keys().__len__(), type(list(module._forward_pre_hooks.values())[0]).__name__)

prune.l1_unstructured(module, name="bias", amount=3)
print([n for n, _ in module.named_parameters()])
print([n for n, _ in module.named_buffers()])
print(module.bias)
print(module.bias_mask)

prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
print("channels kept", (module.weight.abs().sum(dim=(1, 2, 3)) > 0).tolist())
for hook in module._forward_pre_hooks.values():
    if hook._tensor_name == "weight":
        break
print([type(m).__name__ for m in hook])
print(len(hook), float((module.weight == 0).sum()) / module.weight.nelement())
print(model.state_dict().keys())

prune.remove(module, "weight")
print([n for n, _ in module.named_parameters()])
print([n for n, _ in module.named_buffers()])
print("conv1 zeros after remove", int((module.weight == 0).sum()), prune.is_pruned(model))

new_model = LeNet()
for name, module in new_model.named_modules():
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name="weight", amount=0.2)
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name="weight", amount=0.4)
print(dict(new_model.named_buffers()).keys())

model = LeNet()
parameters_to_prune = (
    (model.conv1, "weight"),
    (model.conv2, "weight"),
    (model.fc1, "weight"),
    (model.fc2, "weight"),
    (model.fc3, "weight"),
)
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
for name in ["conv1", "conv2", "fc1", "fc2", "fc3"]:
    w = getattr(model, name).weight
    print("Sparsity in {}.weight: {:.2f}%".format(name, 100. * float(torch.sum(w == 0)) / float(w.nelement())))
total_zero = sum(float(torch.sum(getattr(model, n).weight == 0)) for n in ["conv1", "conv2", "fc1", "fc2", "fc3"])
total = sum(float(getattr(model, n).weight.nelement()) for n in ["conv1", "conv2", "fc1", "fc2", "fc3"])
print("Global sparsity: {:.2f}%".format(100. * total_zero / total))


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor"""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model = LeNet()
foobar_unstructured(model.fc3, name="bias")
print(model.fc3.bias_mask)

# fine-tune a pruned model: the masked entries stay zero because the forward uses weight_orig * mask
model = LeNet()
for m in model.modules():
    if isinstance(m, (nn.Conv2d, nn.Linear)):
        prune.l1_unstructured(m, "weight", amount=0.5)
x = torch.randn(32, 1, 28, 28)
y = torch.randint(0, 10, (32,))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(15):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 4:
        print(f"step {step + 1} loss {loss.item():.5f}")
print("fc1 zeros stay", int((model.fc1.weight == 0).sum()), "of", model.fc1.weight.numel(),
      "orig nonzero where masked:", bool((model.fc1.weight_orig[model.fc1.weight_mask == 0] != 0).any()))
for m in model.modules():
    if isinstance(m, (nn.Conv2d, nn.Linear)):
        prune.remove(m, "weight")
print(sorted(model.state_dict().keys())[:4], prune.is_pruned(model))
