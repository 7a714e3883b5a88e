"""A Llama-style decoder written the way "LLaMA from scratch" notebooks and minimal inference
repos write it: a hand-written RMSNorm (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)),
rotary embeddings with inverse frequencies 1 / base ** (arange(0, d, 2) / d), cos/sin caches
kept as nn.Buffer(..., persistent=False) and applied with the rotate_half trick, grouped-query
attention (repeat_interleave of the key/value heads) through F.scaled_dot_product_attention with
is_causal, a SwiGLU feed-forward (F.silu(w1 x) * w3 x), nn.LazyLinear for the output head, a
KV cache for incremental decoding checked against the full forward, and greedy generation."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
vocab, dim, n_layers, n_heads, n_kv_heads, max_seq = 32, 32, 2, 4, 2, 24
head_dim = dim // n_heads


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


class Rotary(nn.Module):
    def __init__(self, head_dim, max_seq, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        t = torch.arange(max_seq, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.cos = nn.Buffer(emb.cos(), persistent=False)
        self.sin = nn.Buffer(emb.sin(), persistent=False)

    @staticmethod
    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def forward(self, q, k, start):
        T = q.shape[-2]
        cos, sin = self.cos[start:start + T], self.sin[start:start + T]
        return q * cos + self.rotate_half(q) * sin, k * cos + self.rotate_half(k) * sin


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.wq = nn.Linear(dim, n_heads * head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
        self.wo = nn.Linear(n_heads * head_dim, dim, bias=False)
        self.rope = Rotary(head_dim, max_seq)
        self.n_rep = n_heads // n_kv_heads

    def forward(self, x, cache=None, start=0):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, n_heads, head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, n_kv_heads, head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, n_kv_heads, head_dim).transpose(1, 2)
        q, k = self.rope(q, k, start)
        if cache is not None:
            if "k" in cache:
                k = torch.cat([cache["k"], k], dim=2)
                v = torch.cat([cache["v"], v], dim=2)
            cache["k"], cache["v"] = k, v
        k = k.repeat_interleave(self.n_rep, dim=1)
        v = v.repeat_interleave(self.n_rep, dim=1)
        if T > 1:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # one new token attends to everything cached
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(head_dim)
            out = scores.softmax(dim=-1) @ v
        return self.wo(out.transpose(1, 2).contiguous().view(B, T, -1))


class FeedForward(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention()
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = FeedForward()

    def forward(self, x, cache=None, start=0):
        h = x + self.attention(self.attention_norm(x), cache, start)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block() for _ in range(n_layers))
        self.norm = RMSNorm(dim)
        self.output = nn.LazyLinear(vocab, bias=False)

    def forward(self, tokens, caches=None, start=0):
        h = self.tok_embeddings(tokens)
        for i, layer in enumerate(self.layers):
            h = layer(h, None if caches is None else caches[i], start)
        return self.output(self.norm(h))


model = Transformer().to(device)
print(model.output)
_ = model(torch.zeros(1, 1, dtype=torch.long))  # dry run materialises the lazy head
print(model.output)
print("parameters", sum(p.numel() for p in model.parameters()))
print("state_dict has rotary caches:", any("cos" in k for k in model.state_dict()))
print("buffers", [n for n, _ in model.named_buffers()][:2])

# task: continue an arithmetic sequence mod vocab
def batch(n, T=16):
    start = torch.randint(0, vocab, (n, 1))
    step = torch.randint(1, 4, (n, 1))
    seq = (start + step * torch.arange(T + 1)) % vocab
    return seq[:, :-1], seq[:, 1:]


opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
for it in range(80):
    x, y = batch(16)
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if it % 20 == 19:
        print(f"iter {it + 1} loss {loss.item():.4f}")

# incremental decoding with a KV cache gives the same logits as the full forward
model.eval()
with torch.no_grad():
    prompt = torch.tensor([[3, 5, 7, 9]])
    full = model(prompt)
    caches = [dict() for _ in range(n_layers)]
    step_logits = [model(prompt[:, :1], caches, 0)]
    for pos in range(1, prompt.shape[1]):
        step_logits.append(model(prompt[:, pos:pos + 1], caches, pos))
    inc = torch.cat(step_logits, dim=1)
    print("kv cache matches full forward:", torch.allclose(full, inc, atol=1e-5),
          tuple(caches[0]["k"].shape))
    tokens = prompt
    caches = [dict() for _ in range(n_layers)]
    logits = model(tokens, caches, 0)
    for _ in range(8):
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        tokens = torch.cat([tokens, nxt], dim=1)
        logits = model(nxt, caches, tokens.shape[1] - 1)
print("generated", tokens[0].tolist())
print("final logits", [round(v, 4) for v in logits[0, -1, :5].tolist()])
