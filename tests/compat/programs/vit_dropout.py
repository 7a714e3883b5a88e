"""A ViT written out by hand, as "vision transformer from scratch" posts do, trained with dropout
on: patch embedding by a strided Conv2d then flatten(2).transpose(1, 2) (a transposed view), cls
token and position embedding added to it, pos_drop, multi-head self-attention with attn_drop and
proj_drop, a GELU MLP with dropout, stochastic depth (DropPath) and a mean-pooled head. The
dropout masks drawn on the transposed patch tokens follow their memory layout, as in PyTorch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DropPath(nn.Module):
    def __init__(self, p=0.0):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        keep = 1 - self.p
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask / keep


class Attention(nn.Module):
    def __init__(self, dim, heads=4, attn_drop=0.1, proj_drop=0.1):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = self.attn_drop(attn.softmax(dim=-1))
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(x))


class Block(nn.Module):
    def __init__(self, dim, heads, drop_path):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.drop_path = DropPath(drop_path)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Dropout(0.1), nn.Linear(2 * dim, dim),
                                 nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.drop_path(self.attn(self.norm1(x)))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class ViT(nn.Module):
    def __init__(self, img=16, patch=4, dim=32, depth=2, heads=4, classes=5):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        n = (img // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.pos_drop = nn.Dropout(0.1)
        self.blocks = nn.Sequential(*[Block(dim, heads, 0.1 * i / max(1, depth - 1)) for i in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)  # B, N, C: a transposed view
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.pos_drop(x + self.pos)
        x = self.norm(self.blocks(x))
        return self.head(x[:, 1:].mean(dim=1) + x[:, 0])


x = torch.randn(32, 3, 16, 16)
y = torch.randint(0, 5, (32,))
model = ViT()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
for step in range(12):
    model.train()
    loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")

tokens = model.patch(x[:2]).flatten(2).transpose(1, 2)
pos_added = tokens + model.pos[:, 1:]
print("tokens", tuple(pos_added.shape), pos_added.is_contiguous(), pos_added.stride())
torch.manual_seed(5)
print("dropped", int((F.dropout(pos_added, 0.3) == 0).sum()))
model.eval()
with torch.no_grad():
    pred = model(x).argmax(1)
print("train acc", f"{(pred == y).float().mean().item():.4f}")
