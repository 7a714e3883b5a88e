"""Weight initialisation by torch.nn.init, as model code calls it from reset_parameters or
model.apply: uniform_, normal_, trunc_normal_, constant_, xavier_uniform_/xavier_normal_,
kaiming_uniform_/kaiming_normal_ (fan_in/fan_out, relu/leaky_relu), orthogonal_, eye_,
dirac_, sparse_ and calculate_gain; every printed draw must equal PyTorch's with the same seed,
and the statistics must match the formulas."""
import math

import torch
import torch.nn as nn


def summary(name, t):
    print(f"{name}: mean {t.mean().item():.6f} std {t.std().item():.6f} first {[round(v, 6) for v in t.flatten()[:3].tolist()]}")


torch.manual_seed(0)
w = torch.empty(256, 128)
nn.init.uniform_(w, -0.1, 0.1)
summary("uniform", w)
nn.init.normal_(w, 0.0, 0.02)
summary("normal", w)
nn.init.trunc_normal_(w, mean=0.0, std=0.02, a=-0.04, b=0.04)
assert w.abs().max() <= 0.04
summary("trunc_normal", w)
nn.init.trunc_normal_(w, std=1.0)
summary("trunc_normal default", w)
nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("tanh"))
summary("xavier_uniform", w)
nn.init.xavier_normal_(w)
summary("xavier_normal", w)
assert abs(w.std().item() - math.sqrt(2 / (256 + 128))) < 0.002
nn.init.kaiming_uniform_(w, a=math.sqrt(5))
summary("kaiming_uniform a=sqrt5", w)
nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
summary("kaiming_normal fan_out", w)
nn.init.kaiming_uniform_(w, nonlinearity="leaky_relu", a=0.2)
summary("kaiming_uniform leaky", w)

q = torch.empty(6, 10)
nn.init.orthogonal_(q)
print("orthogonal", [round(v, 6) for v in q[0, :4].tolist()])
assert torch.allclose(q @ q.T, torch.eye(6), atol=1e-5)
q2 = torch.empty(12, 4)
nn.init.orthogonal_(q2, gain=2.0)
assert torch.allclose(q2.T @ q2, 4 * torch.eye(4), atol=1e-4)
print("orthogonal tall", [round(v, 6) for v in q2[:, 0].tolist()[:4]])

conv = torch.empty(4, 2, 3, 3)
nn.init.dirac_(conv)
print("dirac sum", conv.sum().item(), "center", conv[1, 1, 1, 1].item())
e = torch.empty(3, 5)
nn.init.eye_(e)
print("eye", e.tolist())
sp = torch.empty(10, 6)
nn.init.sparse_(sp, sparsity=0.3, std=0.01)
print("sparse zeros per column", (sp == 0).sum(0).tolist())
nn.init.constant_(e, 0.3)
nn.init.ones_(sp)
nn.init.zeros_(conv)
print("gains", [round(nn.init.calculate_gain(n, p), 6) for n, p in
                [("linear", None), ("relu", None), ("leaky_relu", 0.1), ("tanh", None), ("selu", None)]])


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.net(x)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=0.02)
        nn.init.constant_(m.bias, 0.01)


torch.manual_seed(1)
model = MLP()
default = [round(v, 6) for v in model.net[0].weight[0, :3].tolist()]
model.apply(init_weights)
print("default linear init", default, "after apply", [round(v, 6) for v in model.net[2].weight[0, :3].tolist()])
out = model(torch.randn(5, 8))
print(f"output sum {out.sum().item():.6f}")
