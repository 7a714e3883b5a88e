"""Autograd and tensor-plumbing idioms from the autograd tutorial and debugging notebooks: the
grad_fn of each intermediate printed through the tensor (grad_fn=<...>), walking
loss.grad_fn.next_functions back to the AccumulateGrad leaves (their .variable), is_leaf and
requires_grad of each step, retain_grad, torch.autograd.grad with grad_outputs for a vector
output, retain_graph for two grads of one graph, allow_unused, the RuntimeError of an in-place op
on a leaf that requires grad (and the fix under no_grad), a modified-by-in-place-op error,
parameters_to_vector / vector_to_parameters round trips, a state_dict through torch.save /
torch.load into io.BytesIO and a file, tensor.numpy() / torch.from_numpy memory sharing, and
masked_fill(-inf) before softmax."""
import io
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)

# --- the autograd tutorial's graph ---
x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = F.binary_cross_entropy_with_logits(z, y)
print(z)
print(loss)
loss.backward()
print(w.grad)
print(b.grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad, z.grad_fn is None)
z_det = (torch.matmul(x, w) + b).detach()
print(z_det.requires_grad)

a = torch.tensor([2.0, 3.0], requires_grad=True)
q = 3 * a ** 3 - a ** 2
print(q)
ext = torch.tensor([1.0, 1.0])
q.backward(gradient=ext)
print(a.grad, 9 * a ** 2 - 2 * a == a.grad)

# --- walking the graph ---
model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
inp = torch.randn(2, 4)
h = model[0](inp)
r = model[1](h)
out = model[2](r)
loss = F.mse_loss(out, torch.zeros(2, 1))
print(h)
print(r)
print(out)
print(loss)
fn = loss.grad_fn
names = []
while fn is not None:
    names.append(repr(fn).split(" object")[0].lstrip("<"))
    nexts = [f for f, _ in fn.next_functions if f is not None]
    fn = nexts[0] if nexts else None
print("from the loss back to a leaf", names[:2], names[-1])  # F.linear: one node here, addmm + t in PyTorch
p_a = torch.tensor([0.5, -1.0], requires_grad=True)
p_b = torch.tensor([2.0, 1.0], requires_grad=True)
e = ((p_a * p_b + 1).sigmoid() - 0.5).pow(2).mean()
chain = []
fn = e.grad_fn
while fn is not None:
    chain.append(repr(fn).split(" object")[0].lstrip("<"))
    fn = fn.next_functions[0][0] if fn.next_functions else None
print("chain", chain)
acc = e.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions[0][0]
print("mul inputs", [repr(f).split(" object")[0].lstrip("<") for f, _ in acc.next_functions[0][0].next_functions])
leaf_node = acc.next_functions[0][0].next_functions[0][0]
print("leaf variable", leaf_node.variable is p_a, leaf_node.variable)
print("is_leaf", inp.is_leaf, h.is_leaf, model[0].weight.is_leaf, out.requires_grad)

h.retain_grad()
out2 = model[2](model[1](h))
out2.sum().backward()
print("retained", h.grad)
print("non-retained", r.grad is None if False else "skip")

# --- torch.autograd.grad ---
xs = torch.linspace(-1, 1, 5, requires_grad=True)
ys = xs ** 3
(dy,) = torch.autograd.grad(ys, xs, grad_outputs=torch.ones_like(ys), retain_graph=True)
print("dy/dx", dy)
(dy2,) = torch.autograd.grad(ys.sum(), xs, create_graph=True)
(d2,) = torch.autograd.grad(dy2.sum(), xs)
print("d2y/dx2", d2)
u = torch.tensor(1.0, requires_grad=True)
v = torch.tensor(2.0, requires_grad=True)
gu, gv = torch.autograd.grad(u * 3, [u, v], allow_unused=True)
print("allow_unused", gu, gv)
try:
    torch.autograd.grad(u * 3, [u, v])
except RuntimeError as e:
    print("unused error", isinstance(e, RuntimeError))
f = u ** 2
f.backward(retain_graph=True)
f.backward()
print("two backwards", u.grad)
try:
    g = v * v
    g.backward()
    g.backward()
except RuntimeError as e:
    print("freed graph", isinstance(e, RuntimeError))

# --- in-place on a leaf ---
leaf = torch.randn(3, requires_grad=True)
try:
    leaf += 1
except RuntimeError as e:
    print("in-place leaf", isinstance(e, RuntimeError), "leaf Variable" in str(e))
with torch.no_grad():
    leaf += 1
print("under no_grad", leaf.requires_grad, leaf.is_leaf)
try:
    s = leaf.sigmoid()
    s.mul_(2)
    s.sum().backward()
except RuntimeError as e:
    print("modified by in-place", isinstance(e, RuntimeError), "inplace operation" in str(e))
e2 = leaf * 2
e2.add_(1)
e2.sum().backward()
print("add_ after mul is fine", leaf.grad)

# --- parameters_to_vector ---
net = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
vec = parameters_to_vector(net.parameters())
print("vector", vec.shape, vec.requires_grad, vec.grad_fn is not None)
vector_to_parameters(torch.arange(vec.numel(), dtype=torch.float32) / 10, net.parameters())
print("restored", net[0].weight, net[2].bias)
print("norm", parameters_to_vector(net.parameters()).norm().item())
flat_grad = None
net(torch.ones(4, 3)).sum().backward()
flat_grad = torch.cat([p.grad.view(-1) for p in net.parameters()])
print("flat grad", flat_grad)

# --- save / load ---
buffer = io.BytesIO()
torch.save(net.state_dict(), buffer)
buffer.seek(0)
state = torch.load(buffer)
print("keys", list(state.keys()), state["0.weight"].dtype)
net2 = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
print(net2.load_state_dict(state))
print("same output", torch.equal(net(torch.ones(1, 3)), net2(torch.ones(1, 3))))
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "model.pth")
    torch.save({"epoch": 3, "model": net.state_dict(), "note": "ok", "lr": 0.01}, path)
    ck = torch.load(path, weights_only=True)
    print("file", ck["epoch"], ck["note"], ck["lr"], ck["model"]["2.bias"])

# --- numpy bridge ---
t = torch.ones(4)
n = t.numpy()
t.add_(1)
print("shared", n, n.dtype)
arr = np.arange(4, dtype=np.float32)
tt = torch.from_numpy(arr)
np.add(arr, 1, out=arr)
print("from_numpy", tt)
copied = torch.tensor(arr)
arr[0] = 100
print("copied", copied, tt)
print("detach numpy", torch.ones(2, requires_grad=True).detach().numpy())
try:
    torch.ones(2, requires_grad=True).numpy()
except RuntimeError as e:
    print("numpy of requires_grad", isinstance(e, RuntimeError), "detach" in str(e))

# --- masked_fill then softmax ---
scores = torch.randn(2, 4)
mask = torch.tensor([[True, True, False, False], [True, True, True, False]])
att = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
print(att)
print(att.sum(-1), torch.isinf(scores.masked_fill(~mask, float("-inf"))).sum().item())
causal = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
print(torch.zeros(3, 3).masked_fill(causal, float("-inf")).softmax(-1))
print(torch.where(mask, scores, torch.tensor(0.0)))
print(torch.cat([scores, scores], 0).shape, torch.stack([scores, scores], 1).shape,
      [c.shape for c in scores.chunk(3, dim=1)], [s.shape for s in scores.split([1, 3], dim=1)])
