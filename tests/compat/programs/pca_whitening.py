"""PCA and whitening, as the dimensionality-reduction tutorials write them in PyTorch: correlated
data from a random mixing matrix, torch.pca_lowrank for the leading components (its variances
S**2 / (n - 1) checked against the eigenvalues of torch.cov), the explained-variance ratio and the
reconstruction error as components are added, PCA through torch.linalg.svd of the centred data,
PCA and ZCA whitening from torch.linalg.eigh (the whitened covariance is the identity, ZCA stays
closest to the data), a linear autoencoder trained with SGD whose learned subspace matches the
principal subspace (compared through projection matrices, which do not depend on the signs of
the vectors), and Mahalanobis distances for outlier detection. In float64."""
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)

n, d = 300, 6
latent = torch.randn(n, 3) * torch.tensor([3.0, 1.5, 0.7])
mix = torch.randn(3, d)
X = latent @ mix + 0.1 * torch.randn(n, d) + torch.arange(d) * 0.5
mean = X.mean(0)
Xc = X - mean
cov = torch.cov(X.T)
evals, evecs = torch.linalg.eigh(cov)
evals, evecs = evals.flip(0), evecs.flip(1)
print("cov eigenvalues", [round(v, 6) for v in evals.tolist()])

U, S, V = torch.pca_lowrank(X, q=4)
print("pca_lowrank variances", [round(v, 6) for v in (S**2 / (n - 1)).tolist()],
      "top 3 match eigh", torch.allclose(S[:3] ** 2 / (n - 1), evals[:3], rtol=1e-6))
ratio = evals / evals.sum()
print("explained variance ratio", [round(v, 6) for v in ratio.tolist()],
      "cumulative", [round(v, 6) for v in ratio.cumsum(0).tolist()])


def projector(B):
    return B @ torch.linalg.pinv(B)


print("pca_lowrank subspace == eigh subspace",
      torch.allclose(projector(V[:, :3]), projector(evecs[:, :3]), atol=1e-8))
for k in range(1, 5):
    Z = Xc @ V[:, :k]
    rec = Z @ V[:, :k].T + mean
    print(f"k={k} reconstruction mse {(rec - X).pow(2).mean().item():.8f}")

U2, S2, Vh2 = torch.linalg.svd(Xc, full_matrices=False)
print("svd singular values", [round(v, 6) for v in S2.tolist()])
print("svd scores vs U*S", torch.allclose(Xc @ Vh2.T, U2 * S2))

# ---- whitening -------------------------------------------------------------------------------
W_pca = torch.diag(evals.rsqrt()) @ evecs.T
W_zca = evecs @ torch.diag(evals.rsqrt()) @ evecs.T
for name, W in (("pca", W_pca), ("zca", W_zca)):
    Xw = Xc @ W.T
    cw = torch.cov(Xw.T)
    print(f"{name} whitened cov is identity {torch.allclose(cw, torch.eye(d), atol=1e-8)} "
          f"mean squared norm {Xw.pow(2).sum(1).mean().item():.6f}")
print(f"zca distance to data {(Xc @ W_zca.T - Xc).pow(2).sum(1).mean().item():.6f}")
print("zca is symmetric", torch.allclose(W_zca, W_zca.T), "det", f"{torch.linalg.det(W_zca).item():.8f}")

# ---- a linear autoencoder finds the principal subspace ---------------------------------------------
torch.manual_seed(1)
enc, dec = nn.Linear(d, 3, bias=False), nn.Linear(3, d, bias=False)
opt = torch.optim.SGD(list(enc.parameters()) + list(dec.parameters()), lr=0.01, momentum=0.9)
for step in range(300):
    loss = (dec(enc(Xc)) - Xc).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 100 == 0:
        print(f"autoencoder step {step}: loss {loss.item():.8f}")
best = evals[3:].sum() / d
print(f"autoencoder loss {loss.item():.8f} optimum {best.item():.8f}")
gap = (projector(dec.weight.detach()) - projector(evecs[:, :3])).norm()
print("learned subspace distance", f"{gap.item():.4f}", "close", bool(gap < 0.05))

# ---- Mahalanobis distances --------------------------------------------------------------------
outliers = mean + torch.randn(5, d) * 3
md = torch.einsum("ni,ij,nj->n", Xc, torch.linalg.inv(cov), Xc).sqrt()
mo = torch.einsum("ni,ij,nj->n", outliers - mean, torch.linalg.inv(cov), outliers - mean).sqrt()
threshold = torch.quantile(md, 0.99)
print(f"inlier distance mean {md.mean().item():.6f} 99% quantile {threshold.item():.6f}")
print("outlier distances", [round(v, 4) for v in mo.tolist()], "flagged", (mo > threshold).tolist())
