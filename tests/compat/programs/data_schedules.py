"""Data pipeline and learning-rate schedules: TensorDataset, random_split with a seeded
generator, DataLoader (shuffle with its own generator, drop_last), a custom map-style Dataset,
and a regression model trained under OneCycleLR, then CosineAnnealingLR, ReduceLROnPlateau and
CyclicLR, printing the learning rates each schedule produces."""
import torch
from torch import nn
from torch.optim.lr_scheduler import CosineAnnealingLR, CyclicLR, OneCycleLR, ReduceLROnPlateau
from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split

torch.manual_seed(21)
X = torch.randn(300, 4)
y = (X[:, :1] * 1.5 - X[:, 1:2] + 0.3 * X[:, 2:3] ** 2 + 0.05 * torch.randn(300, 1))
full = TensorDataset(X, y)
train_set, val_set = random_split(full, [240, 60], generator=torch.Generator().manual_seed(0))
print("split sizes", len(train_set), len(val_set), "first val index", val_set.indices[0])


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i)]), "y": i * i}


batch = next(iter(DataLoader(Squares(10), batch_size=4)))
print("dict batch", batch["x"].view(-1).tolist(), batch["y"].tolist())

g = torch.Generator()
g.manual_seed(1)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True, generator=g)
val_loader = DataLoader(val_set, batch_size=64)
print("batches per epoch", len(train_loader))


def make_model():
    torch.manual_seed(2)
    return nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1))


def evaluate(model):
    model.eval()
    with torch.no_grad():
        total = sum(nn.functional.mse_loss(model(xb), yb, reduction="sum").item() for xb, yb in val_loader)
    model.train()
    return total / len(val_set)


def run(name, make_sched, epochs=6, step_per_batch=False):
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sched = make_sched(opt)
    lrs = []
    for epoch in range(epochs):
        for xb, yb in train_loader:
            opt.zero_grad()
            nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
            if step_per_batch:
                lrs.append(opt.param_groups[0]["lr"])
                sched.step()
        val = evaluate(model)
        if isinstance(sched, ReduceLROnPlateau):
            sched.step(val)
        elif not step_per_batch:
            sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    print(f"{name}: val {val:.6f} lrs", [round(v, 6) for v in lrs[::max(1, len(lrs) // 6)]])
    return val


first = evaluate(make_model())
print(f"untrained val {first:.6f}")
results = [
    run("onecycle", lambda o: OneCycleLR(o, max_lr=0.1, total_steps=6 * len(train_loader)), step_per_batch=True),
    run("cosine", lambda o: CosineAnnealingLR(o, T_max=6, eta_min=1e-3)),
    run("plateau", lambda o: ReduceLROnPlateau(o, mode="min", factor=0.5, patience=0, threshold=0.5)),
    run("cyclic", lambda o: CyclicLR(o, base_lr=0.01, max_lr=0.08, step_size_up=5, mode="triangular2"),
        step_per_batch=True),
]
assert all(r < first / 3 for r in results), results
