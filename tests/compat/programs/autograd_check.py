"""Autograd against hand derivatives: a few functions whose gradients are known in closed form,
checked with backward(), torch.autograd.grad and a second derivative (create_graph=True).
Prints each gradient and the largest difference from the formula."""
import torch

torch.manual_seed(0)
x = torch.randn(5, dtype=torch.float64, requires_grad=True)


def report(name, got, want):
    err = (got - want).abs().max().item()
    print(f"{name} grad {[round(v, 10) for v in got.tolist()]} err {err:.2e}")
    assert err < 1e-10, name


# d/dx (x^3 + 2x) = 3x^2 + 2
y = (x ** 3 + 2 * x).sum()
y.backward()
report("cubic", x.grad, 3 * x.detach() ** 2 + 2)

# d/dx tanh(x) * sigmoid(x) = (1 - tanh^2) sig + tanh sig (1 - sig)
x.grad = None
th, sg = torch.tanh(x), torch.sigmoid(x)
(th * sg).sum().backward()
t, s = th.detach(), sg.detach()
report("tanh*sigmoid", x.grad, (1 - t ** 2) * s + t * s * (1 - s))

# d/dx log(1 + exp(x)) / (1 + x^2), through autograd.grad
f = torch.log(1 + torch.exp(x)) / (1 + x * x)
(g,) = torch.autograd.grad(f.sum(), x)
xd = x.detach()
sp = torch.log(1 + torch.exp(xd))
report("softplus/quad", g, torch.sigmoid(xd) / (1 + xd ** 2) - sp * 2 * xd / (1 + xd ** 2) ** 2)

# Second derivative of sin(x) * x: d2/dx2 = 2 cos(x) - x sin(x)
(g1,) = torch.autograd.grad((torch.sin(x) * x).sum(), x, create_graph=True)
(g2,) = torch.autograd.grad(g1.sum(), x)
report("second derivative", g2, 2 * torch.cos(xd) - xd * torch.sin(xd))

# Matrix calculus: d/dW sum((W a - b)^2) = 2 (W a - b) a^T
W = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
a, b = torch.randn(4, 1, dtype=torch.float64), torch.randn(3, 1, dtype=torch.float64)
((W @ a - b) ** 2).sum().backward()
report("least squares", W.grad.flatten(), (2 * (W.detach() @ a - b) @ a.T).flatten())

# Softmax cross-entropy: d/dz CE(z, k) = softmax(z) - onehot(k)
z = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
k = torch.tensor([0, 5, 2, 2])
torch.nn.functional.cross_entropy(z, k, reduction="sum").backward()
onehot = torch.zeros(4, 6, dtype=torch.float64)
onehot[torch.arange(4), k] = 1.0
report("cross entropy", z.grad.flatten(), (torch.softmax(z.detach(), dim=1) - onehot).flatten())
print("all gradients match")
