"""TorchScript in a small model, as the "fuse your activations with torch.jit.script" tutorials write
it: scripted elementwise functions (a tanh-GELU, bias + GELU, a fused bias-residual-LayerNorm
helper), a SwiGLU feed-forward submodule turned into a ScriptModule with torch.jit.script inside a
plain nn.Module (with a Final constant, an @torch.jit.export method and an @torch.jit.ignore
helper), a traced function and a traced module, torch.jit.fork / wait, is_scripting branches that
give the same value in both worlds, and a short training loop through the scripted pieces whose
losses and gradients are compared with the eager modules'. The numbers must not depend on
whether TorchScript compiled anything."""
import math
from typing import List

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


@torch.jit.script
def gelu_tanh(x: Tensor) -> Tensor:
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


@torch.jit.script
def bias_gelu(bias: Tensor, y: Tensor) -> Tensor:
    x = bias + y
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421356237))


@torch.jit.script
def bias_residual_norm(x: Tensor, bias: Tensor, residual: Tensor, eps: float) -> Tensor:
    h = x + bias + residual
    mu = h.mean(-1, keepdim=True)
    var = (h - mu).pow(2).mean(-1, keepdim=True)
    return (h - mu) / torch.sqrt(var + eps)


@torch.jit.script
def softclip(x: Tensor, limit: float) -> Tensor:
    if torch.jit.is_scripting():
        return limit * torch.tanh(x / limit)
    return limit * torch.tanh(x / limit)


@torch.jit.script
def moments(xs: List[Tensor]) -> List[float]:
    out: List[float] = []
    for x in xs:
        out.append(float(x.mean().item()))
        out.append(float(x.std().item()))
    return out


x = torch.randn(4, 8)
print("gelu_tanh", f"{gelu_tanh(x).sum().item():.6f}", f"{(gelu_tanh(x) - F.gelu(x, approximate='tanh')).abs().max().item():.2e}")
b = torch.randn(8)
print("bias_gelu", f"{bias_gelu(b, x).sum().item():.6f}", f"{(bias_gelu(b, x) - F.gelu(x + b)).abs().max().item():.2e}")
print("norm", f"{bias_residual_norm(x, b, x, 1e-5).std().item():.6f}")
print("softclip", [round(v, 5) for v in softclip(torch.tensor([-10.0, 0.5, 10.0]), 3.0).tolist()])
print("moments", [round(v, 5) for v in moments([x, b])])
print("is_scripting outside", torch.jit.is_scripting(), "is_tracing", torch.jit.is_tracing())


class SwiGLU(nn.Module):
    hidden: torch.jit.Final[int]

    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.hidden = hidden
        self.w1 = nn.Linear(d, hidden, bias=False)
        self.w3 = nn.Linear(d, hidden, bias=False)
        self.w2 = nn.Linear(hidden, d, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))

    @torch.jit.export
    def gate(self, x: Tensor) -> Tensor:
        return torch.sigmoid(self.w1(x)).mean(-1)

    @torch.jit.ignore
    def describe(self) -> str:
        return f"SwiGLU(hidden={self.hidden})"


class Block(nn.Module):
    def __init__(self, d: int, hidden: int, script: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        ffn = SwiGLU(d, hidden)
        self.ffn = torch.jit.script(ffn) if script else ffn
        self.out = nn.Linear(d, 3)

    def forward(self, x):
        h = x + self.ffn(self.norm(x))
        return self.out(gelu_tanh(h).mean(1))


torch.manual_seed(1)
scripted = Block(16, 32, script=True)
torch.manual_seed(1)
eager = Block(16, 32, script=False)
print("same init", all(torch.equal(a, b) for a, b in zip(scripted.state_dict().values(), eager.state_dict().values())))
print("describe", scripted.ffn.describe(), "hidden", scripted.ffn.hidden)

torch.manual_seed(2)
X = torch.randn(64, 5, 16)
y = (X[:, :, :3].sum(1)).argmax(-1)
print("gate", f"{scripted.ffn.gate(X[:2]).sum().item():.6f}", f"{eager.ffn.gate(X[:2]).sum().item():.6f}")


def train(model, steps=30):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    losses = []
    for step in range(steps):
        loss = F.cross_entropy(model(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


ls, le = train(scripted), train(eager)
print("scripted losses", [round(v, 5) for v in ls[::10]], f"last {ls[-1]:.6f}")
print("eager losses", [round(v, 5) for v in le[::10]], f"last {le[-1]:.6f}")
print("max loss diff", f"{max(abs(a - b) for a, b in zip(ls, le)):.2e}")
with torch.no_grad():
    acc = (scripted(X).argmax(-1) == y).float().mean().item()
print("accuracy", f"{acc:.4f}")

# ---- tracing -------------------------------------------------------------------------------


def poly_features(x):
    return torch.cat([x, x * x, torch.sin(x)], dim=-1)


traced_fn = torch.jit.trace(poly_features, (torch.randn(3, 2),))
z = torch.randn(5, 2)
print("traced fn", tuple(traced_fn(z).shape), torch.allclose(traced_fn(z), poly_features(z)))
eager.eval()
traced = torch.jit.trace(eager, (X[:4],))
with torch.no_grad():
    print("traced module", torch.allclose(traced(X[:8]), eager(X[:8]), atol=1e-6), f"{traced(X[:8]).sum().item():.5f}")

# ---- fork / wait ---------------------------------------------------------------------------


def branch(x: Tensor, k: int) -> Tensor:
    return torch.matmul(x, x.transpose(-1, -2)).sum() * k


futures = [torch.jit.fork(branch, X[i], i + 1) for i in range(4)]
vals = [torch.jit.wait(f) for f in futures]
print("fork/wait", [round(v.item(), 4) for v in vals])
print("annotate", torch.jit.annotate(List[int], []), "math", round(math.sqrt(2), 6))
