"""The SimCLR NT-Xent loss as the blog posts write it: two augmented views (noise + random
masking), an encoder + projection head, F.normalize, a similarity matrix masked with
torch.eye(...).bool() and masked_fill(-9e15) or fill_diagonal_(-inf), positives picked with
torch.roll / torch.cat([arange(N, 2N), arange(0, N)]), cross_entropy with temperature and
label_smoothing, top-1/top-5 accuracy via argsort, and the InfoNCE form with
F.cosine_similarity and logsumexp."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_classes, N = 4, 64
centres = torch.randn(n_classes, 10) * 2
labels = torch.randint(0, n_classes, (N,))
data = centres[labels] + 0.5 * torch.randn(N, 10)


def augment(x):
    noise = 0.3 * torch.randn_like(x)
    keep = (torch.rand_like(x) > 0.2).float()
    return (x + noise) * keep


class SimCLR(nn.Module):
    def __init__(self, hidden_dim=32, out_dim=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(10, hidden_dim, bias=False), nn.BatchNorm1d(hidden_dim), nn.ReLU())
        self.projector = nn.Sequential(nn.Linear(hidden_dim, hidden_dim), nn.ReLU(inplace=True),
                                       nn.Linear(hidden_dim, out_dim))

    def forward(self, x):
        return self.projector(self.encoder(x))


def info_nce_loss(feats, temperature=0.5, mode="train"):
    cos_sim = F.cosine_similarity(feats[:, None, :], feats[None, :, :], dim=-1)
    self_mask = torch.eye(cos_sim.shape[0], dtype=torch.bool, device=cos_sim.device)
    cos_sim.masked_fill_(self_mask, -9e15)
    pos_mask = self_mask.roll(shifts=cos_sim.shape[0] // 2, dims=0)
    cos_sim = cos_sim / temperature
    nll = -cos_sim[pos_mask] + torch.logsumexp(cos_sim, dim=-1)
    nll = nll.mean()
    comb_sim = torch.cat([cos_sim[pos_mask][:, None], cos_sim.masked_fill(pos_mask, -9e15)], dim=-1)
    sim_argsort = comb_sim.argsort(dim=-1, descending=True).argmin(dim=-1)
    return nll, (sim_argsort == 0).float().mean(), (sim_argsort < 5).float().mean(), 1 + sim_argsort.float().mean()


def nt_xent(z1, z2, temperature=0.5, label_smoothing=0.0):
    batch_size = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = torch.matmul(z, z.T) / temperature
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(batch_size, 2 * batch_size), torch.arange(0, batch_size)])
    return F.cross_entropy(sim, targets, label_smoothing=label_smoothing)


model = SimCLR()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30, eta_min=5e-5)
for epoch in range(30):
    perm = torch.randperm(N)
    for i in range(0, N, 32):
        x = data[perm[i:i + 32]]
        z1, z2 = model(augment(x)), model(augment(x))
        loss = nt_xent(z1, z2, temperature=0.2)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    scheduler.step()
    if epoch % 6 == 0 or epoch == 29:
        model.eval()
        with torch.no_grad():
            feats = torch.cat([model(augment(data[:32])), model(augment(data[:32]))], dim=0)
            nll, top1, top5, mean_pos = info_nce_loss(feats)
        model.train()
        print(f"epoch {epoch} ntxent {loss.item():.5f} nll {nll.item():.5f} top1 {top1.item():.4f} "
              f"top5 {top5.item():.4f} meanpos {mean_pos.item():.3f}")

assert top5.item() > 0.3 and loss.item() < 3.0
z1, z2 = torch.randn(6, 5), torch.randn(6, 5)
print("smooth", nt_xent(z1, z2, 0.1, 0.1).item(), nt_xent(z1, z2, 0.1).item())
a = torch.randn(4, 5)
print(F.normalize(a, p=1, dim=0).sum(0).tolist())
print(F.normalize(torch.zeros(2, 3)).tolist())
print(F.cosine_similarity(a, a.flip(0), dim=1, eps=1e-8).tolist())
print(F.pairwise_distance(a, a.flip(0)).tolist())
m = torch.ones(3, 3)
m.fill_diagonal_(0)
print(m, torch.ones(3, 4).fill_diagonal_(5, wrap=False).tolist())
sim = torch.randn(4, 4)
print(sim.masked_fill(torch.eye(4).bool(), float("-inf")).softmax(-1).diagonal().tolist())
print(F.cross_entropy(torch.randn(3, 5), torch.tensor([1, 0, 4]), label_smoothing=0.2, reduction="none").tolist())
probs_t = torch.softmax(torch.randn(3, 5), -1)
print(F.cross_entropy(torch.randn(3, 5), probs_t, label_smoothing=0.1).item())
