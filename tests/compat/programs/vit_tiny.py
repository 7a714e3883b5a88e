"""A ViT-tiny as the blog posts write it: patchify with a strided Conv2d (and the same with
unfold), a cls token and position embedding as nn.Parameter initialised with trunc_normal_,
nn.TransformerEncoder(batch_first=True, norm_first=True, activation="gelu"), a LayerNorm +
Linear head, AdamW with cosine schedule and warmup via LambdaLR, trained on synthetic images."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)


class PatchEmbed(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)

    def forward(self, x):
        x = self.proj(x)  # B, E, H/P, W/P
        x = x.flatten(2).transpose(1, 2)  # B, N, E
        return x


class ViT(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, num_classes=4, embed_dim=32, depth=2,
                 num_heads=4, mlp_ratio=2.0, dropout=0.0):
        super().__init__()
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        self.pos_drop = nn.Dropout(p=dropout)
        layer = nn.TransformerEncoderLayer(d_model=embed_dim, nhead=num_heads,
                                           dim_feedforward=int(embed_dim * mlp_ratio), dropout=dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)
        nn.init.trunc_normal_(self.pos_embed, std=.02)
        nn.init.trunc_normal_(self.cls_token, std=.02)
        self.apply(self._init_weights)

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def forward(self, x):
        B = x.shape[0]
        x = self.patch_embed(x)
        cls_tokens = self.cls_token.expand(B, -1, -1)
        x = torch.cat((cls_tokens, x), dim=1)
        x = x + self.pos_embed
        x = self.pos_drop(x)
        x = self.encoder(x)
        x = self.norm(x)
        return self.head(x[:, 0])


# Synthetic data: the class is which quadrant holds a bright blob.
N = 128
images = torch.randn(N, 3, 16, 16) * 0.3
labels = torch.randint(0, 4, (N,))
for i in range(N):
    q = labels[i].item()
    r, c = (q // 2) * 8, (q % 2) * 8
    images[i, :, r:r + 8, c:c + 8] += 1.0

loader = DataLoader(TensorDataset(images, labels), batch_size=32, shuffle=True)
model = ViT()
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"params: {n_params}")
print("first keys", list(model.state_dict().keys())[:8])

# unfold gives the same patches as the conv's receptive fields
patches = F.unfold(images[:2], kernel_size=4, stride=4)  # B, C*P*P, N
w = model.patch_embed.proj.weight.reshape(32, -1)
via_unfold = (w @ patches + model.patch_embed.proj.bias[:, None]).transpose(1, 2)
via_conv = model.patch_embed(images[:2])
print("unfold == conv", torch.allclose(via_unfold, via_conv, atol=1e-5), tuple(patches.shape))
p2 = images[:2].unfold(2, 4, 4).unfold(3, 4, 4)
print("tensor.unfold shape", tuple(p2.shape))

epochs = 6
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
total_steps = epochs * len(loader)
warmup = 4


def lr_lambda(step):
    if step < warmup:
        return float(step + 1) / warmup
    progress = (step - warmup) / max(1, total_steps - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
history = []
for epoch in range(epochs):
    model.train()
    running, correct = 0.0, 0
    for xb, yb in loader:
        optimizer.zero_grad(set_to_none=True)
        out = model(xb)
        loss = criterion(out, yb)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        running += loss.item() * xb.size(0)
        correct += (out.argmax(dim=1) == yb).sum().item()
    history.append(running / N)
    print(f"epoch {epoch} loss {running / N:.5f} acc {correct / N:.3f} lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    logits = model(images[:8])
    probs = logits.softmax(dim=-1)
print("probs", probs[0].tolist())
print("pred", logits.argmax(-1).tolist())
assert history[-1] < history[0] and torch.allclose(probs.sum(-1), torch.ones(8))
