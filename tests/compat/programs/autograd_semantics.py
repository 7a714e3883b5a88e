"""Autograd semantics that debugging scripts and library tests lean on: retain_graph and the
errors a freed graph raises, torch.autograd.grad's allow_unused / materialize_grads /
is_grads_batched, enable_grad and set_grad_enabled inside no_grad, inference_mode, requires_grad
and is_leaf through views and in-place ops (and the errors PyTorch raises for them), hooks that
rescale gradients, retain_grad on non-leaves, full backward hooks on Modules, anomaly detection,
and the tensor semantics around them: type promotion with Python scalars and integer tensors,
integer and true division, boolean-mask and advanced-index assignment with broadcasting."""
import torch
import torch.nn as nn


def err(fn, full=True):
    try:
        fn()
        return "no error"
    except Exception as e:  # noqa: BLE001
        kind = next(k.__name__ for k in (IndexError, RuntimeError, TypeError, ValueError, Exception) if isinstance(e, k))
        return f"{kind}: {str(e).splitlines()[0][:48]}" if full else kind


torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
y = (x.exp() * 2).sum()
y.backward(retain_graph=True)
g1 = x.grad.clone()
y.backward()
print("accumulated twice", torch.allclose(x.grad, 2 * g1))
print("third backward:", err(lambda: y.backward()))
z = (x * x).sum()
torch.autograd.grad(z, x)
print("grad then grad:", err(lambda: torch.autograd.grad(z, x)))
print("backward of leaf without grad:", err(lambda: torch.ones(2).sum().backward()))
print("non-scalar:", err(lambda: (x * 2).backward()))
print("grad_outputs shape:", err(lambda: torch.autograd.grad(x * 2, x, grad_outputs=torch.ones(4))))

# allow_unused / materialize_grads / is_grads_batched
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
out = (a ** 2).sum()
print("unused:", err(lambda: torch.autograd.grad(out, [a, b], retain_graph=True)))
ga, gb = torch.autograd.grad(out, [a, b], allow_unused=True, retain_graph=True)
print("allow_unused", ga.tolist(), gb)
ga, gb = torch.autograd.grad(out, [a, b], materialize_grads=True, retain_graph=True)
print("materialize_grads", ga.tolist(), gb.tolist())
print("materialize + allow_unused=False:",
      err(lambda: torch.autograd.grad(out, [a, b], allow_unused=False, materialize_grads=True, retain_graph=True)))
M = torch.randn(3, 2)
v = torch.randn(2, requires_grad=True)
o = M @ v
(J,) = torch.autograd.grad(o, v, grad_outputs=torch.eye(3), is_grads_batched=True)
print("is_grads_batched jacobian equals M", torch.allclose(J, M), tuple(J.shape))

