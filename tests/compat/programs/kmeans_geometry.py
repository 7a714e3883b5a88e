"""Clustering and geometry with plain tensor ops, as k-means / k-NN / kernel notebooks write
them: blobs from torch.randn around centres, k-means++ seeding with torch.multinomial, Lloyd
iterations with torch.cdist + argmin, index_add_ and bincount for the new centroids, inertia by
gather, a torch.meshgrid(indexing='ij'/'xy') grid classified by its nearest centroid, pairwise
distances three ways (cdist, broadcasting, the expanded-square trick), an RBF kernel matrix,
torch.unique with counts, torch.topk nearest neighbours, and torch.histc/torch.bucketize."""
import torch

torch.manual_seed(3)

centers_true = torch.tensor([[0.0, 0.0], [4.0, 4.0], [-4.0, 3.0], [3.0, -3.0]])
n_per = 60
X = torch.cat([c + 0.7 * torch.randn(n_per, 2) for c in centers_true])
labels_true = torch.arange(4).repeat_interleave(n_per)
print("data", X.shape, labels_true.bincount().tolist())


def kmeans_pp_init(X, k, generator=None):
    n = X.size(0)
    first = torch.randint(0, n, (1,), generator=generator)
    centers = [X[first].squeeze(0)]
    for _ in range(1, k):
        d2 = torch.cdist(X, torch.stack(centers)).min(dim=1).values ** 2
        idx = torch.multinomial(d2 / d2.sum(), 1, generator=generator)
        centers.append(X[idx].squeeze(0))
    return torch.stack(centers)


def kmeans(X, k, iters=20, seed=0):
    g = torch.Generator().manual_seed(seed)
    C = kmeans_pp_init(X, k, g)
    for it in range(iters):
        dists = torch.cdist(X, C)
        assign = dists.argmin(dim=1)
        counts = torch.bincount(assign, minlength=k).float()
        sums = torch.zeros_like(C).index_add_(0, assign, X)
        newC = sums / counts.clamp(min=1).unsqueeze(1)
        shift = (newC - C).norm(dim=1).max()
        C = newC
        if shift < 1e-6:
            break
    inertia = dists.gather(1, assign.unsqueeze(1)).pow(2).sum()
    return C, assign, inertia, it


C, assign, inertia, iters = kmeans(X, 4)
order = C[:, 0].argsort()  # a stable order for printing
print("centroids", [[round(v, 4) for v in row] for row in C[order].tolist()])
print("inertia %.4f after %d iterations" % (inertia.item(), iters + 1))
sizes = torch.bincount(assign, minlength=4)
print("cluster sizes", sizes[order].tolist())

# purity: the majority true label of each cluster
purity = 0
for c in range(4):
    members = labels_true[assign == c]
    vals, counts = torch.unique(members, return_counts=True)
    purity += counts.max().item()
print("purity %.4f" % (purity / len(X)))

# elbow curve
inertias = [kmeans(X, k)[2].item() for k in range(1, 7)]
print("elbow", ["%.2f" % v for v in inertias])

# a grid over the plane, labelled by the nearest centroid
xs = torch.linspace(-6, 6, 7)
ys = torch.linspace(-5, 6, 5)
gx, gy = torch.meshgrid(xs, ys, indexing="ij")
grid = torch.stack([gx.flatten(), gy.flatten()], dim=1)
print("grid ij", gx.shape, grid.shape)
region = torch.cdist(grid, C).argmin(1).view(gx.shape)
print(region)
gx2, gy2 = torch.meshgrid(xs, ys, indexing="xy")
print("grid xy", gx2.shape, torch.equal(gx2, gx.T), torch.equal(gy2, gy.T))

# pairwise distances three ways
A, B = X[:5], X[100:108]
d_cdist = torch.cdist(A, B)
d_broadcast = (A.unsqueeze(1) - B.unsqueeze(0)).pow(2).sum(-1).sqrt()
d_expand = (A.pow(2).sum(1, keepdim=True) + B.pow(2).sum(1) - 2 * A @ B.T).clamp_min(0).sqrt()
print("pairwise", round(d_cdist.sum().item(), 4), (d_cdist - d_broadcast).abs().max().item() < 1e-5,
      (d_cdist - d_expand).abs().max().item() < 1e-4)
print("manhattan", round(torch.cdist(A, B, p=1).sum().item(), 4), "chebyshev",
      round(torch.cdist(A, B, p=float("inf")).max().item(), 4))

# RBF kernel and a kernel-smoothed label estimate
gamma = 0.5
K = torch.exp(-gamma * torch.cdist(X, X) ** 2)
print("kernel", K.shape, round(K.diagonal().mean().item(), 4), torch.allclose(K, K.T))
onehot = torch.nn.functional.one_hot(labels_true, 4).float()
soft = (K @ onehot) / K.sum(1, keepdim=True)
print("kernel accuracy %.4f" % (soft.argmax(1) == labels_true).float().mean().item())

# k nearest neighbours by topk on negative distances
query = torch.tensor([[0.5, 0.5], [3.5, -2.0], [-3.0, 2.5]])
d = torch.cdist(query, X)
knn_d, knn_i = torch.topk(d, 5, dim=1, largest=False)
votes = labels_true[knn_i]
pred = torch.mode(votes, dim=1).values
print("knn", pred.tolist(), [[round(v, 4) for v in row] for row in knn_d.tolist()])

# histograms of distances to the assigned centroid
dist_own = (X - C[assign]).norm(dim=1)
print("histc", torch.histc(dist_own, bins=5, min=0, max=2.5).tolist())
edges = torch.tensor([0.5, 1.0, 1.5])
print("bucketize", torch.bincount(torch.bucketize(dist_own, edges), minlength=4).tolist(),
      torch.bucketize(torch.tensor([0.5, 1.2]), edges, right=True).tolist())
