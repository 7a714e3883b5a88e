"""An MLP classifier on two interleaved spirals, trained with a DataLoader, as in the usual
PyTorch tutorials (no CNN). Prints the loss per epoch and the final accuracy."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# Two spirals, 200 points each, with a little noise.
n = 200
t = torch.linspace(0.25, 3 * math.pi, n)
arm0 = torch.stack([t * torch.cos(t), t * torch.sin(t)], dim=1)
arm1 = -arm0
X = torch.cat([arm0, arm1]) / 10 + 0.02 * torch.randn(2 * n, 2)
y = torch.cat([torch.zeros(n, dtype=torch.long), torch.ones(n, dtype=torch.long)])

dataset = TensorDataset(X, y)
train_set, test_set = random_split(dataset, [320, 80], generator=torch.Generator().manual_seed(1))
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
test_loader = DataLoader(test_set, batch_size=40)


class MLP(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.Tanh(),
            nn.Linear(hidden, 2),
        )

    def forward(self, x):
        return self.net(x)


model = MLP().to(device)
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.CrossEntropyLoss()

for epoch in range(15):
    model.train()
    total, count = 0.0, 0
    for xb, yb in train_loader:
        xb, yb = xb.to(device), yb.to(device)
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * xb.size(0)
        count += xb.size(0)
    print(f"epoch {epoch} loss {total / count:.6f}")

model.eval()
correct = 0
with torch.no_grad():
    for xb, yb in test_loader:
        pred = model(xb).argmax(dim=1)
        correct += (pred == yb).sum().item()
        probs = F.softmax(model(xb), dim=-1)
print(f"test accuracy {correct / len(test_set):.4f}")
print(f"mean max prob {probs.max(dim=1).values.mean().item():.6f}")
assert correct / len(test_set) > 0.8
