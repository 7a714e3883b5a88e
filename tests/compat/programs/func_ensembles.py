"""The torch.func tutorials ("Model ensembling", "Per-sample-gradients", "Jacobians, Hessians,
hvp, vhp, and more", "Neural Tangent Kernels") at toy size: stack_module_state + functional_call +
vmap over a set of models (same minibatch and different minibatches), per-sample gradients with
vmap(grad(compute_loss), in_dims=(None, None, 0, 0)) checked against a loop, jacrev / jacfwd /
hessian of a small function checked against torch.autograd.functional, hvp as jvp of grad, and the
empirical NTK of a tiny MLP by jacobian contraction."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, stack_module_state, vjp, vmap

torch.manual_seed(0)


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


print("== model ensembling ==")
num_models = 4
data = torch.randn(6, 5, 8)
minibatch = data[0]
models = [SimpleMLP() for _ in range(num_models)]
predictions_diff = [model(data[i]) for i, model in enumerate(models[:4])]
predictions_same = [model(minibatch) for model in models]
params, buffers = stack_module_state(models)
print(sorted(params.keys()), params["fc1.weight"].shape, params["fc1.weight"].requires_grad, len(buffers))
base_model = copy.deepcopy(models[0])


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


out_same = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
out_diff = vmap(fmodel)(params, buffers, data[:num_models])
print(out_same.shape, out_diff.shape)
print("same minibatch matches loop:", torch.allclose(out_same, torch.stack(predictions_same), atol=1e-6))
print("different minibatches match loop:", torch.allclose(out_diff, torch.stack(predictions_diff), atol=1e-6))
print("ensemble mean[0]", [round(v, 5) for v in out_same.mean(0)[0].tolist()])
ens_loss = out_same.pow(2).mean()
ens_loss.backward()
print("grad flows to stacked params:", params["fc2.bias"].grad.shape, f"{params['fc2.bias'].grad.abs().sum().item():.6f}")

print("== per-sample gradients ==")
torch.manual_seed(1)
model = SimpleMLP()
batch_size = 8
x = torch.randn(batch_size, 8)
targets = torch.randint(4, (batch_size,))
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.cross_entropy(predictions, targets)


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, x, targets)


def compute_grad(sample, target):
    model.zero_grad()
    loss = F.cross_entropy(model(sample.unsqueeze(0)), target.unsqueeze(0))
    return torch.autograd.grad(loss, list(model.parameters()))


loop_grads = [compute_grad(x[i], targets[i]) for i in range(batch_size)]
loop_grads = zip(*loop_grads)
loop_grads = [torch.stack(shards) for shards in loop_grads]
for (name, g), lg in zip(ft_per_sample_grads.items(), loop_grads):
    print(name, tuple(g.shape), torch.allclose(g, lg, atol=3e-6, rtol=1e-5))
norms = torch.stack([g.flatten(1).norm(dim=1) for g in ft_per_sample_grads.values()]).norm(dim=0)
print("per-sample grad norms", [f"{v:.5f}" for v in norms.tolist()])
# DP-SGD style: clip each sample's gradient to norm 1 and average
clip = (1.0 / (norms + 1e-6)).clamp(max=1.0)
clipped = {k: (g * clip.view(-1, *([1] * (g.dim() - 1)))).mean(0) for k, g in ft_per_sample_grads.items()}
print("clipped mean grad fc1.bias[:4]", [f"{v:.6f}" for v in clipped["fc1.bias"][:4].tolist()])
gv = grad_and_value(compute_loss)(params, buffers, x[0], targets[0])
print("grad_and_value loss", f"{gv[1].item():.6f}", "keys", list(gv[0].keys()))

print("== jacobians and hessians ==")
torch.manual_seed(2)
W = torch.randn(3, 3, dtype=torch.float64)
b = torch.randn(3, dtype=torch.float64)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


xj = torch.randn(3, dtype=torch.float64)
jac_rev = jacrev(predict, argnums=2)(W, b, xj)
jac_fwd = jacfwd(predict, argnums=2)(W, b, xj)
jac_ref = torch.autograd.functional.jacobian(lambda v: predict(W, b, v), xj)
print(jac_rev.shape, torch.allclose(jac_rev, jac_ref), torch.allclose(jac_fwd, jac_ref))
print(jac_rev)
jw, jb = jacrev(predict, argnums=(0, 1))(W, b, xj)
print("jac wrt weight/bias", tuple(jw.shape), tuple(jb.shape))
xb = torch.randn(5, 3, dtype=torch.float64)
batched = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(W, b, xb)
print("batched jacobian", tuple(batched.shape), torch.allclose(batched[2], jacrev(predict, argnums=2)(W, b, xb[2])))


def f(x):
    return x.sin().sum() + (x ** 3).prod()


xh = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
H = hessian(f)(xh)
H_ref = torch.autograd.functional.hessian(f, xh)
print("hessian", torch.allclose(H, H_ref))
print(H)
tangent = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64)


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


print("hvp", hvp(f, (xh,), (tangent,)), "ref", H @ tangent)
out, vjp_fn = vjp(torch.sin, xh)
print("vjp", vjp_fn(torch.ones(3, dtype=torch.float64))[0], xh.cos())
val, jv = jvp(lambda v: v.exp().cumsum(0), (xh,), (tangent,))
print("jvp", val, jv)

print("== empirical NTK ==")
torch.manual_seed(3)
net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1)).double()
nparams = {k: v.detach() for k, v in net.named_parameters()}


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


def empirical_ntk(fnet_single, params, x1, x2):
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = [j.flatten(2) for j in jac1.values()]
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]
    result = torch.stack([torch.einsum("Naf,Mbf->NMab", j1, j2) for j1, j2 in zip(jac1, jac2)])
    return result.sum(0)


x_train = torch.randn(5, 2, dtype=torch.float64)
x_test = torch.randn(3, 2, dtype=torch.float64)
ntk = empirical_ntk(fnet_single, nparams, x_train, x_test)
print("ntk", tuple(ntk.shape))
print(ntk.squeeze(-1).squeeze(-1))
K = empirical_ntk(fnet_single, nparams, x_train, x_train).squeeze(-1).squeeze(-1)
print("gram symmetric", torch.allclose(K, K.T), "psd", bool(torch.linalg.eigvalsh(K).min() > -1e-10))
