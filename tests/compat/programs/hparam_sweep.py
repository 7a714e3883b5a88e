"""A hand-rolled hyper-parameter sweep and checkpointing as the "train like a pro" posts write it:
itertools.product over lr/weight_decay/dropout, one initial state_dict deep-copied so every trial
starts from the same weights (model.load_state_dict(copy.deepcopy(init_state))), best model kept
with copy.deepcopy(model.state_dict()), a checkpoint dict with model/optimizer/scheduler state and
RNG state (torch.get_rng_state/set_rng_state) saved into io.BytesIO and a temporary file, resumed
training that reproduces the uninterrupted run exactly, and the checkpoint's structure."""
import copy
import io
import itertools
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(123)
X = torch.randn(200, 8)
w_true = torch.randn(8, 1)
y = X @ w_true + 0.1 * torch.randn(200, 1)
Xtr, ytr, Xva, yva = X[:160], y[:160], X[160:], y[160:]


class MLP(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Dropout(p), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


def fit(model, lr, wd, epochs=15, opt_state=None, sched_state=None, start_epoch=0, rng_state=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=wd, nesterov=True)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
    if opt_state is not None:
        optimizer.load_state_dict(opt_state)
        scheduler.load_state_dict(sched_state)
    if rng_state is not None:
        torch.set_rng_state(rng_state)
    for epoch in range(start_epoch, epochs):
        model.train()
        perm = torch.randperm(160)
        for i in range(0, 160, 32):
            idx = perm[i:i + 32]
            loss = F.mse_loss(model(Xtr[idx]), ytr[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
    model.eval()
    with torch.no_grad():
        val = F.mse_loss(model(Xva), yva).item()
    return val, optimizer, scheduler


torch.manual_seed(0)
init_state = copy.deepcopy(MLP().state_dict())
results = {}
best_val, best_state, best_cfg = float("inf"), None, None
for lr, wd, p in itertools.product([0.01, 0.05], [0.0, 1e-3], [0.0, 0.2]):
    torch.manual_seed(1)
    model = MLP(p)
    model.load_state_dict(copy.deepcopy(init_state))
    val, _, _ = fit(model, lr, wd)
    results[(lr, wd, p)] = val
    print(f"lr={lr} wd={wd} p={p} val_mse={val:.6f}")
    if val < best_val:
        best_val, best_state, best_cfg = val, copy.deepcopy(model.state_dict()), (lr, wd, p)
print("best", best_cfg, round(best_val, 6), min(results, key=results.get) == best_cfg)
final = MLP(best_cfg[2])
final.load_state_dict(best_state)
with torch.no_grad():
    print("reloaded best", round(F.mse_loss(final.eval()(Xva), yva).item(), 6))
assert abs(F.mse_loss(final(Xva), yva).item() - best_val) < 1e-6

# Checkpoint half way, resume, and compare with the uninterrupted run.
lr, wd, p = best_cfg
torch.manual_seed(5)
full = MLP(p)
full.load_state_dict(init_state)
full_val, _, _ = fit(full, lr, wd, epochs=10)

torch.manual_seed(5)
part = MLP(p)
part.load_state_dict(init_state)
_, opt, sched = fit(part, lr, wd, epochs=5)
ckpt = {"epoch": 5, "model": part.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
        "rng": torch.get_rng_state(), "config": {"lr": lr, "wd": wd, "p": p}}
buffer = io.BytesIO()
torch.save(ckpt, buffer)
print("bytes written > 0", buffer.tell() > 0)
buffer.seek(0)
loaded = torch.load(buffer, weights_only=False)
print("ckpt keys", sorted(loaded.keys()), "sched", loaded["scheduler"])
print("optimizer groups", {k: v for k, v in loaded["optimizer"]["param_groups"][0].items() if k != "params"})
print("momentum buffers", sorted(loaded["optimizer"]["state"].keys()),
      list(loaded["optimizer"]["state"][0].keys()))
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "ckpt.pth")
    torch.save(loaded, path)
    loaded2 = torch.load(path, map_location="cpu")
    resumed = MLP(p)
    resumed.load_state_dict(loaded2["model"])
    res_val, _, _ = fit(resumed, lr, wd, epochs=10, opt_state=loaded2["optimizer"], sched_state=loaded2["scheduler"],
                        start_epoch=loaded2["epoch"], rng_state=loaded2["rng"])
print("uninterrupted", round(full_val, 6), "resumed", round(res_val, 6), "equal", full_val == res_val)
assert full_val == res_val
print("rng state", loaded["rng"].shape, loaded["rng"][:16].tolist())
missing = resumed.load_state_dict({k: v for k, v in init_state.items() if "net.0" in k}, strict=False)
print("missing", missing.missing_keys, "unexpected", missing.unexpected_keys)
try:
    resumed.load_state_dict({"net.0.weight": torch.zeros(3, 3)}, strict=False)
except RuntimeError as e:
    print("size mismatch:", "size mismatch" in str(e))
