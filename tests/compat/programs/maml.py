"""MAML on sine-wave regression, the way the meta-learning tutorials write it: an inner SGD step
taken with torch.autograd.grad(create_graph=True), the outer loss back-propagated through that step
(second-order MAML), once with hand-written functional forward and once with
torch.func.functional_call on an nn.Module; first-order MAML for comparison."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


def sample_task(n):
    amp = torch.rand(1) * 4.9 + 0.1
    phase = torch.rand(1) * math.pi
    x = torch.rand(2 * n, 1) * 10 - 5
    y = amp * torch.sin(x + phase)
    return x[:n], y[:n], x[n:], y[n:]


def forward(params, x):
    h = F.relu(F.linear(x, params["w1"], params["b1"]))
    h = F.relu(F.linear(h, params["w2"], params["b2"]))
    return F.linear(h, params["w3"], params["b3"])


params = {
    "w1": (torch.randn(40, 1) * 0.5).requires_grad_(), "b1": torch.zeros(40, requires_grad=True),
    "w2": (torch.randn(40, 40) * 0.15).requires_grad_(), "b2": torch.zeros(40, requires_grad=True),
    "w3": (torch.randn(1, 40) * 0.15).requires_grad_(), "b3": torch.zeros(1, requires_grad=True),
}
meta_opt = torch.optim.Adam(params.values(), lr=1e-3)
inner_lr = 0.01
for step in range(30):
    meta_opt.zero_grad()
    outer = 0.0
    for _ in range(4):
        xs, ys, xq, yq = sample_task(10)
        loss = F.mse_loss(forward(params, xs), ys)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        fast = {k: v - inner_lr * g for (k, v), g in zip(params.items(), grads)}
        outer = outer + F.mse_loss(forward(fast, xq), yq)
    outer = outer / 4
    outer.backward()
    meta_opt.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step} outer {outer.item():.6f} |g_w1| {params['w1'].grad.norm().item():.6f}")

print("fast weight", fast["w1"][:1], fast["w1"].requires_grad, fast["w1"].is_leaf)

# Second order really contributes: compare with first-order MAML on the same task.
xs, ys, xq, yq = sample_task(10)
loss = F.mse_loss(forward(params, xs), ys)
g2 = torch.autograd.grad(loss, list(params.values()), create_graph=True)
fast = {k: v - inner_lr * g for (k, v), g in zip(params.items(), g2)}
so = torch.autograd.grad(F.mse_loss(forward(fast, xq), yq), params["w1"])[0]
g1 = torch.autograd.grad(F.mse_loss(forward(params, xs), ys), list(params.values()))
fast1 = {k: (v - inner_lr * g).detach().requires_grad_() for (k, v), g in zip(params.items(), g1)}
fo = torch.autograd.grad(F.mse_loss(forward(fast1, xq), yq), fast1["w1"])[0]
print(f"second-order vs first-order w1 grad diff {(so - fo).abs().max().item():.8f}")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.head = nn.Linear(32, 1)

    def forward(self, x):
        return self.head(self.body(x))


net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for step in range(20):
    opt.zero_grad()
    total = 0.0
    for _ in range(3):
        xs, ys, xq, yq = sample_task(8)
        p = dict(net.named_parameters())
        inner = F.mse_loss(functional_call(net, p, (xs,)), ys)
        gs = torch.autograd.grad(inner, p.values(), create_graph=True)
        p = {n: w - 0.02 * g for (n, w), g in zip(p.items(), gs)}
        inner2 = F.mse_loss(functional_call(net, p, (xs,)), ys)
        gs = torch.autograd.grad(inner2, p.values(), create_graph=True)
        p = {n: w - 0.02 * g for (n, w), g in zip(p.items(), gs)}
        total = total + F.mse_loss(functional_call(net, p, xq), yq)
    (total / 3).backward()
    opt.step()
    if step % 5 == 0 or step == 19:
        print(f"module step {step} outer {(total / 3).item():.6f}")
print("param names", list(dict(net.named_parameters()).keys()))
print("net grads", sorted((n, round(p.grad.abs().sum().item(), 5)) for n, p in net.named_parameters())[:2])
