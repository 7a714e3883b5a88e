"""Skip-gram word2vec with negative sampling, as the embedding tutorials write it: a vocabulary
with counts (collections.Counter), subsampling of frequent words, negatives drawn by
torch.multinomial from the unigram distribution to the 3/4 power, two nn.Embedding tables,
torch.bmm scores, F.logsigmoid losses, SparseAdam-free Adam training, and nearest neighbours by
cosine similarity with topk."""
import collections
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(1)
torch.manual_seed(1)
corpus = ("the king rules the kingdom . the queen rules the kingdom . a man walks the dog . "
          "a woman walks the dog . the king and the queen are royal . the man and the woman are people . "
          "dogs and cats are animals . the cat chases the dog . the dog chases the cat . ") * 6
tokens = corpus.split()
counts = collections.Counter(tokens)
vocab = sorted(counts, key=lambda w: (-counts[w], w))
w2i = {w: i for i, w in enumerate(vocab)}
ids = torch.tensor([w2i[w] for w in tokens])
freq = torch.tensor([counts[w] for w in vocab], dtype=torch.float)
noise = freq.pow(0.75)
noise = noise / noise.sum()
keep_p = ((1e-2 / (freq / freq.sum())).sqrt() + 1e-2 / (freq / freq.sum())).clamp(max=1.0)
print("vocab", len(vocab), "most common", vocab[:4])

pairs = []
window = 2
for i in range(len(tokens)):
    if random.random() > keep_p[ids[i]].item():
        continue
    for j in range(max(0, i - window), min(len(tokens), i + window + 1)):
        if j != i:
            pairs.append((ids[i].item(), ids[j].item()))
pairs = torch.tensor(pairs)
print("training pairs", len(pairs))


class SkipGram(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.in_embed = nn.Embedding(n, d)
        self.out_embed = nn.Embedding(n, d)
        self.in_embed.weight.data.uniform_(-0.5 / d, 0.5 / d)
        self.out_embed.weight.data.zero_()

    def forward(self, center, context, negatives):
        v = self.in_embed(center).unsqueeze(2)                  # (B, D, 1)
        u = self.out_embed(context).unsqueeze(1)                # (B, 1, D)
        n = self.out_embed(negatives)                           # (B, K, D)
        pos = F.logsigmoid(torch.bmm(u, v).squeeze())
        neg = F.logsigmoid(-torch.bmm(n, v).squeeze(2)).sum(1)
        return -(pos + neg).mean()


model = SkipGram(len(vocab), 16)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for epoch in range(5):
    perm = torch.randperm(len(pairs))
    total = 0.0
    for b in range(0, len(pairs), 64):
        batch = pairs[perm[b:b + 64]]
        negatives = torch.multinomial(noise, batch.size(0) * 5, replacement=True).view(batch.size(0), 5)
        loss = model(batch[:, 0], batch[:, 1], negatives)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * batch.size(0)
    print(f"epoch {epoch} loss {total / len(pairs):.5f}")

emb = F.normalize(model.in_embed.weight.detach(), dim=1)
for word in ("king", "dog", "walks"):
    sims = emb @ emb[w2i[word]]
    values, idx = sims.topk(3)
    print(word, "->", [vocab[i] for i in idx.tolist()[1:]], [round(v, 4) for v in values.tolist()[1:]])
assert total / len(pairs) < 3.0
