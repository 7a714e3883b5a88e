"""Siamese and triplet networks as the metric-learning posts write them: a shared embedding net,
the contrastive loss written by hand (label * d^2 + (1 - label) * clamp(margin - d, min=0)^2 with
F.pairwise_distance), nn.TripletMarginLoss(margin, p=2) and F.triplet_margin_with_distance_loss
with a cosine distance, nn.CosineEmbeddingLoss, nn.MarginRankingLoss, online hard-negative mining
with torch.cdist + masked_fill + min/max over rows, and retrieval accuracy by cdist + topk."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_cls, per = 5, 24
centres = torch.randn(n_cls, 16) * 1.5
labels = torch.arange(n_cls).repeat_interleave(per)
X = centres[labels] + torch.randn(n_cls * per, 16)


class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(16, 32), nn.PReLU(), nn.Linear(32, 32), nn.PReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.fc(x)


class SiameseNet(nn.Module):
    def __init__(self, embedding_net):
        super().__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2):
        return self.embedding_net(x1), self.embedding_net(x2)

    def get_embedding(self, x):
        return self.embedding_net(x)


class ContrastiveLoss(nn.Module):
    def __init__(self, margin):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin
        self.eps = 1e-9

    def forward(self, output1, output2, target, size_average=True):
        distances = (output2 - output1).pow(2).sum(1)
        losses = 0.5 * (target.float() * distances +
                        (1 + -1 * target).float() * F.relu(self.margin - (distances + self.eps).sqrt()).pow(2))
        return losses.mean() if size_average else losses.sum()


def make_pairs(g):
    i = torch.randint(0, len(X), (64,), generator=g)
    same = torch.rand(64, generator=g) < 0.5
    j = torch.where(same, labels[i] * per + torch.randint(0, per, (64,), generator=g),
                    torch.randint(0, len(X), (64,), generator=g))
    return X[i], X[j], (labels[i] == labels[j]).long()


siam = SiameseNet(EmbeddingNet())
crit = ContrastiveLoss(1.0)
opt = torch.optim.Adam(siam.parameters(), lr=1e-2)
g = torch.Generator().manual_seed(5)
for step in range(60):
    a, b, t = make_pairs(g)
    o1, o2 = siam(a, b)
    loss = crit(o1, o2, t)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 0:
        print(f"siamese step {step} loss {loss.item():.5f} pd {F.pairwise_distance(o1, o2).mean().item():.5f}")


def batch_hard_triplet(emb, y, margin=0.5):
    d = torch.cdist(emb, emb, p=2)
    same = y.unsqueeze(0) == y.unsqueeze(1)
    hardest_pos = d.masked_fill(~same, float("-inf")).max(dim=1).values
    hardest_neg = d.masked_fill(same, float("inf")).min(dim=1).values
    return F.relu(hardest_pos - hardest_neg + margin).mean()


torch.manual_seed(1)
net = EmbeddingNet()
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
triplet = nn.TripletMarginLoss(margin=0.5, p=2)
for step in range(40):
    idx = torch.randperm(len(X))[:40]
    emb = net(X[idx])
    y = labels[idx]
    loss_hard = batch_hard_triplet(emb, y)
    pos = torch.stack([idx[(y == y[k]).nonzero()[-1, 0]] for k in range(len(idx))])
    neg = torch.stack([idx[(y != y[k]).nonzero()[0, 0]] for k in range(len(idx))])
    loss_trip = triplet(emb, net(X[pos]), net(X[neg]))
    loss = loss_hard + loss_trip
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"triplet step {step} hard {loss_hard.item():.5f} triplet {loss_trip.item():.5f}")

with torch.no_grad():
    E = net(X)
    d = torch.cdist(E, E)
    d.fill_diagonal_(float("inf"))
    nn_idx = d.topk(3, largest=False).indices
    acc = (labels[nn_idx] == labels[:, None]).float().mean().item()
print("retrieval@3", round(acc, 4))
assert acc > 0.5
a, p, n = torch.randn(4, 6), torch.randn(4, 6), torch.randn(4, 6)
print(F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda x, y: 1.0 - F.cosine_similarity(x, y),
                                          margin=0.3).item())
print(F.triplet_margin_loss(a, p, n, margin=1.0, p=1, swap=True).item())
print(nn.CosineEmbeddingLoss(margin=0.2)(a, p, torch.tensor([1, -1, 1, -1])).item())
print(nn.MarginRankingLoss(margin=0.1)(a[:, 0], p[:, 0], torch.tensor([1., -1., 1., -1.])).item())
print(nn.HingeEmbeddingLoss()(a, torch.ones(4, 6).sign()).item(), nn.SoftMarginLoss()(a, torch.ones(4, 6)).item())
print(torch.cdist(a, p, p=1).sum().item(), torch.cdist(a, p, p=float("inf")).sum().item(),
      torch.cdist(a, p, compute_mode="donot_use_mm_for_euclid_dist").sum().item())
