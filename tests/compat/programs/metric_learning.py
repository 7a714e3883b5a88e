"""Metric learning as the embedding / retrieval tutorials write it: an embedding network trained
with nn.TripletMarginWithDistanceLoss (cosine distance, then the default PairwiseDistance with
swap) on batch-hard triplets mined from F.pdist / torch.cdist, a max-norm constraint applied with
w.data.renorm_(2, 0, maxnorm) after each step, an nn.Embedding(max_norm=1.0) class-proxy table,
recall@1 by nearest neighbour, and random-hyperplane LSH codes packed with << and compared by
bitwise_xor Hamming distance."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
n_classes, per_class, dim = 6, 20, 12
centers = torch.randn(n_classes, dim) * 2
labels = torch.arange(n_classes).repeat_interleave(per_class)
X = centers[labels] + 2.5 * torch.randn(len(labels), dim)
perm = torch.randperm(len(labels))
X, labels = X[perm], labels[perm]
print("data", tuple(X.shape), torch.bincount(labels).tolist())


class EmbeddingNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, 8))

    def forward(self, x):
        return F.normalize(self.net(x), dim=1)


def batch_hard_triplets(emb, y):
    """For each anchor: the farthest positive and the closest negative."""
    d = torch.cdist(emb, emb)
    same = y.unsqueeze(0) == y.unsqueeze(1)
    pos = d.masked_fill(~same, -1.0).argmax(1)
    neg = d.masked_fill(same, float("inf")).argmin(1)
    return pos, neg


model = EmbeddingNet()
cosine = lambda a, b: 1.0 - F.cosine_similarity(a, b)
criterion = nn.TripletMarginWithDistanceLoss(distance_function=cosine, margin=0.3)
print(criterion)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
maxnorm = 1.5
for epoch in range(30):
    emb = model(X)
    with torch.no_grad():
        pos, neg = batch_hard_triplets(emb, labels)
    loss = criterion(emb, emb[pos], emb[neg])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                m.weight.data.renorm_(2, 0, maxnorm)
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1} loss {loss.item():.5f}")
print("row norms <= maxnorm:", bool((model.net[0].weight.norm(dim=1) <= maxnorm + 1e-5).all()))

# the same objective with Euclidean distance and the swap trick, through the functional form
criterion2 = nn.TripletMarginWithDistanceLoss(swap=True, margin=0.5)
print(criterion2)
opt2 = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(10):
    emb = model(X)
    with torch.no_grad():
        pos, neg = batch_hard_triplets(emb, labels)
    loss = criterion2(emb, emb[pos], emb[neg])
    opt2.zero_grad()
    loss.backward()
    opt2.step()
print("euclidean triplet loss %.5f" % loss.item())
fn_loss = F.triplet_margin_with_distance_loss(emb, emb[pos], emb[neg], swap=True, margin=0.5, reduction="sum")
print("functional (sum) %.5f" % fn_loss.item())

# retrieval: recall@1 and pairwise distances
with torch.no_grad():
    emb = model(X)
    D = torch.cdist(emb, emb)
    D.fill_diagonal_(float("inf"))
    nn_idx = D.argmin(1)
    recall1 = (labels[nn_idx] == labels).float().mean()
    pd = F.pdist(emb)
print(f"recall@1 {recall1.item():.4f}")
print("pdist", tuple(pd.shape), round(pd.mean().item(), 5), round(pd.min().item(), 5))
iu = torch.triu_indices(len(emb), len(emb), 1)
print("pdist == cdist upper triangle:", torch.allclose(pd, torch.cdist(emb, emb)[iu[0], iu[1]], atol=1e-5))
same_pairs = labels[iu[0]] == labels[iu[1]]
print("mean distance same/different %.5f %.5f" % (pd[same_pairs].mean().item(), pd[~same_pairs].mean().item()))

# class proxies in an Embedding table whose rows are kept inside the unit ball
proxies = nn.Embedding(n_classes, 8, max_norm=1.0)
with torch.no_grad():
    proxies.weight.mul_(3.0)
before = proxies.weight.norm(dim=1)
p_opt = torch.optim.SGD(proxies.parameters(), lr=0.5)
for step in range(20):
    target = proxies(labels)
    loss = (1 - F.cosine_similarity(model(X).detach(), target)).mean()
    p_opt.zero_grad()
    loss.backward()
    p_opt.step()
print("proxy loss %.5f" % loss.item())
print("proxy norms before", [round(v, 4) for v in before.tolist()])
with torch.no_grad():
    proxies(torch.arange(n_classes))
print("proxy norms after", [round(v, 4) for v in proxies.weight.norm(dim=1).tolist()])

# locality-sensitive hashing with random hyperplanes
planes = torch.randn(8, 8)
with torch.no_grad():
    bits = (model(X) @ planes.T > 0).long()
codes = (bits << torch.arange(8)).sum(1)
print("codes", codes[:8].tolist(), "distinct", len(torch.unique(codes)))
x = torch.bitwise_xor(codes.unsqueeze(1), codes.unsqueeze(0))
hamming = torch.zeros_like(x)
for b in range(8):
    hamming += (x >> b) & 1
hamming.fill_diagonal_(99)
lsh_nn = hamming.argmin(1)
print("lsh recall@1 %.4f" % (labels[lsh_nn] == labels).float().mean().item())
print("bit ops", (torch.tensor([5]) << 3).tolist(), torch.bitwise_and(torch.tensor([12, 10]), 6).tolist(),
      torch.bitwise_not(torch.tensor([0, 7])).tolist(), torch.gcd(torch.tensor([12, 18]), torch.tensor([8, 27])).tolist())
