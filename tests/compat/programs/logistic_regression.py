"""Binary logistic regression the tutorial way: nn.Linear + nn.BCEWithLogitsLoss (with
pos_weight for the imbalanced class), full-batch SGD, accuracy and a confusion matrix from
torch.sigmoid(...) > 0.5, then the same fit checked against nn.BCELoss on probabilities and a
closed-form gradient."""
import torch
import torch.nn as nn

torch.manual_seed(12)
n, d = 400, 5
X = torch.randn(n, d)
w_true = torch.tensor([1.5, -2.0, 0.0, 0.7, 0.3])
logits_true = X @ w_true - 1.0
y = (torch.rand(n) < torch.sigmoid(logits_true)).float()
print(f"positives {int(y.sum().item())} of {n}")

mean, std = X.mean(0, keepdim=True), X.std(0, keepdim=True)
Xn = (X - mean) / std


class LogisticRegression(nn.Module):
    def __init__(self, n_features):
        super().__init__()
        self.linear = nn.Linear(n_features, 1)

    def forward(self, x):
        return self.linear(x).squeeze(-1)


model = LogisticRegression(d)
pos_weight = (y == 0).sum() / (y == 1).sum()
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(200):
    optimizer.zero_grad()
    loss = criterion(model(Xn), y)
    loss.backward()
    optimizer.step()
    if epoch % 50 == 0 or epoch == 199:
        print(f"epoch {epoch} loss {loss.item():.6f}")

with torch.no_grad():
    probs = torch.sigmoid(model(Xn))
    pred = (probs > 0.5).float()
    acc = (pred == y).float().mean().item()
    tp = ((pred == 1) & (y == 1)).sum().item()
    fp = ((pred == 1) & (y == 0)).sum().item()
    fn = ((pred == 0) & (y == 1)).sum().item()
    tn = ((pred == 0) & (y == 0)).sum().item()
print(f"accuracy {acc:.4f} confusion [[{tn}, {fp}], [{fn}, {tp}]]")
print("weights", [round(v, 4) for v in model.linear.weight.view(-1).tolist()], f"bias {model.linear.bias.item():.4f}")
assert acc > 0.7

# BCEWithLogitsLoss without weights equals BCELoss on sigmoid probabilities, and its gradient
# with respect to the logits is (sigmoid(z) - y) / n.
z = model(Xn).detach().requires_grad_()
a = nn.BCEWithLogitsLoss()(z, y)
b = nn.BCELoss()(torch.sigmoid(z), y)
a.backward()
print(f"bce with logits {a.item():.6f} bce {b.item():.6f}")
assert torch.allclose(a, b, atol=1e-5)
assert torch.allclose(z.grad, (torch.sigmoid(z) - y) / n, atol=1e-7)
per_sample = nn.BCEWithLogitsLoss(reduction="none")(z, y)
print(f"per-sample max {per_sample.max().item():.6f} sum {per_sample.sum().item():.5f}")
