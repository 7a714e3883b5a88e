"""Second derivatives through the ops models are built from, as a library's autograd tests check
them: for each op a float64 gradgradcheck, and the Hessian-vector product of a scalar loss by
double backward printed so it can be compared with PyTorch's: activations, layer_norm, rms_norm,
group_norm, batch_norm in training mode, softmax / log_softmax / cross_entropy / nll / mse /
smooth_l1 / bce, conv2d, conv1d, max_pool2d, avg_pool2d, embedding, matmul / bmm / einsum,
indexing, gather / scatter_add / index_select, where, clamp, pow, abs, sqrt, norm, logsumexp,
cumsum, prod, sort-free topk values, and third derivatives (softmax, log_softmax, cross_entropy,
group_norm, conv1d, max_pool)."""
import torch
import torch.nn.functional as F
from torch.autograd import gradcheck, gradgradcheck

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


def hvp_of(f, *xs):
    """sum over inputs of H v for the scalar f, with v = ones; returns rounded floats."""
    xs = [x.detach().clone().requires_grad_(True) for x in xs]
    out = f(*xs)
    gs = torch.autograd.grad(out, xs, create_graph=True, allow_unused=True)
    dot = sum((g * torch.ones_like(g)).sum() for g in gs if g is not None)
    hs = torch.autograd.grad(dot, xs, allow_unused=True)
    return [None if h is None else round(h.sum().item(), 8) for h in hs]


x = torch.randn(3, 5)
w = torch.randn(5)
b = torch.randn(5)
tgt = torch.tensor([1, 0, 4])
cw, c35, r35, p35 = torch.rand(5) + 0.5, torch.randn(3, 5), torch.rand(3, 5), F.softmax(torch.randn(3, 5), 1)
cases = {
    "softmax": (lambda a: (F.softmax(a, dim=1) * torch.arange(5.0)).sum(), (x,)),
    "log_softmax": (lambda a: (F.log_softmax(a, dim=-1) ** 2).sum(), (x,)),
    "cross_entropy": (lambda a: F.cross_entropy(a, tgt), (x,)),
    "cross_entropy_ls": (lambda a: F.cross_entropy(a, tgt, label_smoothing=0.1), (x,)),
    "nll_weighted": (lambda a: F.nll_loss(F.log_softmax(a, 1), tgt, weight=cw), (x,)),
    "mse": (lambda a, c: F.mse_loss(a.tanh(), c), (x, c35)),
    "smooth_l1": (lambda a: F.smooth_l1_loss(a ** 3, torch.zeros(3, 5), beta=0.5), (x,)),
    "bce_logits": (lambda a: F.binary_cross_entropy_with_logits(a, r35), (x,)),
    "bce": (lambda a: F.binary_cross_entropy(torch.sigmoid(a), r35), (x,)),
    "kl_div": (lambda a: F.kl_div(F.log_softmax(a, 1), p35, reduction="batchmean"), (x,)),
    "layer_norm": (lambda a, g, c: (F.layer_norm(a, (5,), g, c) ** 3).sum(), (x, w, b)),
    "rms_norm": (lambda a, g: (F.rms_norm(a, (5,), g, eps=1e-6) ** 3).sum(), (x, w)),
    "group_norm": (lambda a, g, c: (F.group_norm(a, 2, g, c) ** 3).sum(),
                   (torch.randn(2, 4, 3), torch.randn(4), torch.randn(4))),
    "batch_norm_train": (lambda a, g, c: (F.batch_norm(a, None, None, g, c, training=True) ** 3).sum(), (x, w, b)),
    "instance_norm": (lambda a: (F.instance_norm(a) ** 3).sum(), (torch.randn(2, 3, 4),)),
    "conv2d": (lambda a, k: (F.conv2d(a, k, padding=1).tanh()).sum(), (torch.randn(1, 2, 4, 4), torch.randn(3, 2, 3, 3))),
    "conv1d_stride": (lambda a, k: (F.conv1d(a, k, stride=2) ** 2).sum(), (torch.randn(2, 2, 7), torch.randn(3, 2, 3))),
    "max_pool2d": (lambda a: (F.max_pool2d(a, 2) ** 2).sum(), (torch.randn(1, 2, 4, 4),)),
    "avg_pool2d": (lambda a: (F.avg_pool2d(a, 2) ** 2).sum(), (torch.randn(1, 2, 4, 4),)),
    "adaptive_avg_pool2d": (lambda a: (F.adaptive_avg_pool2d(a, 1) ** 3).sum(), (torch.randn(1, 2, 4, 4),)),
    "embedding": (lambda e: (F.embedding(torch.tensor([[0, 2], [2, 1]]), e) ** 3).sum(), (torch.randn(3, 4),)),
    "matmul": (lambda a, m: ((a @ m).sin()).sum(), (x, torch.randn(5, 2))),
    "bmm": (lambda a, m: (torch.bmm(a, m) ** 2).sum(), (torch.randn(2, 3, 4), torch.randn(2, 4, 2))),
    "einsum": (lambda a, m: (torch.einsum("bij,bjk->bik", a, m) ** 2).sum(), (torch.randn(2, 3, 4), torch.randn(2, 4, 2))),
    "linear": (lambda a, m, c: F.linear(a, m, c).tanh().sum(), (x, torch.randn(2, 5), torch.randn(2))),
    "index": (lambda a: (a[[0, 2, 2], 1:4] ** 3).sum(), (x,)),
    "bool_mask": (lambda a: (a[a > 0] ** 3).sum(), (x,)),
    "gather": (lambda a: (a.gather(1, torch.tensor([[0, 1], [2, 2], [4, 0]])) ** 3).sum(), (x,)),
    "scatter_add": (lambda a: (torch.zeros(3, 3).scatter_add(1, torch.tensor([[0, 1, 0, 2, 1]] * 3), a) ** 2).sum(), (x,)),
    "index_select": (lambda a: (a.index_select(0, torch.tensor([2, 0, 2])) ** 3).sum(), (x,)),
    "where": (lambda a, c: torch.where(a > 0, a ** 2, c ** 3).sum(), (x, torch.randn(3, 5))),
    "clamp": (lambda a: (a.clamp(-0.5, 0.5) * a).sum(), (x,)),
    "pow": (lambda a, e: (a.abs() + 0.5).pow(e).sum(), (x, torch.rand(5) + 0.5)),
    "abs": (lambda a: (a.abs() * a).sum(), (x,)),
    "sqrt": (lambda a: (a * a + 1).sqrt().sum(), (x,)),
    "norm": (lambda a: a.norm(dim=1).sum() + torch.linalg.vector_norm(a, 3), (x,)),
    "logsumexp": (lambda a: torch.logsumexp(a, dim=1).sum(), (x,)),
    "cumsum": (lambda a: (a.cumsum(1) ** 3).sum(), (x,)),
    "prod": (lambda a: a.prod(1).sum(), (x,)),
    "mean_var": (lambda a: (a.var(1) * a.mean(1)).sum() + a.std(), (x,)),
    "max_dim": (lambda a: (a.max(1).values ** 3).sum(), (x,)),
    "topk": (lambda a: (a.topk(2, dim=1).values ** 3).sum(), (x,)),
    "cat_stack": (lambda a, c: (torch.cat([a, c]) ** 3).sum() + torch.stack([a, c]).prod(0).sum(), (x, torch.randn(3, 5))),
    "dropout_eval": (lambda a: (F.dropout(a, 0.5, training=False) ** 3).sum(), (x,)),
    "pad": (lambda a: (F.pad(a, (1, 2)) ** 3).sum(), (x,)),
    "interpolate": (lambda a: (F.interpolate(a, scale_factor=2, mode="bilinear", align_corners=False) ** 2).sum(),
                    (torch.randn(1, 1, 3, 3),)),
    "attention": (lambda q, k: ((F.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1) @ k) ** 2).sum(),
                  (torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4))),
}
for name, (f, xs) in cases.items():
    ins = tuple(t.detach().clone().requires_grad_(True) for t in xs)
    ok1 = gradcheck(f, ins)
    ok2 = gradgradcheck(f, ins)
    print(f"{name:20s} gradcheck {ok1} gradgradcheck {ok2} hvp {hvp_of(f, *xs)}")

