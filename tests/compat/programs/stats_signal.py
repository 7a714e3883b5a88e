"""Statistics and 1-D signal processing with torch, as data-science notebooks and "PyTorch for
numpy users" posts do it: quantile with each interpolation, median of an even count (the lower
one), nanmedian / nanmean / nansum, mode, kthvalue, var / std with correction, cov (with weights)
and corrcoef, unique (sorted, return_inverse, return_counts, dim=0), unique_consecutive, stable
sort / argsort with ties, searchsorted (right, sorter) and bucketize for binning, histogram with
edges, cummax / cummin / logcumsumexp / cumprod, diff (n, prepend), trapezoid /
cumulative_trapezoid, moving averages by conv1d and by unfold, windows (hann, hamming, blackman,
kaiser) for a windowed energy feature, z-score / min-max scaling, and a seeded bootstrap
confidence interval."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
print("== order statistics ==")
print("median (even count -> lower)", x.median(), torch.median(x.view(2, 4), dim=1))
for interp in ["linear", "lower", "higher", "midpoint", "nearest"]:
    print("quantile", interp, torch.quantile(x, torch.tensor([0.1, 0.5, 0.9]), interpolation=interp))
print("quantile dim keepdim", torch.quantile(x.view(2, 4), 0.25, dim=1, keepdim=True))
nx = torch.tensor([1.0, float("nan"), 3.0, 2.0, float("nan")])
print("nan-aware", nx.nanmedian(), torch.nanmean(nx), torch.nansum(nx), torch.nanquantile(nx, 0.5), nx.median())
print("mode", torch.mode(torch.tensor([2, 3, 3, 1, 2, 2, 3])), torch.tensor([[1, 1, 2], [3, 2, 2]]).mode(1))
print("kthvalue", torch.kthvalue(x, 3), x.view(2, 4).kthvalue(2, dim=1, keepdim=True).values)
print("topk unsorted", torch.topk(x, 3).values, torch.topk(x, 3, largest=False))
print("var", x.var(), x.var(unbiased=False), x.var(correction=0), x.std(correction=2), torch.var_mean(x))
print("std_mean dim", torch.std_mean(x.view(2, 4), dim=1))
print("aminmax", torch.aminmax(x), x.view(2, 4).amax(1), x.argmax(), x.argmin())

print("== covariance ==")
data = torch.randn(3, 50)
data[1] = 0.8 * data[0] + 0.2 * data[1]
print("cov", torch.cov(data))
print("corrcoef", torch.corrcoef(data))
fw = torch.randint(1, 4, (50,))
aw = torch.rand(50)
print("weighted cov", torch.cov(data, correction=0, fweights=fw, aweights=aw))
xc = data - data.mean(1, keepdim=True)
print("manual cov equal", torch.allclose(xc @ xc.T / 49, torch.cov(data), atol=1e-6))

print("== unique / sort ==")
v = torch.tensor([3, 1, 2, 3, 3, 1, 5, 2])
u, inv, cnt = torch.unique(v, return_inverse=True, return_counts=True)
print("unique", u, inv, cnt, torch.equal(u[inv], v))
print("unique unsorted", torch.unique(v, sorted=False).sort().values)
rows = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9]])
print("unique dim=0", torch.unique(rows, dim=0, return_counts=True))
print("unique_consecutive", torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True,
                                                     return_inverse=True))
keys = torch.tensor([2, 1, 2, 1, 0, 2])
print("stable sort", torch.sort(keys, stable=True), torch.argsort(keys, stable=True, descending=True))
print("sort 2-d", torch.sort(torch.tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]]), dim=0, descending=True))
print("msort", torch.msort(torch.tensor([[3.0, 1.0], [0.0, 2.0]])))

print("== binning ==")
edges = torch.tensor([0.0, 1.0, 2.5, 4.0])
vals = torch.tensor([-1.0, 0.0, 1.0, 2.0, 2.5, 3.9, 4.0, 7.0])
print("searchsorted left", torch.searchsorted(edges, vals), "right", torch.searchsorted(edges, vals, right=True))
print("side=right", torch.searchsorted(edges, vals, side="right"))
unsorted = torch.tensor([4.0, 0.0, 2.5, 1.0])
print("sorter", torch.searchsorted(unsorted, vals, sorter=torch.argsort(unsorted)))
print("bucketize", torch.bucketize(vals, edges), torch.bucketize(vals, edges, right=True))
print("batched searchsorted", torch.searchsorted(torch.tensor([[0.0, 1.0, 2.0], [0.0, 10.0, 20.0]]),
                                                 torch.tensor([[1.5], [15.0]])))
samples = torch.randn(200)
hist, bin_edges = torch.histogram(samples, bins=6, range=(-3.0, 3.0))
print("histogram", hist, bin_edges)
hist_d, _ = torch.histogram(samples, bins=torch.tensor([-3.0, -1.0, 0.0, 1.0, 3.0]), density=True)
print("density", hist_d, f"integrates to {(hist_d * torch.tensor([2.0, 1.0, 1.0, 2.0])).sum().item():.5f}")
print("histc", torch.histc(samples, bins=4, min=-2, max=2))

print("== cumulative and differences ==")
s = torch.tensor([1.0, 3.0, 2.0, 5.0, 4.0])
print("cummax", torch.cummax(s, 0), "cummin", torch.cummin(s, 0).values)
print("cumsum", s.cumsum(0), "cumprod", s.cumprod(0), "logcumsumexp", torch.logcumsumexp(s, 0))
print("diff", torch.diff(s), torch.diff(s, n=2), torch.diff(s, prepend=torch.tensor([0.0]), append=torch.tensor([9.0])))
print("diff 2-d", torch.diff(torch.arange(12.0).view(3, 4) ** 2, dim=0))
t = torch.linspace(0, math_pi := 3.141592653589793, 101)
print(f"trapezoid sin {torch.trapezoid(torch.sin(t), t).item():.6f}", f"dx {torch.trapezoid(torch.sin(t), dx=math_pi / 100).item():.6f}")
print("cumulative_trapezoid", torch.cumulative_trapezoid(torch.tensor([1.0, 2.0, 3.0, 4.0])))

print("== smoothing and windows ==")
n = 64
tt = torch.arange(n, dtype=torch.float32)
signal = torch.sin(2 * 3.141592653589793 * tt / 16) + 0.3 * torch.randn(n)
k = 5
ma_conv = F.conv1d(signal.view(1, 1, -1), torch.full((1, 1, k), 1 / k)).view(-1)
ma_unfold = signal.unfold(0, k, 1).mean(1)
ma_cumsum = (torch.cat([torch.zeros(1), signal.cumsum(0)])[k:] - torch.cat([torch.zeros(1), signal.cumsum(0)])[:-k]) / k
print("moving average", ma_conv.shape, torch.allclose(ma_conv, ma_unfold, atol=1e-6), torch.allclose(ma_conv, ma_cumsum, atol=1e-5))
print(ma_conv[:6])
alpha = 0.3
ema = torch.empty_like(signal)
ema[0] = signal[0]
for i in range(1, n):
    ema[i] = alpha * signal[i] + (1 - alpha) * ema[i - 1]
print("ema tail", ema[-4:])
for name, win in [("hann", torch.hann_window(8)), ("hann sym", torch.hann_window(8, periodic=False)),
                  ("hamming", torch.hamming_window(8)), ("blackman", torch.blackman_window(8)),
                  ("kaiser", torch.kaiser_window(8, True, 6.0)), ("bartlett", torch.bartlett_window(8))]:
    print(name, win)
frames = signal.unfold(0, 16, 8) * torch.hann_window(16)
energy = frames.pow(2).sum(1)
print("frames", tuple(frames.shape), "energy", energy)
zero_cross = (signal[:-1].sign() != signal[1:].sign()).sum()
print("zero crossings", zero_cross.item())

print("== scaling and bootstrap ==")
feats = torch.randn(10, 3) * torch.tensor([1.0, 10.0, 0.1]) + torch.tensor([0.0, 5.0, -2.0])
z = (feats - feats.mean(0)) / feats.std(0)
mm = (feats - feats.amin(0)) / (feats.amax(0) - feats.amin(0))
print("z mean/std", z.mean(0).abs().max() < 1e-6, z.std(0), "minmax range", mm.amin(0), mm.amax(0))
print("normalize p=1", F.normalize(feats[:2], p=1, dim=1))
g = torch.Generator().manual_seed(123)
pop = torch.randn(40, generator=g) + 1.0
idx = torch.randint(0, 40, (500, 40), generator=g)
boot_means = pop[idx].mean(1)
lo, hi = torch.quantile(boot_means, torch.tensor([0.025, 0.975]))
print(f"bootstrap mean {pop.mean().item():.5f} CI [{lo.item():.5f}, {hi.item():.5f}]")
print("permutation test", [round(v, 5) for v in torch.stack([pop[torch.randperm(40, generator=g)][:20].mean() for _ in range(5)]).tolist()])
