"""Autograd mechanics beyond the training loop, as the autograd tutorials and debugging recipes
use them: tensor hooks (register_hook that prints or rescales a gradient), retain_grad on
intermediates, Module forward/forward-pre/full-backward hooks collecting activations and
gradients, torch.autograd.grad with allow_unused and grad_outputs, the errors a second backward
and a non-scalar backward raise, requires_grad_/detach_/no_grad/set_grad_enabled, in-place ops
on leaves, custom Functions with once_differentiable and mark_non_differentiable, hvp/vhp from
torch.autograd.functional, gradgradcheck on a user function and anomaly detection."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

torch.manual_seed(0)

# tensor hooks and retain_grad
x = torch.randn(4, requires_grad=True)
seen = []
h = x.register_hook(lambda g: seen.append(g.clone()))
y = x * 2
y.retain_grad()
z = y.pow(2).sum()
y.register_hook(lambda g: g * 0.5)
z.backward()
print("x.grad", x.grad)
print("y.grad", y.grad, "is_leaf", x.is_leaf, y.is_leaf, z.is_leaf)
print("hook saw", seen[0])
h.remove()
x.grad = None
(x * 3).sum().backward()
print("after remove", len(seen), x.grad)

# non-leaf .grad is None without retain_grad (PyTorch warns)
a = torch.ones(2, requires_grad=True)
b = a * 2
b.sum().backward()
print("a.grad", a.grad, "requires_grad", b.requires_grad, "grad_fn", b.grad_fn is not None)

# errors
w = torch.randn(3, requires_grad=True)
out = (w * w).sum()
out.backward()
try:
    out.backward()
except RuntimeError as e:
    print("second backward:", "RuntimeError", "backward through the graph a second time" in str(e))
try:
    (w * 2).backward()
except RuntimeError as e:
    print("non-scalar backward:", isinstance(e, RuntimeError), "grad can be implicitly created only for scalar outputs" in str(e))
try:
    torch.ones(2).sum().backward()
except RuntimeError as e:
    print("no grad_fn:", isinstance(e, RuntimeError), "does not require grad and does not have a grad_fn" in str(e))
try:
    leaf = torch.ones(2, requires_grad=True)
    leaf.add_(1)
except RuntimeError as e:
    print("in-place on leaf:", isinstance(e, RuntimeError), "a leaf Variable that requires grad" in str(e))
try:
    torch.tensor([1, 2]).requires_grad_()
except RuntimeError as e:
    print("int requires_grad:", isinstance(e, RuntimeError), "floating point" in str(e))

# retain_graph and grad_outputs
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
v = w.exp()
v.backward(torch.ones_like(v), retain_graph=True)
v.backward(torch.tensor([1.0, 0.0, 2.0]))
print("accumulated", w.grad)

# torch.autograd.grad
p = torch.tensor(2.0, requires_grad=True)
q = torch.tensor(3.0, requires_grad=True)
unused = torch.tensor(1.0, requires_grad=True)
f = p ** 3 * q
gp, gq, gu = torch.autograd.grad(f, (p, q, unused), allow_unused=True, retain_graph=True)
print("grad", gp, gq, gu)
try:
    torch.autograd.grad(f, (p, unused), retain_graph=True)
except RuntimeError as e:
    print("unused without allow_unused:", isinstance(e, RuntimeError), "appears to not have been used in the graph" in str(e))
(gpp,) = torch.autograd.grad(torch.autograd.grad(f, p, create_graph=True)[0], p)
print("second derivative", gpp)
g2 = torch.autograd.grad([p * q, p + q], [p], grad_outputs=[torch.tensor(1.0), torch.tensor(10.0)])
print("sum of grads", g2)
gz = torch.autograd.grad(f, [p, unused], allow_unused=True, materialize_grads=True)
print("materialized", gz)

# grad mode switches
with torch.no_grad():
    n = w * 2
print("no_grad", n.requires_grad)
with torch.set_grad_enabled(False):
    print("set_grad_enabled(False)", (w * 2).requires_grad, torch.is_grad_enabled())
print("enabled again", torch.is_grad_enabled())
torch.set_grad_enabled(False)
print("function form", (w * 2).requires_grad)
torch.set_grad_enabled(True)
with torch.no_grad():
    with torch.enable_grad():
        print("enable_grad inside no_grad", (w * 2).requires_grad)
d = (w * 2).detach_()
print("detach_", d.requires_grad, d.grad_fn)
frozen = torch.randn(2).requires_grad_(True)
print("requires_grad_", frozen.requires_grad, frozen.is_leaf)


# module hooks
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.Tanh()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


net = Net()
activations, grads, pre_inputs = {}, {}, []


def save_activation(name):
    def hook(module, inp, out):
        activations[name] = out.detach()
    return hook


def save_grad(name):
    def hook(module, grad_input, grad_output):
        grads[name] = (tuple(None if g is None else tuple(g.shape) for g in grad_input),
                       grad_output[0].detach().clone())
    return hook


handles = [net.fc1.register_forward_hook(save_activation("fc1")),
           net.act.register_forward_hook(save_activation("act")),
           net.fc2.register_full_backward_hook(save_grad("fc2")),
           net.act.register_full_backward_hook(save_grad("act")),
           net.register_forward_pre_hook(lambda m, inp: pre_inputs.append(inp[0].shape))]
inp = torch.randn(3, 4)
loss = net(inp).pow(2).mean()
loss.backward()
print("activations", {k: tuple(v.shape) for k, v in activations.items()})
print("act mean", round(activations["act"].mean().item(), 6))
print("grad shapes", {k: v[0] for k, v in grads.items()})
print("grad_output fc2", grads["fc2"][1])
print("pre-hook", pre_inputs)
for hd in handles:
    hd.remove()
net(inp)
print("hooks removed", len(pre_inputs))


# forward hook that changes the output, pre-hook that changes the input
def double_output(module, inp, out):
    return out * 2


def shift_input(module, args):
    return (args[0] + 1,)


hd1 = net.fc2.register_forward_hook(double_output)
hd2 = net.fc1.register_forward_pre_hook(shift_input)
print("hooked output", net(inp)[0])
hd1.remove()
hd2.remove()
print("plain output", net(inp)[0])


# custom Functions
class Clamp01(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(0, 1)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * ((x >= 0) & (x <= 1)).to(grad_output.dtype)


class SortWithIndex(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        (idx,) = ctx.saved_tensors
        out = torch.zeros_like(g_values)
        out.scatter_(0, idx, g_values)
        return out


class MulConst(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        return x * c

    @staticmethod
    def backward(ctx, g):
        print("  needs_input_grad", ctx.needs_input_grad)
        return g * ctx.c, None


t = torch.tensor([-0.5, 0.25, 0.75, 1.5], requires_grad=True)
Clamp01.apply(t).sum().backward()
print("clamp grad", t.grad)
vals, idx = SortWithIndex.apply(torch.tensor([3.0, 1.0, 2.0], requires_grad=True))
print("sorted", vals, idx, idx.requires_grad)
s = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
vals, idx = SortWithIndex.apply(s)
(vals * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print("sort grad", s.grad)
m = torch.tensor([1.0, 2.0], requires_grad=True)
MulConst.apply(m, 3.0).sum().backward()
print("mulconst grad", m.grad)
try:
    m2 = torch.tensor([1.0], requires_grad=True)
    y2 = Clamp01.apply(m2)
    (g,) = torch.autograd.grad(y2.sum(), m2, create_graph=True)
    g.sum().backward()
except RuntimeError as e:
    print("once_differentiable double backward:", isinstance(e, RuntimeError))

# autograd.functional
def energy(x):
    return (x ** 3).sum() + x[0] * x[1]


x0 = torch.tensor([1.0, 2.0, 3.0])
vec = torch.tensor([1.0, 0.0, -1.0])
val, hv = torch.autograd.functional.hvp(energy, x0, vec)
print("hvp", val, hv)
val, vh = torch.autograd.functional.vhp(energy, x0, vec)
print("vhp", vh)
print("hessian diag", torch.autograd.functional.hessian(energy, x0).diagonal())
jac = torch.autograd.functional.jacobian(lambda a, b: a * b + b, (x0, vec))
print("jacobian of two inputs", [tuple(j.shape) for j in jac], jac[0].diagonal(), jac[1].diagonal())

# gradcheck / gradgradcheck on double inputs
inputs = (torch.randn(3, dtype=torch.double, requires_grad=True),
          torch.randn(3, dtype=torch.double, requires_grad=True))
fn = lambda a, b: (a.sin() * b.exp()).sum() + (a * b).tanh().sum()
print("gradcheck", torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-4))
print("gradgradcheck", torch.autograd.gradgradcheck(fn, inputs))
print("gradcheck Clamp01", torch.autograd.gradcheck(Clamp01.apply, (torch.tensor([0.3, 0.6], dtype=torch.double,
                                                                                requires_grad=True),)))

# anomaly detection: a NaN produced in the backward is reported with the op that made it
with torch.autograd.detect_anomaly():
    a = torch.tensor([0.0, 1.0], requires_grad=True)
    out = torch.sqrt(a).sum()
    try:
        (out * 0 + a.sqrt().mul(torch.tensor([0.0, 1.0])).sum()).backward()
        print("anomaly: no error, grad", a.grad)
    except RuntimeError as e:
        print("anomaly:", isinstance(e, RuntimeError), "returned nan values in its 0th output" in str(e))
print("anomaly enabled after", torch.is_anomaly_enabled())
