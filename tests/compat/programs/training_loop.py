"""A custom training loop: a regression model with a StepLR schedule, gradient clipping
(clip_grad_norm_), weight decay through param groups, evaluation under no_grad and a best
checkpoint kept with copy.deepcopy(state_dict()). Prints loss, lr and gradient norm."""
import copy

import torch
from torch import nn, optim
from torch.optim.lr_scheduler import StepLR

torch.manual_seed(42)

true_w = torch.tensor([[2.0, -3.0, 0.5]])
X = torch.randn(256, 3)
y = X @ true_w.T + 0.7 + 0.1 * torch.randn(256, 1)
X_val, y_val = X[200:], y[200:]
X, y = X[:200], y[:200]


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 16)
        self.out = nn.Linear(16, 1)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.out(self.act(self.hidden(x)))


model = Regressor()
decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
optimizer = optim.SGD([{"params": decay, "weight_decay": 1e-3}, {"params": no_decay}], lr=0.05, momentum=0.9)
scheduler = StepLR(optimizer, step_size=10, gamma=0.5)
loss_fn = nn.MSELoss()

best_val, best_state = float("inf"), None
for epoch in range(30):
    model.train()
    perm = torch.randperm(200)
    for i in range(0, 200, 50):
        idx = perm[i:i + 50]
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(X[idx]), y[idx])
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
    scheduler.step()
    model.eval()
    with torch.no_grad():
        val = loss_fn(model(X_val), y_val).item()
    if val < best_val:
        best_val, best_state = val, copy.deepcopy(model.state_dict())
    if epoch % 5 == 0 or epoch == 29:
        print(f"epoch {epoch} train {loss.item():.6f} val {val:.6f} lr {scheduler.get_last_lr()[0]:.6f} "
              f"grad_norm {float(grad_norm):.6f}")

model.load_state_dict(best_state)
with torch.no_grad():
    print(f"best val {loss_fn(model(X_val), y_val).item():.6f}")
assert best_val < 0.1
