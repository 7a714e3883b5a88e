"""Gaussian-process regression from scratch, as the "GPs in PyTorch" notebooks and blog posts
write it: an RBF kernel from torch.cdist, hyperparameters kept positive by softplus of raw
parameters, the exact marginal likelihood through torch.linalg.cholesky, cholesky_solve and the
log-diagonal (checked against MultivariateNormal(scale_tril=L).log_prob and slogdet), Adam on the
negative log marginal likelihood, the predictive mean and variance via solve_triangular, posterior
samples drawn with a seeded Generator, and Bayesian linear regression / ridge in closed form
(linalg.solve, lstsq, pinv, eigvalsh for the effective number of parameters) as a sanity check.
Everything in float64, as GP code runs."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal, Normal

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
n = 30
X = torch.sort(torch.rand(n, 1) * 6 - 3, dim=0).values
f_true = torch.sin(2 * X) + 0.3 * X
y = (f_true + 0.15 * torch.randn(n, 1)).squeeze(-1)
X_test = torch.linspace(-3.5, 3.5, 8).unsqueeze(-1)
print("data", tuple(X.shape), tuple(y.shape), y.dtype, f"{y.mean():.5f} {y.std():.5f}")


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.raw_outputscale = nn.Parameter(torch.tensor(0.0))

    @property
    def lengthscale(self):
        return F.softplus(self.raw_lengthscale)

    @property
    def outputscale(self):
        return F.softplus(self.raw_outputscale)

    def forward(self, a, b):
        d2 = torch.cdist(a / self.lengthscale, b / self.lengthscale).pow(2)
        return self.outputscale * torch.exp(-0.5 * d2)


class ExactGP(nn.Module):
    def __init__(self, X, y):
        super().__init__()
        self.register_buffer("X", X)
        self.register_buffer("y", y)
        self.kernel = RBFKernel()
        self.raw_noise = nn.Parameter(torch.tensor(-2.0))
        self.mean_const = nn.Parameter(torch.zeros(()))

    @property
    def noise(self):
        return F.softplus(self.raw_noise) + 1e-6

    def neg_mll(self):
        K = self.kernel(self.X, self.X) + self.noise * torch.eye(len(self.X))
        L = torch.linalg.cholesky(K)
        r = (self.y - self.mean_const).unsqueeze(-1)
        alpha = torch.cholesky_solve(r, L)
        quad = (r * alpha).sum()
        logdet = 2 * torch.log(torch.diagonal(L)).sum()
        return 0.5 * (quad + logdet + len(self.X) * math.log(2 * math.pi)) / len(self.X), L

    def predict(self, Xs):
        K = self.kernel(self.X, self.X) + self.noise * torch.eye(len(self.X))
        L = torch.linalg.cholesky(K)
        Ks = self.kernel(self.X, Xs)
        v = torch.linalg.solve_triangular(L, Ks, upper=False)
        alpha = torch.cholesky_solve((self.y - self.mean_const).unsqueeze(-1), L)
        mean = self.mean_const + (Ks.T @ alpha).squeeze(-1)
        cov = self.kernel(Xs, Xs) - v.T @ v
        return mean, cov


gp = ExactGP(X, y)
print([name for name, _ in gp.named_parameters()], list(gp.state_dict().keys()))
loss, L = gp.neg_mll()
mvn = MultivariateNormal(torch.zeros(n), scale_tril=L)
print(f"initial nmll {loss.item():.6f} via MVN {-mvn.log_prob(y).item() / n:.6f}")
K0 = L @ L.T
sign, logabsdet = torch.linalg.slogdet(K0)
print(f"logdet chol {2 * L.diagonal().log().sum().item():.6f} slogdet {logabsdet.item():.6f} sign {sign.item()}")
print("L[:3,:3]", L[:3, :3])
loss.backward()
print({k: round(v.grad.item(), 6) for k, v in gp.named_parameters()})

optimizer = torch.optim.Adam(gp.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=80, power=1.0)
for it in range(80):
    optimizer.zero_grad()
    loss, _ = gp.neg_mll()
    loss.backward()
    optimizer.step()
    scheduler.step()
    if it % 20 == 0 or it == 79:
        print(f"iter {it:2d} nmll {loss.item():.6f} lengthscale {gp.kernel.lengthscale.item():.5f} "
              f"outputscale {gp.kernel.outputscale.item():.5f} noise {gp.noise.item():.6f} lr {scheduler.get_last_lr()[0]:.5f}")

with torch.no_grad():
    mean, cov = gp.predict(X_test)
    var = cov.diagonal().clamp_min(1e-12)
    print("pred mean", mean)
    print("pred std ", var.sqrt())
    truth = torch.sin(2 * X_test.squeeze(-1)) + 0.3 * X_test.squeeze(-1)
    z = (truth - mean) / var.sqrt()
    print("z-scores", [f"{v:.3f}" for v in z.tolist()])
    print(f"test log-lik {Normal(mean, (var + gp.noise).sqrt()).log_prob(truth).sum().item():.6f}")
    g = torch.Generator().manual_seed(42)
    Lc = torch.linalg.cholesky(cov + 1e-8 * torch.eye(len(X_test)))
    samples = mean + (Lc @ torch.randn(len(X_test), 3, generator=g)).T
    print("posterior samples", samples.shape)
    print(samples[:, :4])
    post = MultivariateNormal(mean, covariance_matrix=cov + 1e-8 * torch.eye(len(X_test)))
    print("MVN", post.batch_shape, post.event_shape, f"entropy {post.entropy().item():.5f}")
    print("scale_tril equal", torch.allclose(post.scale_tril, Lc, atol=1e-10))
    eig = torch.linalg.eigvalsh(cov)
    print("posterior cov eig range", f"{eig.min().item():.3e}", f"{eig.max().item():.5f}")

print("== Bayesian linear regression ==")
Phi = torch.cat([torch.ones(n, 1), X, X ** 2, torch.sin(2 * X)], dim=1)
alpha, beta = 1.0, 1 / 0.15 ** 2
A = alpha * torch.eye(4) + beta * Phi.T @ Phi
m_N = beta * torch.linalg.solve(A, Phi.T @ y)
S_N = torch.linalg.inv(A)
print("posterior mean", m_N)
print("posterior std ", S_N.diagonal().sqrt())
w_ls = torch.linalg.lstsq(Phi, y.unsqueeze(-1)).solution.squeeze(-1)
w_pinv = torch.linalg.pinv(Phi) @ y
print("least squares", w_ls, torch.allclose(w_ls, w_pinv))
lam = torch.linalg.eigvalsh(beta * Phi.T @ Phi)
gamma = (lam / (alpha + lam)).sum()
print(f"effective parameters {gamma.item():.5f}")
ridge = torch.linalg.solve(Phi.T @ Phi + 0.1 * torch.eye(4), Phi.T @ y)
print("ridge", ridge, f"residual {torch.linalg.norm(Phi @ ridge - y).item():.6f}")
cond = torch.linalg.cond(Phi)
print(f"cond(Phi) {cond.item():.4f} rank {torch.linalg.matrix_rank(Phi).item()}")
Q, R = torch.linalg.qr(Phi)
print("qr solve", torch.linalg.solve_triangular(R, (Q.T @ y).unsqueeze(-1), upper=True).squeeze(-1))
U, S, Vh = torch.linalg.svd(Phi, full_matrices=False)
print("singular values", S)
print("svd solve", Vh.T @ ((U.T @ y) / S))
