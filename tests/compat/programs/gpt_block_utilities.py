"""A GPT block trained the way recent training scripts write the loop around it: attention
through F.scaled_dot_product_attention inside torch.nn.attention.sdpa_kernel (the fused kernels
first, the math kernel as fallback), the single-process branch of the usual torch.distributed
guard, a nested batch moved and sliced with torch.utils._pytree, forward hooks whose
RemovableHandles are used as context managers, checks that q/k/v are views of one storage, a
quantile from torch.special.ndtri for gradient clipping, and a torch.utils.benchmark Timer."""
import collections

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils import _pytree as pytree
from torch.utils.benchmark import Timer
from torch.utils.hooks import RemovableHandle

torch.manual_seed(0)

if dist.is_available() and dist.is_initialized():
    rank, world_size = dist.get_rank(), dist.get_world_size()
else:
    rank, world_size = 0, 1
print(f"rank {rank} of {world_size}")


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.shared_storage = None

    def forward(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x)
        q, k, v = qkv.split(C, dim=2)
        self.shared_storage = (q.untyped_storage().data_ptr() == qkv.untyped_storage().data_ptr()
                               == v.untyped_storage().data_ptr())
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model=32, n_head=4):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=17, d_model=32, n_layer=2, block_size=12):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model) for _ in range(n_layer))
        self.head = nn.Linear(d_model, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.head(x)


Meta = collections.namedtuple("Meta", "lengths weights")


def make_batch(n=8, T=13):
    start = torch.randint(0, 17, (n, 1))
    seq = (start + torch.arange(T)) % 17  # a counting language: the next token is the last plus one
    return {"tokens": seq, "meta": Meta(torch.full((n,), T), None), "extra": [seq.float().mean(1)]}


model = TinyGPT()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

batch = make_batch()
leaves, spec = pytree.tree_flatten(batch)
print("leaves", len(leaves), "tensors", sum(isinstance(v, torch.Tensor) for v in leaves))
print("spec nodes", spec.num_nodes, "leaves", spec.num_leaves)

activations = {}


def record(name):
    def hook(module, inputs, output):
        activations[name] = output.detach().norm().item()
    return hook


handles = [blk.register_forward_hook(record(f"block{i}")) for i, blk in enumerate(model.blocks)]
print("handles", all(isinstance(h, RemovableHandle) for h in handles), len({h.id for h in handles}))

clip_z = torch.special.ndtri(torch.tensor(0.975, dtype=torch.float64)).item()  # a two-sided 95% z value
print(f"clip quantile {clip_z:.6f} log tail {torch.special.log_ndtr(torch.tensor(-clip_z, dtype=torch.float64)).item():.6f}")

for step in range(30):
    batch = make_batch()
    inputs = pytree.tree_map_only(torch.Tensor, lambda t: t[:, :-1] if t.dim() == 2 else t, batch)
    targets = batch["tokens"][:, 1:]
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        logits = model(inputs["tokens"])
    loss = F.cross_entropy(logits.reshape(-1, 17), targets.reshape(-1))
    opt.zero_grad()
    loss.backward()
    gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_z)
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step} loss {loss.item():.5f} grad norm {gnorm.item():.5f} "
              f"block1 activation {activations['block1']:.4f}")

for h in handles:
    h.remove()
activations.clear()
model.eval()
with torch.no_grad(), sdpa_kernel(SDPBackend.MATH):
    with model.blocks[0].register_forward_hook(record("only_in_block")):
        idx = torch.tensor([[3, 4, 5, 6]])
        pred = model(idx)[0, -1].argmax().item()
    model(idx)
print("next after 3 4 5 6:", pred, "hooks seen", sorted(activations))
print("q/k/v share the qkv storage:", model.blocks[0].attn.shared_storage)

with torch.no_grad():
    other = pytree.tree_map(lambda a, b: a + b, {"x": [torch.ones(2)], "y": 1}, {"y": 2, "x": [torch.ones(2)]})
print("tree_map", other["x"][0].tolist(), other["y"])

x = torch.randn(64, 32)
timer = Timer(stmt="model.blocks[0](x)", globals={"model": model, "x": x.unsqueeze(0)}, label="block",
              num_threads=1)
m = timer.timeit(5)
print("timer runs", m.number_per_run, "measurements", len(m.times), "positive", m.median > 0)
