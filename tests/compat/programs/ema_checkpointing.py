"""Training-loop add-ons from the "tricks" posts: an EMA of the weights kept by hand with
torch.no_grad() and ema_p.mul_(decay).add_(p, alpha=1 - decay) (and lerp_), the same with
torch.optim.swa_utils.AveragedModel(multi_avg_fn=get_ema_multi_avg_fn(0.99)) and
update_bn, torch._foreach_mul_/_foreach_add_, parameters_to_vector/vector_to_parameters,
activation checkpointing with torch.utils.checkpoint.checkpoint(use_reentrant=False) and
checkpoint_sequential, gradient clipping by value, weight-norm of grads via torch.norm(
torch.stack([torch.norm(p.grad.detach(), 2) for p in ...]), 2), and freezing/unfreezing with
requires_grad_ and param_groups added later with optimizer.add_param_group."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

torch.manual_seed(0)
X = torch.randn(256, 12)
y = (X[:, 0] * X[:, 1] > 0).long()


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm1d(d)

    def forward(self, x):
        return x + F.gelu(self.bn(self.fc(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(12, 32)
        self.blocks = nn.Sequential(Block(32), Block(32), Block(32))
        self.head = nn.Linear(32, 2)

    def forward(self, x, use_ckpt=False):
        h = self.inp(x)
        if use_ckpt:
            h = checkpoint(self.blocks[0], h, use_reentrant=False)
            h = checkpoint_sequential(self.blocks[1:], 2, h, use_reentrant=False)
        else:
            h = self.blocks(h)
        return self.head(h)


model = Net()
ref = copy.deepcopy(model)
out_a = model(X[:8], use_ckpt=True)
out_b = ref(X[:8])
out_a.sum().backward()
out_b.sum().backward()
print("checkpoint same output", torch.allclose(out_a, out_b), "same grads",
      all(torch.allclose(p.grad, q.grad, atol=1e-6) for p, q in zip(model.parameters(), ref.parameters())))
model.zero_grad()

ema_model = copy.deepcopy(model)
for p in ema_model.parameters():
    p.requires_grad_(False)
swa_ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.99))
decay = 0.99
optimizer = torch.optim.SGD([{"params": model.inp.parameters()}, {"params": model.blocks.parameters()}], lr=0.05,
                            momentum=0.9)
for p in model.head.parameters():
    p.requires_grad_(False)
print("trainable", sum(p.numel() for p in model.parameters() if p.requires_grad))
for epoch in range(6):
    if epoch == 2:
        for p in model.head.parameters():
            p.requires_grad_(True)
        optimizer.add_param_group({"params": model.head.parameters(), "lr": 0.01})
    perm = torch.randperm(256)
    for i in range(0, 256, 32):
        idx = perm[i:i + 32]
        loss = F.cross_entropy(model(X[idx], use_ckpt=epoch % 2 == 1), y[idx])
        optimizer.zero_grad()
        loss.backward()
        total_norm = torch.norm(torch.stack([torch.norm(p.grad.detach(), 2) for p in model.parameters()
                                             if p.grad is not None]), 2)
        torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
        optimizer.step()
        with torch.no_grad():
            for ema_p, p in zip(ema_model.parameters(), model.parameters()):
                ema_p.mul_(decay).add_(p, alpha=1 - decay)
            for ema_b, b in zip(ema_model.buffers(), model.buffers()):
                ema_b.copy_(b)
        swa_ema.update_parameters(model)
    with torch.no_grad():
        acc = (model(X).argmax(1) == y).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.5f} grad norm {total_norm.item():.5f} acc {acc:.4f} "
          f"groups {len(optimizer.param_groups)}")
assert acc > 0.7

update_bn([(X[i:i + 64],) for i in range(0, 256, 64)], swa_ema)
ema_model.eval()
swa_ema.eval()
model.eval()
with torch.no_grad():
    print("ema acc", (ema_model(X).argmax(1) == y).float().mean().item(),
          "swa-ema acc", (swa_ema(X).argmax(1) == y).float().mean().item())
vec = parameters_to_vector(model.parameters())
print("vector", vec.shape, round(vec.norm().item(), 4))
vector_to_parameters(vec * 0.5, ema_model.parameters())
print("halved", torch.allclose(ema_model.inp.weight, model.inp.weight * 0.5))
ws = [p.detach().clone() for p in model.parameters()]
torch._foreach_mul_(ws, 2.0)
torch._foreach_add_(ws, [torch.ones_like(w) for w in ws])
print("foreach", round(sum(w.sum().item() for w in ws), 3))
a = torch.zeros(3)
a.lerp_(torch.ones(3), 0.25)
print("lerp", a.tolist(), torch.lerp(torch.zeros(2), torch.full((2,), 4.0), torch.tensor([0.5, 0.25])).tolist())
print("n_averaged", swa_ema.n_averaged.item(), list(swa_ema.state_dict().keys())[:3])
