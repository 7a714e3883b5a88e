"""The less common layers and utilities tutorials still use: nn.Bilinear, nn.EmbeddingBag (sum,
mean, max, offsets and per_sample_weights), F.unfold/F.fold as im2col and back, a
probabilistic regressor trained on nn.GaussianNLLLoss and a count model on nn.PoissonNLLLoss,
F.gumbel_softmax (straight-through hard samples), torch.linalg inv/solve/det in a least-squares
fit, activation checkpointing with torch.utils.checkpoint and weight normalisation with
nn.utils.parametrizations.weight_norm and nn.utils.weight_norm."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(17)

# Bilinear interaction layer.
bil = nn.Bilinear(4, 3, 2)
a, b = torch.randn(5, 4), torch.randn(5, 3)
out = bil(a, b)
manual = torch.einsum("ni,kij,nj->nk", a, bil.weight, b) + bil.bias
assert torch.allclose(out, manual, atol=1e-5)
print("bilinear", [round(v, 5) for v in out[0].tolist()])

# EmbeddingBag: a bag-of-words text classifier input.
bag = nn.EmbeddingBag(10, 3, mode="mean")
text = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offsets = torch.tensor([0, 4])
print("bag mean", [[round(v, 5) for v in r] for r in bag(text, offsets).tolist()])
bag_sum = nn.EmbeddingBag.from_pretrained(bag.weight.detach().clone(), mode="sum", freeze=False)
w = torch.rand(8)
print("bag weighted", [[round(v, 5) for v in r] for r in bag_sum(text, offsets, per_sample_weights=w).tolist()])
bag_max = nn.EmbeddingBag(10, 3, mode="max")
print("bag max 2d", [[round(v, 5) for v in r] for r in bag_max(torch.tensor([[1, 2], [3, 3]])).tolist()])

# unfold / fold: a convolution written as im2col + matmul, and fold(unfold(x)) counting overlaps.
x = torch.randn(2, 3, 6, 6)
conv = nn.Conv2d(3, 4, 3, padding=1, stride=2)
cols = F.unfold(x, kernel_size=3, padding=1, stride=2)
y = (conv.weight.view(4, -1) @ cols + conv.bias.view(1, 4, 1)).view(2, 4, 3, 3)
assert torch.allclose(y, conv(x), atol=1e-5)
print("unfold", list(cols.shape), f"{cols.sum().item():.5f}")
ones = torch.ones(1, 1, 4, 4)
print("fold overlaps", F.fold(F.unfold(ones, 2, stride=1), (4, 4), 2, stride=1)[0, 0].tolist())
print("nn.Unfold", list(nn.Unfold(kernel_size=(2, 3), dilation=1)(x).shape),
      "nn.Fold", list(nn.Fold(output_size=(6, 6), kernel_size=2, stride=2)(F.unfold(x, 2, stride=2)).shape))

# Heteroscedastic regression: the network predicts a mean and a variance.
X = torch.linspace(-2, 2, 128).unsqueeze(1)
Y = torch.sin(2 * X) + (0.05 + 0.3 * X.abs()) * torch.randn_like(X)
net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.Adam(net.parameters(), lr=0.02)
gnll = nn.GaussianNLLLoss()
for step in range(150):
    mu, raw = net(X).chunk(2, dim=1)
    loss = gnll(mu, Y, F.softplus(raw) + 1e-4)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 0 or step == 149:
        print(f"gaussian nll step {step} {loss.item():.5f}")
assert loss.item() < 0.5

counts = torch.round(torch.exp(0.5 + X.squeeze(1)) + 0.5 * torch.randn(128)).clamp(min=0)
rate = nn.Linear(1, 1)
opt = torch.optim.SGD(rate.parameters(), lr=0.05)
pnll = nn.PoissonNLLLoss(log_input=True)
for step in range(200):
    loss = pnll(rate(X).squeeze(1), counts)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"poisson nll {loss.item():.5f} weight {rate.weight.item():.4f} bias {rate.bias.item():.4f}",
      f"no-log full {nn.PoissonNLLLoss(log_input=False, full=True)(counts.clamp(min=0.5), counts).item():.5f}")

# Gumbel-softmax: soft samples sum to one, hard ones are one-hot with the soft gradient.
logits = torch.randn(4, 5, requires_grad=True)
soft = F.gumbel_softmax(logits, tau=0.5)
hard = F.gumbel_softmax(logits, tau=1.0, hard=True)
assert torch.allclose(soft.sum(-1), torch.ones(4)) and torch.equal(hard.sum(-1), torch.ones(4))
(hard * torch.arange(5.0)).sum().backward()
print("gumbel hard argmax", hard.argmax(-1).tolist(), "grad norm", round(logits.grad.norm().item(), 5))

# Linear algebra: normal equations solved three ways.
A = torch.randn(50, 3, dtype=torch.float64)
beta = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
t = A @ beta + 0.01 * torch.randn(50, dtype=torch.float64)
G = A.T @ A
b1 = torch.linalg.solve(G, A.T @ t)
b2 = torch.linalg.inv(G) @ (A.T @ t)
assert torch.allclose(b1, b2) and torch.allclose(b1, beta, atol=0.01)
print("solve", [round(v, 8) for v in b1.tolist()], f"det {torch.linalg.det(G).item():.6f}",
      f"logdet {torch.logdet(G).item():.8f}")
M = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
torch.linalg.det(M).backward()
assert torch.allclose(M.grad, torch.linalg.det(M) * torch.linalg.inv(M).T)
print("det grad", [round(v, 8) for v in M.grad.flatten().tolist()[:3]])


# Activation checkpointing gives the same gradients as the plain forward.
class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.GELU()) for _ in range(4)])

    def forward(self, x, use_ckpt):
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if use_ckpt else blk(x)
        return x


deep = Deep()
inp = torch.randn(6, 8, requires_grad=True)
grads = []
for use in (False, True):
    deep.zero_grad()
    inp.grad = None
    deep(inp, use).pow(2).sum().backward()
    grads.append((inp.grad.clone(), deep.blocks[0][0].weight.grad.clone()))
assert torch.allclose(grads[0][0], grads[1][0]) and torch.allclose(grads[0][1], grads[1][1])
print("checkpoint grad", [round(v, 6) for v in grads[1][0][0, :3].tolist()])

# Weight normalisation: weight = g * v / ||v||, g and v trained.
lin = nn.utils.parametrizations.weight_norm(nn.Linear(4, 3))
print("parametrized", sorted(n for n, _ in lin.named_parameters()))
g = lin.parametrizations.weight.original0
v = lin.parametrizations.weight.original1
assert torch.allclose(lin.weight, g * v / v.norm(dim=1, keepdim=True))
old = nn.utils.weight_norm(nn.Linear(4, 3), name="weight")
print("old-style", sorted(n for n, _ in old.named_parameters()))
opt = torch.optim.SGD(list(lin.parameters()) + list(old.parameters()), lr=0.1)
inp = torch.randn(10, 4)
for _ in range(20):
    loss = (lin(inp) - 1).pow(2).mean() + (old(inp) + 1).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"weight norm loss {loss.item():.6f} g {[round(v, 5) for v in g.flatten().tolist()]}")
