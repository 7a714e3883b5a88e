"""Classical hypothesis tests written with torch, as the statistics-with-PyTorch notebooks do
(and importing the distributions the way RL/stats code does, from their implementation modules):
a z-test with Normal.cdf / icdf, chi-square goodness-of-fit and independence tests whose p-values
come from torch.special.gammaincc (checked against Chi2.cdf by numeric integration), Poisson tail
probabilities by igammac, a two-sample Kolmogorov-Smirnov statistic from sort + searchsorted,
Welch's t statistic, a seeded permutation test and a bootstrap confidence interval, and a
likelihood-ratio test between two fitted Gamma models (lgamma, digamma Newton steps)."""
import math

import torch
from torch.distributions.chi2 import Chi2
from torch.distributions.gamma import Gamma
from torch.distributions.normal import Normal
from torch.distributions.poisson import Poisson

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)
std_normal = Normal(0.0, 1.0)

print("== z-test ==")
sample = 0.3 + torch.randn(40)
z = sample.mean() / (1.0 / math.sqrt(40))
p_two = 2 * (1 - std_normal.cdf(z.abs()))
print(f"z {z.item():.6f} p {p_two.item():.6e} critical {std_normal.icdf(torch.tensor(0.975)).item():.6f}")

print("== chi-square goodness of fit ==")
rolls = torch.randint(1, 7, (600,))
observed = torch.bincount(rolls, minlength=7)[1:].double()
expected = torch.full((6,), 100.0)
chi2_stat = ((observed - expected) ** 2 / expected).sum()
dof = 5
p_value = torch.special.gammaincc(torch.tensor(dof / 2), chi2_stat / 2)
grid = torch.linspace(1e-9, chi2_stat.item(), 20001)
cdf_numeric = torch.trapezoid(Chi2(torch.tensor(float(dof))).log_prob(grid).exp(), grid)
print("observed", observed.tolist(), f"chi2 {chi2_stat.item():.5f} p {p_value.item():.6f}",
      f"numeric 1-cdf {1 - cdf_numeric.item():.6f}")
loaded = torch.multinomial(torch.tensor([0.1, 0.1, 0.1, 0.1, 0.1, 0.5]), 600, replacement=True) + 1
obs_l = torch.bincount(loaded, minlength=7)[1:].double()
stat_l = ((obs_l - expected) ** 2 / expected).sum()
print("loaded die", obs_l.tolist(), f"p {torch.special.gammaincc(torch.tensor(2.5), stat_l / 2).item():.3e}")

print("== chi-square independence ==")
table = torch.tensor([[30.0, 10.0, 20.0], [20.0, 25.0, 15.0]])
row, col, n = table.sum(1, keepdim=True), table.sum(0, keepdim=True), table.sum()
exp_t = row @ col / n
stat_t = ((table - exp_t) ** 2 / exp_t).sum()
dof_t = (table.shape[0] - 1) * (table.shape[1] - 1)
print("expected", exp_t, f"chi2 {stat_t.item():.5f} dof {dof_t} p {torch.igammac(torch.tensor(dof_t / 2), stat_t / 2).item():.6f}")

print("== Poisson tails ==")
rate = torch.tensor([2.0, 5.0, 10.0])
k = torch.tensor([4.0, 9.0, 20.0])
cdf_k = torch.special.gammaincc(k + 1, rate)  # P(X <= k)
direct = torch.stack([Poisson(r).log_prob(torch.arange(kk + 1)).exp().sum() for r, kk in zip(rate, k.long())])
print("P(X<=k)", cdf_k, torch.allclose(cdf_k, direct))
print("P(X>k)", torch.special.gammainc(k + 1, rate), "tail", torch.special.gammainc(torch.tensor(31.0), torch.tensor(5.0)))

print("== Kolmogorov-Smirnov ==")
a = torch.randn(80)
b = 0.5 + 1.2 * torch.randn(60)
a_s, _ = torch.sort(a)
b_s, _ = torch.sort(b)
allv = torch.cat([a_s, b_s]).sort().values
cdf_a = torch.searchsorted(a_s, allv, right=True).double() / len(a)
cdf_b = torch.searchsorted(b_s, allv, right=True).double() / len(b)
d = (cdf_a - cdf_b).abs().max()
en = math.sqrt(len(a) * len(b) / (len(a) + len(b)))
lam = (en + 0.12 + 0.11 / en) * d
j = torch.arange(1, 101, dtype=torch.float64)
p_ks = (2 * ((-1) ** (j - 1)) * torch.exp(-2 * lam ** 2 * j ** 2)).sum().clamp(0, 1)
print(f"D {d.item():.6f} p {p_ks.item():.6f} argmax at {allv[(cdf_a - cdf_b).abs().argmax()].item():.5f}")

print("== Welch t / permutation / bootstrap ==")
va, vb = a.var(), b.var()
t = (a.mean() - b.mean()) / torch.sqrt(va / len(a) + vb / len(b))
df = (va / len(a) + vb / len(b)) ** 2 / ((va / len(a)) ** 2 / (len(a) - 1) + (vb / len(b)) ** 2 / (len(b) - 1))
print(f"t {t.item():.6f} welch df {df.item():.4f} normal-approx p {2 * std_normal.cdf(-t.abs()).item():.6f}")
g = torch.Generator().manual_seed(2024)
pooled = torch.cat([a, b])
observed_diff = a.mean() - b.mean()
diffs = torch.empty(1000)
for i in range(1000):
    perm = torch.randperm(len(pooled), generator=g)
    diffs[i] = pooled[perm[:80]].mean() - pooled[perm[80:]].mean()
print(f"permutation p {(diffs.abs() >= observed_diff.abs()).double().mean().item():.4f}",
      f"null sd {diffs.std().item():.5f}")
idx_a = torch.randint(0, 80, (1000, 80), generator=g)
idx_b = torch.randint(0, 60, (1000, 60), generator=g)
boot = a[idx_a].mean(1) - b[idx_b].mean(1)
lo, hi = torch.quantile(boot, torch.tensor([0.025, 0.975]))
print(f"bootstrap CI [{lo.item():.5f}, {hi.item():.5f}]")

print("== likelihood ratio: Gamma(k, theta) vs Exponential ==")
data = Gamma(torch.tensor(2.5), torch.tensor(1.5)).sample((300,))
mean_x, mean_log = data.mean(), data.log().mean()
s = math.log(mean_x.item()) - mean_log.item()
k_hat = torch.tensor((3 - s + math.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s))
for _ in range(5):  # Newton on log k - digamma(k) = s
    f = k_hat.log() - torch.digamma(k_hat) - s
    fp = 1 / k_hat - torch.polygamma(1, k_hat)
    k_hat = k_hat - f / fp
rate_hat = k_hat / mean_x
ll_gamma = Gamma(k_hat, rate_hat).log_prob(data).sum()
ll_exp = Gamma(torch.tensor(1.0), 1 / mean_x).log_prob(data).sum()
lr = 2 * (ll_gamma - ll_exp)
print(f"k {k_hat.item():.6f} rate {rate_hat.item():.6f} LR {lr.item():.5f} "
      f"p {torch.special.gammaincc(torch.tensor(0.5), lr / 2).item():.3e}")
print(f"lgamma(k) {torch.lgamma(k_hat).item():.6f} mvlgamma {torch.mvlgamma(k_hat + 1, 2).item():.6f}")
