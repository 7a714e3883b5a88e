"""A tour of the nn.Module API as the "Modules" / "Parametrizations" / "Saving and loading"
tutorials and the module-internals blog posts show it: register_parameter / register_buffer
(persistent=False) / add_module / register_module, named_* with prefixes and recurse=False,
state_dict keys and their order, load_state_dict(strict=False) and its printed _IncompatibleKeys,
strict errors, get_submodule / get_parameter / get_buffer, apply with an init function,
requires_grad_ and freezing, train/eval flags, extra_repr, __repr__ of nested containers,
forward pre-hooks and hooks with kwargs, state_dict / load_state_dict hooks, get_extra_state and a
_load_from_state_dict override that migrates an old checkpoint by its _metadata version,
parametrize.register_parametrization
(the tutorial's Symmetric and MatrixExponential), parametrize.cached, remove_parametrizations,
and to(dtype) / double() / half() conversions."""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize

torch.manual_seed(0)


class Scale(nn.Module):
    def __init__(self, n, init=1.0):
        super().__init__()
        self.register_parameter("gain", nn.Parameter(torch.full((n,), init)))
        self.register_parameter("offset", None)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))
        self.register_buffer("scratch", torch.zeros(n), persistent=False)
        self.n = n

    def forward(self, x):
        self.calls += 1
        return x * self.gain

    def extra_repr(self):
        return f"n={self.n}, init=..."


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.scale = Scale(d)
        self.add_module("act", nn.GELU(approximate="tanh"))
        self.register_module("drop", nn.Dropout(0.1))

    def forward(self, x):
        return self.drop(self.act(self.scale(self.lin(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(4) for _ in range(2)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
        self.extra = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(3))])
        self.table = nn.ParameterDict({"a": nn.Parameter(torch.randn(2))})
        self.seq = nn.Sequential(collections.OrderedDict([("fc", nn.Linear(4, 4)), ("norm", nn.LayerNorm(4))]))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        x = self.seq(x)
        return self.heads["cls"](x), self.heads["reg"](x)


net = Net()
print(net)
sd = net.state_dict()
print(len(sd), list(sd.keys()))
print("buffers", [n for n, _ in net.named_buffers()])
print("params recurse=False", [n for n, _ in net.named_parameters(recurse=False)])
print("children", [n for n, _ in net.named_children()])
print("modules", len(list(net.modules())), [n for n, _ in net.named_modules()][:8])
print("prefixed", [n for n, _ in net.blocks[0].named_parameters(prefix="blocks.0")])
print("get_submodule", net.get_submodule("blocks.1.scale"), net.get_parameter("seq.norm.weight").shape,
      net.get_buffer("blocks.0.scale.calls"))
print("parameter count", sum(p.numel() for p in net.parameters()),
      "trainable", sum(p.numel() for p in net.parameters() if p.requires_grad))
print("sd tensors detached", all(not v.requires_grad for v in sd.values()), sd["blocks.0.scale.calls"].dtype)

print("== load_state_dict ==")
other = Net()
res = other.load_state_dict(sd)
print(res, res.missing_keys, res.unexpected_keys)
print("equal after load", all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), other.state_dict().values())))
partial = {k: v for k, v in sd.items() if not k.startswith("heads")}
partial["bogus.weight"] = torch.zeros(1)
res = other.load_state_dict(partial, strict=False)
print(res)
print(sorted(res.missing_keys), res.unexpected_keys)
try:
    other.load_state_dict(partial)
except RuntimeError as e:
    msg = str(e)
    print("strict error:", msg.splitlines()[0])
    print("mentions missing/unexpected", "Missing key(s)" in msg, "Unexpected key(s)" in msg)
bad = dict(sd)
bad["heads.cls.weight"] = torch.zeros(5, 4)
try:
    other.load_state_dict(bad)
except RuntimeError as e:
    print("size mismatch:", "size mismatch for heads.cls.weight" in str(e))
head_only = Net().heads.state_dict()
print("head keys", list(head_only.keys()))
prefixed = {"module." + k: v for k, v in sd.items()}
stripped = {k.removeprefix("module."): v for k, v in prefixed.items()}
print("DataParallel prefix stripped:", other.load_state_dict(stripped))
torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(prefixed, "module.")
print("consume_prefix", list(prefixed.keys())[:3])

print("== apply / freezing / modes ==")


@torch.no_grad()
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        m.bias.fill_(0.01)


net.apply(init_weights)
print(net.heads["cls"].bias, f"{net.heads['cls'].weight.sum().item():.6f}")
for p in net.blocks.parameters():
    p.requires_grad_(False)
