"""In-place updates and indexing the way data-munging and model code writes them: index_add_,
index_copy_, index_fill_, scatter_/scatter_add_/scatter_reduce, gather, index_select,
masked_fill_, torch.where, nonzero, argmax/topk/kthvalue, take, floor division, fill_diagonal_,
boolean and fancy indexing, and the in-place math methods (x.mul_(), x.clamp_min_(), ...), used
for a bag-of-words count, a segment mean, a confusion matrix and a k-NN classifier."""
import torch

torch.manual_seed(9)

# Bag of words: counts per document with index_add_ and scatter_add_.
docs = torch.randint(0, 8, (4, 10))
counts = torch.zeros(4, 8)
counts.scatter_add_(1, docs, torch.ones(4, 10))
counts2 = torch.zeros(4 * 8).index_add_(0, (docs + 8 * torch.arange(4).unsqueeze(1)).flatten(), torch.ones(40))
assert torch.equal(counts, counts2.view(4, 8))
print("counts", counts.tolist())

# Segment mean of feature rows by segment id.
feats = torch.randn(12, 3)
seg = torch.tensor([0, 0, 1, 2, 2, 2, 1, 0, 3, 3, 1, 2])
sums = torch.zeros(4, 3).index_add_(0, seg, feats)
n = torch.bincount(seg, minlength=4).unsqueeze(1).float()
means = sums / n
amax = torch.zeros(4, 3).scatter_reduce(0, seg.unsqueeze(1).expand(-1, 3), feats, reduce="amax", include_self=False)
print("segment means", [[round(v, 5) for v in r] for r in means.tolist()])
print("segment max", [[round(v, 5) for v in r] for r in amax.tolist()])

# One-hot with scatter_, and back with argmax.
labels = torch.tensor([2, 0, 3, 1, 2])
onehot = torch.zeros(5, 4).scatter_(1, labels.unsqueeze(1), 1.0)
assert torch.equal(onehot.argmax(dim=1), labels)
onehot.scatter_(1, torch.tensor([[0], [0], [0], [0], [0]]), 0.5)
print("onehot", onehot.tolist())

# Confusion matrix with index_put_(accumulate) and floor division / remainder.
pred = torch.tensor([0, 2, 1, 1, 0, 2, 2, 1])
true = torch.tensor([0, 1, 1, 1, 2, 2, 0, 1])
cm = torch.zeros(3, 3, dtype=torch.long)
cm.index_put_((true, pred), torch.ones(8, dtype=torch.long), accumulate=True)
flat = true * 3 + pred
assert torch.equal(torch.div(flat, 3, rounding_mode="floor"), true) and torch.equal(flat % 3, pred)
print("confusion", cm.tolist(), "trunc div", torch.div(torch.tensor([-7, 7]), 2, rounding_mode="trunc").tolist(),
      "floor div", torch.div(torch.tensor([-7.0, 7.0]), 2, rounding_mode="floor").tolist())

# k-nearest neighbours: cdist-style distances, topk(largest=False), gather and mode voting.
train = torch.randn(30, 2)
train_y = (train[:, 0] + train[:, 1] > 0).long()
query = torch.randn(6, 2)
d = ((query.unsqueeze(1) - train.unsqueeze(0)) ** 2).sum(-1)
dist, idx = d.topk(5, dim=1, largest=False)
votes = train_y[idx]
pred_q = (votes.sum(1) * 2 > 5).long()
print("knn dist", [round(v, 5) for v in dist[:, 0].tolist()], "pred", pred_q.tolist())
kth = d.kthvalue(3, dim=1)
assert torch.equal(kth.values, dist[:, 2])
print("kthvalue", [round(v, 5) for v in kth.values.tolist()], kth.indices.tolist())
print("gathered", [round(v, 5) for v in d.gather(1, idx[:, :2]).flatten().tolist()])

# Masks, where, nonzero, take, index_select, masked_fill_, index_fill_, index_copy_.
x = torch.arange(12.0).view(3, 4)
print("nonzero", torch.nonzero(x % 5 == 0).tolist(), "as_tuple", [t.tolist() for t in (x > 9).nonzero(as_tuple=True)])
print("where", torch.where(x > 5, x, -x).tolist())
print("take", torch.take(x, torch.tensor([0, 5, 11])).tolist(), "select", x.index_select(1, torch.tensor([3, 0])).tolist())
y = x.clone()
y.masked_fill_(y > 8, -1.0)
y.index_fill_(1, torch.tensor([0]), 100.0)
y.index_copy_(0, torch.tensor([2]), torch.full((1, 4), 7.0))
y[y < 3] = 0.5
y[0, [1, 3]] += 10
print("edited", y.tolist())
m = torch.zeros(4, 4)
m.fill_diagonal_(2.0)
print("diag", m.tolist(), "wrap", torch.zeros(5, 2).fill_diagonal_(1.0, wrap=True).flatten().tolist())

# In-place math methods chained on a buffer, with the autograd-friendly out-of-place twins.
z = torch.linspace(-2, 2, 9)
w = z.clone()
w.mul_(1.5).add_(0.25).clamp_min_(-1.0).clamp_max_(2.0).abs_().sqrt_().neg_().exp_()
assert torch.allclose(w, torch.exp(-torch.sqrt(torch.abs(torch.clamp(z * 1.5 + 0.25, -1.0, 2.0)))))
print("chained", [round(v, 6) for v in w.tolist()])
r = z.clone()
r.floor_()
q = z.clone().round_()
s = z.clone().sigmoid_().log_()
t = z.clone().tanh_().pow_(2)
print("floor", r.tolist(), "round", q.tolist())
print("logsig", [round(v, 6) for v in s.tolist()], "tanh2", [round(v, 6) for v in t.tolist()])
u = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
v = u * 2
v.exp_()
v.sum().backward()
print("inplace grad", [round(g, 5) for g in u.grad.tolist()])
assert torch.allclose(u.grad, 2 * torch.exp(2 * u.detach()))
vals, inds = torch.unique(torch.tensor([[1, 2], [3, 4], [1, 2]]), dim=0, return_inverse=True)
print("unique rows", vals.tolist(), inds.tolist())
print("argmax", x.argmax().item(), x.argmax(dim=0).tolist(), "max", torch.max(x, 1).values.tolist())
