"""A sequence classifier in the style of the nn.Transformer tutorials: token embeddings scaled
by sqrt(d_model), sinusoidal positional encoding registered as a buffer, nn.TransformerEncoder
with a src_key_padding_mask for padded sequences, mean pooling over the real tokens,
CrossEntropyLoss with label smoothing, AdamW and a warmup LambdaLR; the task is whether a
sequence contains more 7s than 3s."""
import math

import torch
import torch.nn as nn

torch.manual_seed(123)
PAD, VOCAB, D = 0, 10, 32


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[: x.size(0)]
        return self.dropout(x)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.pos_encoder = PositionalEncoding(D)
        layer = nn.TransformerEncoderLayer(D, nhead=4, dim_feedforward=64, dropout=0.1)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(D, 2)

    def forward(self, src, pad_mask):
        x = self.pos_encoder(self.embedding(src) * math.sqrt(D))        # (S, N, D)
        x = self.encoder(x, src_key_padding_mask=pad_mask)               # pad_mask: (N, S), True = pad
        keep = (~pad_mask).T.unsqueeze(-1).float()
        return self.head((x * keep).sum(0) / keep.sum(0))


def make_batch(n=32):
    lengths = torch.randint(5, 13, (n,))
    S = int(lengths.max())
    src = torch.randint(1, VOCAB, (S, n))
    mask = torch.arange(S).unsqueeze(0) >= lengths.unsqueeze(1)          # (n, S)
    src = src.masked_fill(mask.T, PAD)
    label = ((src == 7).sum(0) > (src == 3).sum(0)).long()
    return src, mask, label


model = Classifier()
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
warmup = 10
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
test_src, test_mask, test_label = make_batch(128)
for step in range(40):
    model.train()
    src, mask, label = make_batch()
    loss = criterion(model(src, mask), label)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    scheduler.step()
    if step % 10 == 9:
        model.eval()
        with torch.no_grad():
            acc = (model(test_src, test_mask).argmax(1) == test_label).float().mean().item()
        print(f"step {step + 1} loss {loss.item():.5f} lr {scheduler.get_last_lr()[0]:.6f} test acc {acc:.4f}")
assert acc > 0.6