for name, f in {"gelu": F.gelu, "silu": F.silu, "mish": F.mish, "elu": F.elu, "selu": F.selu,
                "softplus": F.softplus, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "logsigmoid": F.logsigmoid,
                "relu": F.relu, "leaky_relu": F.leaky_relu, "hardswish": F.hardswish, "softsign": F.softsign,
                "relu6": F.relu6, "hardtanh": F.hardtanh, "celu": F.celu, "glu": lambda t: F.glu(t.repeat(1, 2), dim=1)}.items():
    a = (torch.randn(3, 5) * 2).requires_grad_(True)
    ok = gradgradcheck(lambda t: f(t).pow(2).sum(), (a,))
    print(f"{name:12s} gradgradcheck {ok} hvp {hvp_of(lambda t: f(t).pow(2).sum(), a)}")

# third order of smooth compositions
z = torch.tensor([0.3, -0.8, 1.5], requires_grad=True)
for name, f in {"softmax": lambda t: F.softmax(t, 0)[0], "log_softmax": lambda t: F.log_softmax(t, 0)[1],
                "cross_entropy": lambda t: F.cross_entropy(t[None], torch.tensor([1])),
                "group_norm": lambda t: F.group_norm(t.view(1, 3, 1), 1)[0, 1, 0],
                "conv1d": lambda t: F.conv1d(t.view(1, 1, 3), torch.tensor([[[1.0, -2.0]]])).pow(3).sum(),
                "max_pool": lambda t: F.max_pool1d(t.view(1, 1, 3) ** 3, 2).sum(), "logsumexp": lambda t: torch.logsumexp(t, 0),
                "tanh_mlp": lambda t: torch.tanh(torch.tanh(t * 2).sum() * t).sum()}.items():
    try:
        g = torch.autograd.grad(f(z), z, create_graph=True)[0]
        h = torch.autograd.grad((g * torch.tensor([1.0, 2.0, -1.0])).sum(), z, create_graph=True)[0]
        t3 = torch.autograd.grad((h * torch.tensor([0.5, -1.0, 3.0])).sum(), z)[0]
        print(f"third order {name}", [round(v, 8) for v in t3.tolist()])
    except RuntimeError:
        print(f"third order {name} raised")
