"""A "PyTorch cheat sheet" notebook run top to bottom: the less common tensor functions such a
sheet lists (diff, kron, rot90, logcumsumexp, searchsorted/bucketize, median/nanmedian/mode,
nan_to_num, tensordot, block_diag, cartesian_prod, combinations, linalg.cross, vector/matrix
norms, qr/cholesky/eigvalsh/svdvals/pinv/lstsq/matrix_rank, cov/corrcoef, var_mean/std_mean,
count_nonzero, histc, cummax/cummin, renorm, trapezoid, vander, unique_consecutive, isin,
take_along_dim, unravel_index), every activation module (Mish, Hardswish, SELU, CELU, GLU,
Softsign, Tanhshrink, Softshrink, Hardshrink, Threshold, LogSigmoid, Softmin, PReLU, RReLU in
eval, ReLU6), every loss module on one batch (Huber, MultiMargin, MultiLabelMargin,
MultiLabelSoftMargin, SoftMargin, HingeEmbedding, CosineEmbedding, MarginRanking, TripletMargin,
PoissonNLL, GaussianNLL, KLDiv(log_target)), and the layers a sheet shows once (InstanceNorm,
LocalResponseNorm, Conv3d/MaxPool3d/BatchNorm3d, ConvTranspose1d, padding modes and pad
layers, ChannelShuffle, Softmax2d, Fold/Unfold, adaptive pools, ceil_mode pools); each with the
gradient of a weighted sum where it is differentiable."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_printoptions(precision=5)
x = torch.randn(2, 3, 5, 5)
v = torch.randn(6)
M = torch.randn(3, 3)
S = M @ M.T + 3 * torch.eye(3)

print("diff", torch.diff(v), torch.diff(v, n=2), torch.diff(M, dim=0))
print("tril_indices", torch.tril_indices(3, 3), torch.triu_indices(3, 3, 1))
print("kron", torch.kron(torch.eye(2), M)[:, :4])
print("rot90", torch.rot90(M, 1, [0, 1]), torch.rot90(M, 2))
print("addmm", torch.addmm(M, M, M, beta=0.5, alpha=2))
print("baddbmm", torch.baddbmm(torch.zeros(2, 3, 3), torch.randn(2, 3, 4), torch.randn(2, 4, 3)).sum((1, 2)))
print("logcumsumexp", torch.logcumsumexp(v, 0))
edges = torch.tensor([1.0, 3, 5, 7])
print("searchsorted", torch.searchsorted(edges, torch.tensor([2.0, 6, 7])),
      torch.searchsorted(edges, torch.tensor([2.0, 6, 7]), right=True), torch.bucketize(v, torch.tensor([-1.0, 0, 1])))
print("median", torch.median(v), torch.median(M, dim=1), torch.nanmedian(torch.tensor([1.0, float("nan"), 3.0])))
print("mode", torch.mode(torch.tensor([1, 2, 2, 3, 3])))
print("nan_to_num", torch.nan_to_num(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])),
      torch.nan_to_num(torch.tensor([float("nan"), float("inf")]), nan=0.0, posinf=1e4))
print("tensordot", torch.tensordot(torch.arange(60.0).view(3, 4, 5), torch.arange(40.0).view(4, 5, 2), dims=2))
print("block_diag", torch.block_diag(torch.ones(2, 2), 2 * torch.eye(1)))
print("cartesian_prod", torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5])).tolist())
print("combinations", torch.combinations(torch.tensor([1, 2, 3]), r=2).tolist(),
      torch.combinations(torch.tensor([1, 2, 3]), with_replacement=True).shape)
a3, b3 = torch.randn(4, 3), torch.randn(4, 3)
print("cross", torch.linalg.cross(a3, b3), (torch.linalg.cross(a3, b3) * a3).sum(1).abs().max() < 1e-5)
print("norms", torch.linalg.norm(M), torch.linalg.norm(M, ord=2), torch.linalg.norm(v, ord=1),
      torch.linalg.vector_norm(v, ord=float("inf")), torch.linalg.matrix_norm(M, ord="nuc"), torch.norm(M, p="fro"))
Q, R = torch.linalg.qr(M)
print("qr", R.diagonal().abs(), (Q @ R - M).abs().max() < 1e-5)
L = torch.linalg.cholesky(S)
print("cholesky", L, torch.linalg.eigvalsh(S), torch.linalg.svdvals(M))
A = torch.randn(5, 3)
print("pinv", torch.linalg.pinv(A).shape, (torch.linalg.pinv(A) @ A - torch.eye(3)).abs().max() < 1e-5)
print("lstsq", torch.linalg.lstsq(A, torch.randn(5, 1)).solution.flatten(), torch.linalg.matrix_rank(M))
print("matrix_power", torch.linalg.matrix_power(M, 3)[0], torch.linalg.det(M), torch.linalg.slogdet(S))
data = torch.randn(3, 10)
print("cov", torch.cov(data), torch.corrcoef(data)[0, 1:], torch.allclose(torch.corrcoef(data).diagonal(), torch.ones(3)))
print("var_mean", torch.var_mean(M, dim=1), torch.std_mean(M, dim=0, unbiased=False), torch.var(M, dim=1, correction=0))
print("count_nonzero", torch.count_nonzero(torch.tensor([0, 1, 2, 0])), torch.count_nonzero(M > 0, dim=0))
print("histc", torch.histc(v, bins=4, min=-2, max=2))
print("cummax", torch.cummax(v, 0), torch.cummin(v, 0).values, torch.cumprod(v, 0))
print("renorm", torch.renorm(M, 2, 0, 1.0).norm(dim=1))
print("trapezoid", torch.trapezoid(v), torch.trapezoid(v, dx=0.5), torch.vander(torch.tensor([1.0, 2, 3]), N=3))
print("unique_consecutive", torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1]), return_counts=True))
print("isin", torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 4])), torch.unravel_index(torch.tensor(7), (3, 3)))
print("take_along_dim", torch.take_along_dim(M, M.argmax(1, keepdim=True), dim=1).flatten())
print("logaddexp", torch.logaddexp(v, v.flip(0)), torch.hypot(v, v.flip(0)))
print("fmod/remainder", torch.fmod(v, 0.7), torch.remainder(v, 0.7), torch.copysign(v, torch.tensor(-1.0)))
print("special", torch.special.expit(v[:2]), torch.special.entr(torch.tensor([0.2, 0.7])), torch.special.ndtr(v[:2]),
      torch.special.xlog1py(v[:2], v[:2].abs()), torch.special.i0e(v[:2]), torch.special.i1(v[:2]))

torch.manual_seed(1)
acts = [nn.Mish(), nn.Hardswish(), nn.Hardsigmoid(), nn.SELU(), nn.CELU(alpha=0.5), nn.GLU(dim=0), nn.Softsign(),
        nn.Tanhshrink(), nn.Softshrink(0.5), nn.Hardshrink(0.5), nn.Threshold(0.1, 20.0), nn.LogSigmoid(),
        nn.Softmin(dim=0), nn.PReLU(), nn.RReLU().eval(), nn.ReLU6(), nn.ELU(alpha=1.5), nn.GELU(approximate="tanh"),
        nn.Softplus(beta=2, threshold=1), nn.Hardtanh(-0.5, 0.5), nn.SiLU(), nn.LeakyReLU(0.1)]
for act in acts:
    z = (v * 3).detach().requires_grad_()
    out = act(z)
    (out * torch.arange(1.0, out.numel() + 1)).sum().backward()
    print(f"{act!r:45s}", out.detach(), z.grad)

torch.manual_seed(2)
logits = torch.randn(4, 5, requires_grad=True)
target = torch.tensor([0, 2, 1, 4])
pm = torch.tensor([1.0, -1, 1, -1])
losses = [
    (nn.HuberLoss(delta=0.5), lambda: (logits, logits.detach().flip(0))),
    (nn.SmoothL1Loss(beta=0.5), lambda: (logits, logits.detach().flip(0))),
    (nn.L1Loss(reduction="sum"), lambda: (logits, torch.zeros(4, 5))),
    (nn.MultiMarginLoss(), lambda: (logits, target)),
    (nn.MultiMarginLoss(p=2, margin=0.5, weight=torch.arange(1.0, 6)), lambda: (logits, target)),
    (nn.MultiLabelMarginLoss(), lambda: (logits, torch.tensor([[0, 2, -1, 0, 0], [1, -1, 0, 0, 0], [4, 3, 2, -1, 0],
                                                               [0, 1, 2, 3, 4]]))),
    (nn.MultiLabelSoftMarginLoss(), lambda: (logits, (torch.arange(20).view(4, 5) % 3 == 0).float())),
    (nn.SoftMarginLoss(), lambda: (logits[:, 0], pm)),
    (nn.HingeEmbeddingLoss(margin=0.5), lambda: (logits[:, 0], pm)),
    (nn.CosineEmbeddingLoss(margin=0.2), lambda: (logits, logits.detach().flip(0), pm)),
    (nn.MarginRankingLoss(margin=0.1), lambda: (logits[:, 0], logits[:, 1], pm)),
    (nn.TripletMarginLoss(margin=1.0, p=2), lambda: (logits, logits.detach().flip(0), logits.detach().flip(1))),
    (nn.PoissonNLLLoss(), lambda: (logits, logits.detach().abs())),
    (nn.PoissonNLLLoss(log_input=False, full=True), lambda: (logits.abs() + 0.1, logits.detach().abs() * 3)),
    (nn.GaussianNLLLoss(), lambda: (logits, logits.detach().flip(0), logits.detach().abs() + 0.1)),
    (nn.KLDivLoss(reduction="batchmean", log_target=True), lambda: (F.log_softmax(logits, 1),
                                                                     F.log_softmax(logits.detach().flip(0), 1))),
    (nn.CrossEntropyLoss(weight=torch.arange(1.0, 6), ignore_index=2, label_smoothing=0.1), lambda: (logits, target)),
    (nn.NLLLoss(reduction="sum"), lambda: (F.log_softmax(logits, 1), target)),
    (nn.BCEWithLogitsLoss(pos_weight=torch.arange(1.0, 6)), lambda: (logits, (logits.detach() > 0).float())),
]
for crit, args in losses:
    logits.grad = None
    loss = crit(*args())
    loss.backward()
    print(f"{crit.__class__.__name__:26s} {loss.item():.6f} {logits.grad.abs().sum().item():.6f}")

torch.manual_seed(3)
layers = [nn.InstanceNorm2d(3), nn.InstanceNorm2d(3, affine=True, track_running_stats=True), nn.LocalResponseNorm(2),
          nn.ZeroPad2d((1, 0, 2, 0)), nn.ReflectionPad2d(1), nn.ReplicationPad2d(1), nn.ConstantPad2d(1, 3.5),
          nn.Conv2d(3, 2, 3, padding="same", padding_mode="reflect"), nn.Conv2d(3, 2, 3, padding=1, padding_mode="circular"),
          nn.Conv2d(3, 6, 3, groups=3), nn.Conv2d(3, 2, 3, dilation=2), nn.ChannelShuffle(3), nn.Softmax2d(),
          nn.AdaptiveMaxPool2d(2), nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
          nn.AvgPool2d(2, ceil_mode=True), nn.MaxPool2d(2, ceil_mode=True), nn.LPPool2d(2, 2), nn.Unfold(2),
          nn.Upsample(size=(7, 7), mode="bilinear"), nn.Upsample(scale_factor=2, mode="nearest")]
for layer in layers:
    inp = x.clone().requires_grad_() if not isinstance(layer, nn.ChannelShuffle) else torch.randn(2, 6, 2, 2, requires_grad=True)
    out = layer(inp)
    (out * torch.linspace(-1, 1, out.numel()).view(out.shape)).sum().backward()
    print(f"{layer!r:80s} {tuple(out.shape)} {out.sum().item():.5f} {inp.grad.abs().sum().item():.5f}")
fold = nn.Fold((5, 5), 2)
print("fold(unfold)", (fold(nn.Unfold(2)(x)) / fold(nn.Unfold(2)(torch.ones_like(x))) - x).abs().max() < 1e-5)
vol = torch.randn(2, 3, 4, 6, 6, requires_grad=True)
net3d = nn.Sequential(nn.Conv3d(3, 4, 3, padding=1), nn.BatchNorm3d(4), nn.ReLU(), nn.MaxPool3d(2),
                      nn.AdaptiveAvgPool3d(1), nn.Flatten())
out = net3d(vol)
out.sum().backward()
print("3d", out.shape, out.sum().item(), vol.grad.abs().sum().item(), net3d[1].running_mean)
seq = torch.randn(2, 3, 5, requires_grad=True)
tconv = nn.ConvTranspose1d(3, 2, 3, stride=2, padding=1, output_padding=1)
o = tconv(seq)
o.pow(2).sum().backward()
print("convtranspose1d", o.shape, o.sum().item(), seq.grad.abs().sum().item())
print("pads", F.pad(v.view(1, 1, 6), (2, 1), mode="reflect"), F.pad(v.view(1, 1, 6), (1, 2), mode="circular"),
      F.pad(x, (1, 1, 1, 1), mode="replicate").shape)
