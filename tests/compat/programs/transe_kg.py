"""Knowledge-graph embeddings, as the TransE / DistMult tutorials write them in PyTorch: a small
synthetic graph (entities on a few "families", relations that shift between them), entity and
relation tables in nn.Embedding (entities with max_norm=1, renormalised in place as they are
looked up), corrupted triples drawn with torch.randint and torch.where, the margin ranking loss
(nn.MarginRankingLoss against F.relu written out), the L1/L2 scores of TransE from torch.norm,
DistMult's trilinear score with F.logsigmoid and softplus, and filtered ranking metrics (mean
rank, MRR, hits@k) computed with argsort over all candidate tails."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_ent, n_rel, dim = 30, 3, 16
# Entity e belongs to family e % 5; relation r maps family f to family (f + r + 1) % 5.
heads = torch.arange(n_ent).repeat(n_rel)
rels = torch.arange(n_rel).repeat_interleave(n_ent)
gen = torch.Generator().manual_seed(1)
offset = torch.randint(0, n_ent // 5, (len(heads),), generator=gen) * 5
tails = (heads % 5 + rels + 1) % 5 + offset
triples = torch.stack([heads, rels, tails], 1)
perm = torch.randperm(len(triples), generator=gen)
train, test = triples[perm[:75]], triples[perm[75:]]
known = {tuple(t) for t in triples.tolist()}
print("triples", tuple(train.shape), tuple(test.shape), "distinct tails", tails.unique().numel())


class TransE(nn.Module):
    def __init__(self, p=1):
        super().__init__()
        self.ent = nn.Embedding(n_ent, dim, max_norm=1.0)
        self.rel = nn.Embedding(n_rel, dim)
        nn.init.uniform_(self.ent.weight, -6 / dim**0.5, 6 / dim**0.5)
        nn.init.uniform_(self.rel.weight, -6 / dim**0.5, 6 / dim**0.5)
        with torch.no_grad():
            self.rel.weight.div_(self.rel.weight.norm(p=2, dim=1, keepdim=True))
        self.p = p

    def forward(self, h, r, t):
        return -torch.norm(self.ent(h) + self.rel(r) - self.ent(t), p=self.p, dim=-1)


class DistMult(nn.Module):
    def __init__(self):
        super().__init__()
        self.ent = nn.Embedding(n_ent, dim)
        self.rel = nn.Embedding(n_rel, dim)
        nn.init.xavier_uniform_(self.ent.weight)
        nn.init.xavier_uniform_(self.rel.weight)

    def forward(self, h, r, t):
        return (self.ent(h) * self.rel(r) * self.ent(t)).sum(-1)


def corrupt(batch, gen):
    b = batch.clone()
    replace_head = torch.rand(len(b), generator=gen) < 0.5
    rand_ent = torch.randint(0, n_ent, (len(b),), generator=gen)
    b[:, 0] = torch.where(replace_head, rand_ent, b[:, 0])
    b[:, 2] = torch.where(replace_head, b[:, 2], rand_ent)
    return b


def ranks(model, data):
    model.eval()
    out = []
    with torch.no_grad():
        for h, r, t in data.tolist():
            cand = torch.arange(n_ent)
            scores = model(torch.full((n_ent,), h), torch.full((n_ent,), r), cand)
            for c in range(n_ent):  # filtered setting: other true tails do not count
                if c != t and (h, r, c) in known:
                    scores[c] = float("-inf")
            order = torch.argsort(scores, descending=True)
            out.append((order == t).nonzero().item() + 1)
    return torch.tensor(out, dtype=torch.float32)


def report(name, model):
    rk = ranks(model, test)
    print(f"{name}: mean rank {rk.mean().item():.4f} MRR {(1 / rk).mean().item():.5f} "
          f"hits@1 {(rk <= 1).float().mean().item():.4f} hits@5 {(rk <= 5).float().mean().item():.4f}")


for p in (1, 2):
    torch.manual_seed(2)
    model = TransE(p)
    print(f"TransE L{p} entity norms before", f"{model.ent.weight.norm(dim=1).max().item():.5f}")
    loss_fn = nn.MarginRankingLoss(margin=1.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    gen = torch.Generator().manual_seed(3)
    for epoch in range(100):
        neg = corrupt(train, gen)
        pos_s = model(train[:, 0], train[:, 1], train[:, 2])
        neg_s = model(neg[:, 0], neg[:, 1], neg[:, 2])
        loss = loss_fn(pos_s, neg_s, torch.ones_like(pos_s))
        manual = F.relu(1.0 - (pos_s - neg_s)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if epoch % 50 == 0:
            print(f"  epoch {epoch} loss {loss.item():.6f} manual {manual.item():.6f}")
    print(f"  entity norms after {model.ent.weight.norm(dim=1).max().item():.5f}")
    report(f"TransE L{p}", model)

torch.manual_seed(4)
dm = DistMult()
opt = torch.optim.Adam(dm.parameters(), lr=0.02)
gen = torch.Generator().manual_seed(5)
for epoch in range(150):
    neg = corrupt(train, gen)
    pos_s = dm(train[:, 0], train[:, 1], train[:, 2])
    neg_s = dm(neg[:, 0], neg[:, 1], neg[:, 2])
    loss = -(F.logsigmoid(pos_s).mean() + F.logsigmoid(-neg_s).mean())
    reg = 1e-3 * (dm.ent.weight.pow(2).sum() + dm.rel.weight.pow(2).sum())
    opt.zero_grad()
    (loss + reg).backward()
    opt.step()
    if epoch % 50 == 0:
        print(f"DistMult epoch {epoch} loss {loss.item():.6f} softplus form "
              f"{(F.softplus(-pos_s).mean() + F.softplus(neg_s).mean()).item():.6f}")
report("DistMult", dm)
