"""Gradient accumulation and the "mixed precision free" training-loop variants from the
performance-tuning guides: loss / accumulation_steps with optimizer.step() every N micro-batches,
model.zero_grad(set_to_none=True), the equivalence with one big batch checked with
torch.testing.assert_close, torch.autocast(device_type="cpu", enabled=False) as a no-op context,
torch.cuda.amp.GradScaler(enabled=False) pass-through (scale/step/update), clip_grad_norm_ with
error_if_nonfinite, clip_grad_value_, per-parameter-group lr/weight_decay (no decay on bias and
norm weights), torch.no_grad vs torch.inference_mode evaluation, and
optimizer.param_groups introspection."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(64, 10)
y = (X[:, :3].sum(1) > 0).long()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.ln = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


base = Net()

# One big batch ...
big = copy.deepcopy(base)
opt_big = torch.optim.SGD(big.parameters(), lr=0.1)
opt_big.zero_grad()
F.cross_entropy(big(X), y).backward()
opt_big.step()

# ... equals four accumulated micro-batches with the loss divided by 4.
acc = copy.deepcopy(base)
opt_acc = torch.optim.SGD(acc.parameters(), lr=0.1)
accumulation_steps = 4
acc.zero_grad(set_to_none=True)
for i, (xb, yb) in enumerate(zip(X.chunk(4), y.chunk(4))):
    loss = F.cross_entropy(acc(xb), yb) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        opt_acc.step()
        acc.zero_grad(set_to_none=True)
for (n, p1), p2 in zip(big.named_parameters(), acc.parameters()):
    torch.testing.assert_close(p1, p2, rtol=1e-5, atol=1e-6)
print("accumulated == big batch", all(p.grad is None for p in acc.parameters()))


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or "ln" in name:
            no_decay.append(param)
        else:
            decay.append(param)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0, "lr": 5e-3}]


model = copy.deepcopy(base)
optimizer = torch.optim.AdamW(param_groups(model, 0.05), lr=1e-2, betas=(0.9, 0.95))
print("groups", [(len(g["params"]), g["lr"], g["weight_decay"]) for g in optimizer.param_groups])
print("defaults", sorted(optimizer.defaults.keys()))
scaler = torch.cuda.amp.GradScaler(enabled=False)
use_amp = False
losses = []
for epoch in range(5):
    perm = torch.randperm(64)
    optimizer.zero_grad(set_to_none=True)
    for step, i in enumerate(range(0, 64, 8)):
        idx = perm[i:i + 8]
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=use_amp):
            out = model(X[idx])
            loss = F.cross_entropy(out, y[idx])
        scaler.scale(loss / 2).backward()
        if (step + 1) % 2 == 0:
            scaler.unscale_(optimizer)
            total_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, error_if_nonfinite=True)
            torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    with torch.inference_mode():
        full = F.cross_entropy(model(X), y).item()
    losses.append(full)
    print(f"epoch {epoch} loss {full:.6f} last norm {total_norm.item():.6f} scale {scaler.get_scale()}")
assert losses[-1] < losses[0]

with torch.no_grad():
    out = model(X[:4])
print("no_grad requires_grad", out.requires_grad, "inference", torch.is_inference_mode_enabled())
with torch.inference_mode():
    t = model(X[:2])
    print("inside inference_mode", torch.is_inference_mode_enabled())
print("inference tensor", t.requires_grad, torch.is_inference_mode_enabled())
print("is_grad_enabled", torch.is_grad_enabled())
with torch.set_grad_enabled(False):
    print("inside set_grad_enabled(False)", torch.is_grad_enabled())
torch.set_grad_enabled(True)
bad = nn.Linear(2, 1)
bad(torch.tensor([[float("inf"), 1.0]])).sum().backward()
try:
    torch.nn.utils.clip_grad_norm_(bad.parameters(), 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("nonfinite:", isinstance(e, RuntimeError), "non-finite" in str(e))
print("clip returns", torch.nn.utils.clip_grad_norm_(bad.parameters(), 1.0).item())