print("trainable after freeze", sum(p.numel() for p in net.parameters() if p.requires_grad))
net.blocks[1].requires_grad_(True)
print([n for n, p in net.named_parameters() if p.requires_grad][:4])
net.eval()
print("training flags", net.training, net.blocks[0].drop.training, net.heads.training)
net.train()
net.blocks[0].eval()
print("mixed", [m.training for m in net.blocks[0].modules()])
x = torch.randn(5, 4)
net.eval()
out_cls, out_reg = net(x)
print(out_cls.shape, out_reg.shape, net.blocks[0].scale.calls, net.blocks[1].scale.calls)
net.zero_grad(set_to_none=True)
(out_cls.sum() + out_reg.sum()).backward()
print("grads", [n for n, p in net.named_parameters() if p.grad is not None][:5])
print("frozen grad is None", net.blocks[0].lin.weight.grad is None)

print("== hooks ==")
calls = []


def pre_hook(module, args):
    calls.append(("pre", type(module).__name__, tuple(args[0].shape)))
    return (args[0] * 2,)


def fwd_hook(module, args, output):
    calls.append(("fwd", type(module).__name__, tuple(output.shape)))
    return output + 1


def kw_pre_hook(module, args, kwargs):
    calls.append(("kw-pre", sorted(kwargs)))
    return args, kwargs


lin = nn.Linear(3, 2)
h1 = lin.register_forward_pre_hook(pre_hook)
h2 = lin.register_forward_hook(fwd_hook)
x = torch.ones(1, 3)
y_hooked = lin(x)
h1.remove()
h2.remove()
print(calls, torch.allclose(y_hooked, lin(2 * x) + 1), torch.allclose(lin(x), F.linear(x, lin.weight, lin.bias)))


class WithKw(nn.Module):
    def forward(self, x, scale=1.0):
        return x * scale


wk = WithKw()
wk.register_forward_pre_hook(kw_pre_hook, with_kwargs=True)
wk.register_forward_hook(lambda m, a, kw, out: out - kw.get("scale", 0), with_kwargs=True)
print(wk(torch.ones(2), scale=3.0), calls[-1])

sd_calls = []
lin.register_state_dict_pre_hook(lambda module, prefix, keep_vars: sd_calls.append(prefix))
seq_sd = nn.Sequential(lin).state_dict()
print("state_dict pre-hook prefixes", sd_calls, seq_sd._metadata)


class VersionedNorm(nn.Module):
    """A layer whose version-1 checkpoints named the scale 'gamma' (renamed on load)."""
    _version = 2

    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.momentum = 0.1

    def get_extra_state(self):
        return {"momentum": self.momentum}

    def set_extra_state(self, state):
        self.momentum = state["momentum"]

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and prefix + "gamma" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "gamma")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


vn = nn.Sequential(VersionedNorm(3))
vn[0].momentum = 0.3
vsd = vn.state_dict()
print(list(vsd.keys()), vsd["0._extra_state"], vsd._metadata)
old_ckpt = {"0.gamma": torch.tensor([2.0, 3.0, 4.0]), "0._extra_state": {"momentum": 0.05}}
fresh = nn.Sequential(VersionedNorm(3))
print(fresh.load_state_dict(old_ckpt), fresh[0].weight.data, fresh[0].momentum)
fresh.register_load_state_dict_post_hook(lambda module, keys: keys.missing_keys.clear())
print(fresh.load_state_dict({"0._extra_state": {"momentum": 0.2}}), fresh[0].momentum)

print("== parametrizations ==")


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
print("symmetric", torch.allclose(A, A.T), parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, "bias"))
print(layer)
print(list(layer.state_dict().keys()))
print(type(layer).__name__, layer.parametrizations.weight.original.shape)
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
out = layer(torch.randn(4, 3)).pow(2).mean()
out.backward()
opt.step()
print("still symmetric after a step", torch.allclose(layer.weight, layer.weight.T))
with parametrize.cached():
    w1 = layer.weight
    w2 = layer.weight
    print("cached same object", w1 is w2)
parametrize.register_parametrization(layer, "weight", MatrixExponential())
print("chained", len(layer.parametrizations.weight), f"{torch.linalg.det(layer.weight).item():.6f}",
      f"{torch.exp(torch.trace(Symmetric()(layer.parametrizations.weight.original))).item():.6f}")
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print("removed", parametrize.is_parametrized(layer), list(layer.state_dict().keys()), type(layer).__name__)

print("== dtype conversions ==")
m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
m.double()
print({k: v.dtype for k, v in m.state_dict().items()})
m.to(torch.float32)
print(m[0].weight.dtype, m[1].running_mean.dtype, m[1].num_batches_tracked.dtype)
m.half()
print(m[0].weight.dtype, m[1].num_batches_tracked.dtype)
m.float()
print(m(torch.randn(4, 2)).dtype)
p = nn.Parameter(torch.randn(2))
print(p)
print(repr(nn.Parameter(torch.ones(2), requires_grad=False)))
print(isinstance(p, torch.Tensor), isinstance(p * 2, nn.Parameter), type(p).__name__)
buf = Scale(2)
print(buf, list(buf.state_dict().keys()), buf.offset)
