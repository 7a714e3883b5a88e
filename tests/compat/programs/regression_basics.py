"""Regression tutorials: linear regression from scratch and with nn.Linear on torch.linspace
data (unsqueeze, torch.pow, noise from torch.randn), polynomial features built with
torch.cat([x ** i for i in ...], 1), nn.MSELoss(reduction='sum'), optimizer.zero_grad(set_to_none=...),
a manual update under torch.no_grad() with param -= lr * param.grad and grad.zero_(), the
closed-form least-squares fit by torch.linalg.solve, a learning-rate range test (exponentially
growing lr, smoothed loss, stop on divergence), and a tensor "polyfit" printed as an equation."""
import math

import torch
import torch.nn as nn

torch.manual_seed(42)

# --- data ---
x = torch.linspace(-1, 1, 100).unsqueeze(1)
y_true = 0.5 * torch.pow(x, 3) - x ** 2 + 0.3 * x + 2
y = y_true + 0.05 * torch.randn(x.size())
print(x.shape, y.shape, x[:3].squeeze().tolist())

# --- linear regression from scratch ---
w = torch.randn(1, requires_grad=True, dtype=torch.float)
b = torch.zeros(1, requires_grad=True)
lr = 0.1
for epoch in range(100):
    yhat = b + w * x
    error = y - yhat
    loss = (error ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
print("scratch", round(w.item(), 5), round(b.item(), 5), round(loss.item(), 6))

# --- polynomial features and nn.Linear ---
def make_features(x, degree=3):
    return torch.cat([x ** i for i in range(1, degree + 1)], 1)


X = make_features(x)
print("features", X.shape, X[0].tolist())
model = nn.Linear(3, 1)
loss_fn = nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
for t in range(300):
    y_pred = model(X)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, round(loss.item(), 5))
    optimizer.zero_grad(set_to_none=(t % 2 == 0))
    loss.backward()
    optimizer.step()


def poly_desc(W, b):
    result = "y = "
    for i, w in enumerate(W):
        result += "{:+.3f} x^{} ".format(w, i + 1)
    result += "{:+.3f}".format(b[0])
    return result


print("==> Learned function:\t" + poly_desc(model.weight.view(-1).tolist(), model.bias.tolist()))
print("none after set_to_none:", model.weight.grad is None)
optimizer.zero_grad(set_to_none=False)
print("zeros after set_to_none=False:", model.weight.grad is None)
optimizer.zero_grad()
print("default zero_grad gives None:", model.weight.grad is None)

# --- closed form: normal equations with a bias column ---
A = torch.cat([torch.ones_like(x), X], dim=1).double()
coef = torch.linalg.solve(A.T @ A, A.T @ y.double())
print("closed form", [round(c, 4) for c in coef.squeeze().tolist()])
resid = A @ coef - y.double()
print("closed-form sse %.6f" % resid.pow(2).sum().item())
print("nn sse %.6f" % ((model(X) - y) ** 2).sum().item())

# --- learning-rate range test ---
def lr_finder(init_value=1e-5, final_value=10.0, beta=0.98, num=60):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.SGD(net.parameters(), lr=init_value)
    mult = (final_value / init_value) ** (1 / num)
    lr = init_value
    opt.param_groups[0]["lr"] = lr
    avg_loss, best_loss, batch_num = 0.0, 0.0, 0
    losses, log_lrs = [], []
    perm = torch.randperm(100)
    for i in range(num):
        idx = perm[(i * 10) % 100:(i * 10) % 100 + 10]
        batch_num += 1
        opt.zero_grad()
        loss = nn.functional.mse_loss(net(X[idx]), y[idx])
        avg_loss = beta * avg_loss + (1 - beta) * loss.item()
        smoothed_loss = avg_loss / (1 - beta ** batch_num)
        if batch_num > 1 and smoothed_loss > 4 * best_loss:
            return log_lrs, losses, batch_num
        if smoothed_loss < best_loss or batch_num == 1:
            best_loss = smoothed_loss
        losses.append(smoothed_loss)
        log_lrs.append(math.log10(lr))
        loss.backward()
        opt.step()
        lr *= mult
        opt.param_groups[0]["lr"] = lr
    return log_lrs, losses, batch_num


log_lrs, losses, stopped = lr_finder()
best = min(range(len(losses)), key=lambda i: losses[i])
print("lr finder stopped at batch", stopped, "best log10(lr) %.3f" % log_lrs[best], "loss %.5f" % losses[best])
print("smoothed losses", ["%.4f" % l for l in losses[::10]])

# --- torch.clamp, torch.where and in-place variants on predictions ---
with torch.no_grad():
    pred = model(X).squeeze(1)
    clipped = pred.clone().clamp_(1.0, 2.5)
    flagged = torch.where(pred > 2.0, torch.ones_like(pred), torch.zeros_like(pred))
    print("clamped range", round(clipped.min().item(), 4), round(clipped.max().item(), 4),
          "above 2:", int(flagged.sum().item()))
    print("r2 %.5f" % (1 - ((pred - y.squeeze()) ** 2).sum() / ((y - y.mean()) ** 2).sum()).item())