# grad-mode contexts
with torch.no_grad():
    p = x * 2
    with torch.enable_grad():
        q = x * 2
    with torch.set_grad_enabled(True):
        r = x * 3
    print("inside no_grad", p.requires_grad, q.requires_grad, r.requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(False)
s = x * 2
torch.set_grad_enabled(True)
print("set_grad_enabled(False) call", s.requires_grad, torch.is_grad_enabled())


@torch.no_grad()
def infer(t):
    return t * 2


@torch.enable_grad()
def train_step(t):
    return t * 2


with torch.no_grad():
    print("decorators", infer(x).requires_grad, train_step(x).requires_grad)
with torch.inference_mode():
    im = x * 2
print("inference_mode", im.requires_grad, torch.is_inference_mode_enabled())

# requires_grad through views and in-place ops
leaf = torch.randn(4, requires_grad=True)
print("in-place on leaf:", err(lambda: leaf.add_(1)))
print("in-place on leaf view:", err(lambda: leaf[:2].mul_(2)))
w = leaf.clone()
w[1:3] = 0
print("setitem on clone", w.requires_grad, w.is_leaf, w.grad_fn is not None)
w.sum().backward()
print("grad through setitem", leaf.grad.tolist())
base = torch.zeros(3)
base[0] = leaf[0] * 2
print("setitem grad-requiring into plain tensor", base.requires_grad, base.is_leaf)
c = torch.ones(3)
c.mul_(leaf[:3])
print("in-place with grad operand", c.requires_grad, c.is_leaf)
view = leaf.detach().view(2, 2)
view.add_(1)
print("detach shares storage", torch.equal(view.flatten(), leaf.detach()))
u = torch.randn(3, requires_grad=True)
e = u.exp()
e.add_(1)
print("modified saved output:", err(lambda: e.sum().backward()))
t2 = torch.randn(3, requires_grad=True)
s2 = torch.sigmoid(t2)
s2.mul_(2)
print("sigmoid then in-place:", err(lambda: s2.sum().backward()))
k = torch.randn(3, requires_grad=True)
m = k * 1
m.relu_()
m.sum().backward()
print("relu_ on non-leaf grad", k.grad.tolist() == (k > 0).float().tolist())
print("requires_grad_ on non-leaf:", err(lambda: (k * 2).requires_grad_(False)))
print("int requires_grad:", err(lambda: torch.tensor([1, 2]).requires_grad_()))
d = k.detach()
print("detach", d.requires_grad, d.is_leaf, d.grad_fn)

# hooks
h = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
mid = h * 2
mid.retain_grad()
mid.register_hook(lambda g: g.clamp(min=0))
handle = h.register_hook(lambda g: g * 10)
(mid ** 2).sum().backward()
print("hooked grads", h.grad.tolist(), mid.grad.tolist())
handle.remove()

net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
grads_in = []
hh = net[1].register_full_backward_hook(lambda mod, gin, gout: grads_in.append((gin[0].shape, gout[0].shape)))
net(torch.randn(5, 3)).sum().backward()
print("full backward hook", grads_in)
hh.remove()

with torch.autograd.detect_anomaly():
    q = torch.tensor([0.0, 1.0], requires_grad=True)
    r_ = torch.sqrt(q) * 0
    print("anomaly:", err(lambda: r_.sum().backward(), False), "returned nan values" in str(err(lambda: r_.sum().backward())))

# type promotion and division
i = torch.tensor([5, -7, 9])
print("int / int", (i / 2).dtype, (i / 2).tolist())
print("int // int", (i // 2).tolist(), torch.div(i, 2, rounding_mode="floor").tolist(), torch.div(i, 2, rounding_mode="trunc").tolist())
print("int % int", (i % 4).tolist(), torch.fmod(i, 4).tolist(), torch.remainder(i, -4).tolist())
print("int * float scalar", (i * 1.5).dtype, "int + int scalar", (i + 2).dtype, "int + bool", (i + True).dtype)
f16 = torch.ones(2, dtype=torch.float16)
print("half + float scalar", (f16 + 1.5).dtype, "half + float32 tensor", (f16 + torch.ones(2)).dtype,
      "half + 0-d float64", (f16 + torch.tensor(1.0, dtype=torch.float64)).dtype)
print("int tensor + 0-d float", (i + torch.tensor(0.5)).dtype, "bool * int", (torch.tensor([True]) * 3).dtype)
print("float64 grad through int mix", (torch.tensor([1.0], dtype=torch.float64, requires_grad=True) * i[:1]).dtype)
print("int ** negative:", err(lambda: i ** -1))
print("int pow float", (i ** 0.5).dtype, "2 ** int", (2 ** i).tolist())

# boolean-mask and advanced-index assignment
A = torch.arange(12.0).reshape(3, 4)
A[A > 6] = -1
A[:, [0, 2]] = torch.tensor([10.0, 20.0])
A[torch.tensor([True, False, True])] = torch.tensor([1.0, 2.0, 3.0, 4.0])
A[[0, 2], [1, 3]] += 100
print("masked setitem", A.tolist())
B = torch.zeros(2, 3, requires_grad=True)
C = B.clone()
C[C == 0] = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
print("mask assign grad_fn", C.grad_fn is not None)
src = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
dst = torch.zeros(3, 2)
dst[torch.tensor([0, 2])] = src * 2
dst.sum().backward()
print("index assign grad", src.grad.tolist())
print("mask shape mismatch:", err(lambda: A.__setitem__(torch.tensor([True, False]), 1.0), False))
print("index out of range:", err(lambda: A[torch.tensor([5])], False))

# printing with grad_fn
pt = torch.tensor([1.5, 2.0], requires_grad=True)
print(pt * 2)
print(pt.sum())
print((pt * 2).mean(), pt.detach())
print(torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True) @ torch.ones(2, 1, dtype=torch.float64))
