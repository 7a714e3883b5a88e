"""A batch_first Transformer trained with dropout, as most current tutorials and repos write it:
nn.Transformer(batch_first=True, dropout=0.1) for a copy-reverse task with src/tgt/memory
key-padding masks and generate_square_subsequent_mask, a TransformerEncoder classifier with
norm_first=True and activation="gelu" (the attention output is a transposed view, so dropout
after it must draw its mask in memory order as PyTorch does), nn.MultiheadAttention(dropout=0.2,
batch_first=True) returning averaged weights, torch.randn_like noise on a permuted tensor,
label-smoothed cross entropy with ignore_index, AdamW + warmup LambdaLR, clip_grad_norm_, then
greedy decoding in eval mode."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
PAD, BOS, EOS, V = 0, 1, 2, 12


def make_batch(n, generator):
    lengths = torch.randint(3, 7, (n,), generator=generator)
    src = torch.full((n, 8), PAD)
    tgt = torch.full((n, 9), PAD)
    for i, L in enumerate(lengths.tolist()):
        seq = torch.randint(3, V, (L,), generator=generator)
        src[i, :L] = seq
        tgt[i, 0] = BOS
        tgt[i, 1:L + 1] = seq.flip(0)
        tgt[i, L + 1] = EOS
    return src, tgt


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=32):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.dropout(x + self.pe[:, :x.size(1)])


class Seq2Seq(nn.Module):
    def __init__(self, d_model=16):
        super().__init__()
        self.emb = nn.Embedding(V, d_model, padding_idx=PAD)
        self.pos = PositionalEncoding(d_model)
        self.transformer = nn.Transformer(d_model=d_model, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                          dim_feedforward=32, dropout=0.1, batch_first=True)
        self.out = nn.Linear(d_model, V)
        self.d_model = d_model

    def forward(self, src, tgt):
        src_pad = src == PAD
        tgt_pad = tgt == PAD
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        s = self.pos(self.emb(src) * math.sqrt(self.d_model))
        t = self.pos(self.emb(tgt) * math.sqrt(self.d_model))
        h = self.transformer(s, t, tgt_mask=tgt_mask, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                             memory_key_padding_mask=src_pad)
        return self.out(h)


g = torch.Generator().manual_seed(1)
model = Seq2Seq()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 10))
crit = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.05)
for step in range(40):
    model.train()
    src, tgt = make_batch(16, g)
    logits = model(src, tgt[:, :-1])
    loss = crit(logits.reshape(-1, V), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 8 == 0 or step == 39:
        print(f"step {step:2d} loss {loss.item():.4f} norm {norm.item():.4f} lr {sched.get_last_lr()[0]:.5f}")

model.eval()
src, tgt = make_batch(3, g)
with torch.no_grad():
    ys = torch.full((3, 1), BOS)
    for _ in range(8):
        nxt = model(src, ys)[:, -1].argmax(-1, keepdim=True)
        ys = torch.cat([ys, nxt], dim=1)
print("src", src.tolist())
print("greedy", ys.tolist())


class Classifier(nn.Module):
    def __init__(self, d_model=16):
        super().__init__()
        self.emb = nn.Embedding(V, d_model, padding_idx=PAD)
        self.cls = nn.Parameter(torch.zeros(1, 1, d_model))
        layer = nn.TransformerEncoderLayer(d_model, 4, 32, dropout=0.1, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.attn_pool = nn.MultiheadAttention(d_model, 2, dropout=0.2, batch_first=True)
        self.head = nn.Linear(d_model, 2)

    def forward(self, x):
        pad = x == PAD
        h = self.emb(x)
        h = torch.cat([self.cls.expand(x.size(0), -1, -1), h], dim=1)
        pad = torch.cat([torch.zeros(x.size(0), 1, dtype=torch.bool), pad], dim=1)
        h = self.encoder(h, src_key_padding_mask=pad)
        pooled, weights = self.attn_pool(h[:, :1], h, h, key_padding_mask=pad)
        return self.head(pooled.squeeze(1)), weights


clf = Classifier()
opt = torch.optim.Adam(clf.parameters(), lr=2e-3)
for step in range(30):
    clf.train()
    src, _ = make_batch(16, g)
    label = ((src == 7).sum(1) > 0).long()
    noisy = clf.emb.weight.data.t()
    jitter = torch.randn_like(noisy) * 0.0
    logits, w = clf(src)
    loss = F.cross_entropy(logits, label)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"clf step {step:2d} loss {loss.item():.4f} weights {tuple(w.shape)} {w[0, 0, :3].tolist()}")
torch.manual_seed(9)
x = torch.randn(2, 3, 4)
print("randn_like of a transpose", torch.randn_like(x.transpose(0, 1))[0])
print("dropout of a permute", F.dropout(x.permute(2, 0, 1), 0.5)[0])
clf.eval()
with torch.no_grad():
    src, _ = make_batch(32, g)
    label = ((src == 7).sum(1) > 0).long()
    acc = (clf(src)[0].argmax(1) == label).float().mean().item()
print(f"clf eval acc {acc:.3f}")
