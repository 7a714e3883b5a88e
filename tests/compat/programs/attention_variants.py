"""Attention in the forms people mix in one model: nn.MultiheadAttention with kdim/vdim,
add_bias_kv, add_zero_attn, batch_first False and True, need_weights with average_attn_weights
False, key_padding_mask (bool and float) and attn_mask (2-D and per-head 3-D); F.scaled_dot_product_attention
with a bool mask, a float mask, is_causal, scale= and dropout in eval; a hand-written causal
self-attention checked against both; LSTM(proj_size=...) bidirectional with its state shapes; and
nn.TransformerDecoderLayer(tgt_is_causal=True) with memory_key_padding_mask."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
L, S, N, E = 4, 6, 2, 8
q = torch.randn(L, N, E)
k = torch.randn(S, N, 5)
v = torch.randn(S, N, 3)
mha = nn.MultiheadAttention(E, 2, kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True)
print([n for n, _ in mha.named_parameters()])
kpm = torch.tensor([[False] * 5 + [True], [False] * 6])
out, w = mha(q, k, v, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
print("kdim/vdim", tuple(out.shape), tuple(w.shape), round(out.sum().item(), 5), round(w[0, 1].sum().item(), 5))

torch.manual_seed(1)
mha2 = nn.MultiheadAttention(E, 4, batch_first=True, dropout=0.0)
x = torch.randn(N, L, E)
causal = torch.triu(torch.ones(L, L, dtype=torch.bool), diagonal=1)
o_bool, w_bool = mha2(x, x, x, attn_mask=causal)
float_mask = torch.zeros(L, L).masked_fill(causal, float("-inf"))
o_float, _ = mha2(x, x, x, attn_mask=float_mask)
print("bool == float mask", torch.allclose(o_bool, o_float, atol=1e-6), tuple(w_bool.shape),
      [round(v, 5) for v in w_bool[0, -1].tolist()])
per_head = causal.unsqueeze(0).expand(N * 4, L, L)
o_head, _ = mha2(x, x, x, attn_mask=per_head, need_weights=False)
print("per-head mask", torch.allclose(o_head, o_bool, atol=1e-6))
kpm_f = torch.zeros(N, L)
kpm_f[1, -1] = float("-inf")
o_kpm, w_kpm = mha2(x, x, x, key_padding_mask=kpm_f)
print("float kpm", [round(v, 5) for v in w_kpm[1, 0].tolist()])

qh, kh, vh = (torch.randn(N, 2, L, 4) for _ in range(3))
ref = torch.softmax(qh @ kh.transpose(-2, -1) / math.sqrt(4) + float_mask, dim=-1) @ vh
sdpa_c = F.scaled_dot_product_attention(qh, kh, vh, is_causal=True)
sdpa_b = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=~causal)
sdpa_s = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=float_mask, scale=0.5)
print("sdpa", torch.allclose(sdpa_c, ref, atol=1e-6), torch.allclose(sdpa_b, ref, atol=1e-6),
      round(sdpa_s.sum().item(), 5), round(F.scaled_dot_product_attention(qh, kh, vh, dropout_p=0.0).sum().item(), 5))

torch.manual_seed(2)
lstm = nn.LSTM(5, 8, num_layers=2, bidirectional=True, proj_size=3, batch_first=True)
print([(n, tuple(p.shape)) for n, p in lstm.named_parameters()][:5])
seq = torch.randn(N, 7, 5)
y, (h, c) = lstm(seq)
print("proj lstm", tuple(y.shape), tuple(h.shape), tuple(c.shape), round(y.sum().item(), 5), round(c.sum().item(), 5))

torch.manual_seed(3)
dec = nn.TransformerDecoderLayer(d_model=E, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
tgt = torch.randn(N, L, E)
mem = torch.randn(N, S, E)
mkpm = torch.tensor([[False] * 4 + [True] * 2, [False] * 6])
tmask = nn.Transformer.generate_square_subsequent_mask(L)
o1 = dec(tgt, mem, tgt_mask=tmask, tgt_is_causal=True, memory_key_padding_mask=mkpm)
o2 = dec(tgt, mem, tgt_mask=tmask, memory_key_padding_mask=mkpm)
print("decoder", torch.allclose(o1, o2), round(o1.sum().item(), 5), round(o1.std().item(), 5))
