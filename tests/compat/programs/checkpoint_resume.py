"""Saving and resuming training the way the tutorials do: torch.save of a checkpoint dict
(model.state_dict(), optimizer.state_dict(), scheduler.state_dict(), epoch and loss) to a file,
torch.load into a freshly built model and optimizer, and a resumed run that continues exactly
where the uninterrupted one goes; also load_state_dict(strict=False) and state_dict keys."""
import os
import tempfile

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(11)
X = torch.randn(128, 6)
y = torch.randint(0, 3, (128,))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


def build():
    torch.manual_seed(0)
    model = Net()
    opt = optim.Adam(model.parameters(), lr=0.01)
    sched = optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    return model, opt, sched


def train_epochs(model, opt, sched, epochs):
    losses = []
    for _ in range(epochs):
        for i in range(0, 128, 32):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(X[i:i + 32]), y[i:i + 32])
            loss.backward()
            opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


model, opt, sched = build()
print("state_dict keys", list(model.state_dict().keys()))
full = train_epochs(model, opt, sched, 8)
print("uninterrupted", [round(v, 6) for v in full])

model, opt, sched = build()
first = train_epochs(model, opt, sched, 4)
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "checkpoint.pt")
    torch.save({"epoch": 4, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "scheduler_state_dict": sched.state_dict(), "loss": first[-1]}, path)
    del model, opt, sched
    model, opt, sched = build()
    checkpoint = torch.load(path)
    model.load_state_dict(checkpoint["model_state_dict"])
    opt.load_state_dict(checkpoint["optimizer_state_dict"])
    sched.load_state_dict(checkpoint["scheduler_state_dict"])
    print("resumed at epoch", checkpoint["epoch"], f"loss {checkpoint['loss']:.6f}",
          "lr", sched.get_last_lr()[0], "step", opt.state_dict()["state"][0]["step"])
    model.train()
resumed = first + train_epochs(model, opt, sched, 4)
print("resumed", [round(v, 6) for v in resumed])
assert resumed == full

osd = opt.state_dict()
print("optimizer param_groups", [(g["lr"], g["betas"], g["params"]) for g in osd["param_groups"]])
print("optimizer state keys", sorted(osd["state"][0].keys()), "exp_avg shape", list(osd["state"][0]["exp_avg"].shape))

# A model with an extra head loads the shared part with strict=False.
class Bigger(Net):
    def __init__(self):
        super().__init__()
        self.extra = nn.Linear(3, 2)


big = Bigger()
result = big.load_state_dict(model.state_dict(), strict=False)
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
assert torch.equal(big.fc1.weight, model.fc1.weight)
# (fc1.bias feeds BatchNorm, which cancels it: its gradient is rounding noise, so only the
# running variance, not the running mean, is a reproducible number.)
print(f"running_var sum {model.bn.running_var.sum().item():.6f} batches tracked {model.bn.num_batches_tracked.item()}")
