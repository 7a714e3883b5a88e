"""numpy and torch mixed the way data-science notebooks mix them: features standardised with a
numpy mean/std ((x - mu) / sd with ndarray operands, so the result is a float64 tensor), a
float32 model fed .float() inputs, labels kept as a numpy array and accuracy by
(pred.numpy() == y_np).mean() and by (pred == y_np).sum(), np.exp/np.log ufuncs on tensors,
np.argmax and np.clip of tensors, torch.from_numpy of np.random data with a shared buffer,
np.stack of .detach().numpy() snapshots of the weights, and a confusion matrix by np.add.at."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(0)
torch.manual_seed(0)
X_np = rng.normal(size=(200, 4)) * np.array([1.0, 5.0, 0.5, 2.0]) + np.array([0.0, 10.0, -1.0, 3.0])
y_np = (X_np[:, 0] + 0.2 * X_np[:, 1] - X_np[:, 2] > 2.0).astype(np.int64)
mu, sd = X_np.mean(0), X_np.std(0)

X = torch.from_numpy(X_np)
Xs = (X - mu) / sd
print(type(Xs).__name__, Xs.dtype, Xs.mean(0), Xs.std(0, unbiased=False))
shared = torch.from_numpy(X_np)
X_np[0, 0] = 123.0
print("shared buffer", shared[0, 0].item(), X[0, 0].item())
X_np[0, 0] = 0.5
Xs = ((torch.from_numpy(X_np) - mu) / sd).float()
y = torch.from_numpy(y_np)
print("labels", y.dtype, y[:10], np.bincount(y_np))

model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.05)
snapshots = []
for epoch in range(30):
    logits = model(Xs)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        snapshots.append(model[0].weight.detach().numpy().copy())
        with torch.no_grad():
            pred = model(Xs).argmax(1)
        print(f"epoch {epoch} loss {loss.item():.4f} acc(np) {(pred.numpy() == y_np).mean():.3f} "
              f"correct {(pred == y_np).sum().item()}")
W = np.stack(snapshots)
print("weight drift", W.shape, np.abs(W[-1] - W[0]).mean().round(4))

with torch.no_grad():
    logits = model(Xs)
probs = torch.softmax(logits, 1)
print("np ufuncs", type(np.exp(logits[:2])).__name__, np.exp(logits[:2]), np.log(probs[:2]))
print("np.argmax", np.argmax(probs[:5], axis=1), np.clip(probs[:2], 0.1, 0.9))
pred = probs.argmax(1).numpy()
cm = np.zeros((2, 2), dtype=np.int64)
np.add.at(cm, (y_np, pred), 1)
print("confusion", cm.tolist(), "recall", (cm.diagonal() / cm.sum(1)).round(3).tolist())
weights = np.array([0.3, 0.7])
weighted = probs * weights
print("weighted", weighted.dtype, weighted[:2], (probs.numpy() * weights)[:2].round(4))
print("mask", (probs[:, 1] > 0.5) == (pred == 1))
