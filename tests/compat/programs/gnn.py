"""A graph neural network without torch_geometric, as the "GCN from scratch" posts write it:
edge_index of shape (2, E), degree via torch.zeros(...).index_add_ / scatter_add_, symmetric
normalisation with deg.pow(-0.5) and masked_fill of inf, message passing with index_select +
index_add_, GraphSAGE-style mean and max aggregation with scatter_reduce(reduce="mean"/"amax",
include_self=False), a dense adjacency path with torch.sparse-free matmul, global mean pooling
by batch vector, and node classification on a synthetic two-community graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(12)
N, C = 40, 2
labels = torch.arange(N) % C
src, dst = [], []
g = torch.Generator().manual_seed(3)
for i in range(N):
    for j in range(i + 1, N):
        p = 0.25 if labels[i] == labels[j] else 0.03
        if torch.rand(1, generator=g).item() < p:
            src += [i, j]
            dst += [j, i]
edge_index = torch.tensor([src, dst], dtype=torch.long)
x = torch.randn(N, 6) + labels.float().unsqueeze(1) * 0.5
print("edges", edge_index.size(1), edge_index[:, :6].tolist())


def add_self_loops(edge_index, num_nodes):
    loop = torch.arange(num_nodes, device=edge_index.device).unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop], dim=1)


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.empty(out_channels))
        self.reset_parameters()

    def reset_parameters(self):
        self.lin.reset_parameters()
        self.bias.data.zero_()

    def forward(self, x, edge_index):
        edge_index = add_self_loops(edge_index, num_nodes=x.size(0))
        x = self.lin(x)
        row, col = edge_index
        deg = torch.zeros(x.size(0), dtype=x.dtype).index_add_(0, col, torch.ones(col.size(0), dtype=x.dtype))
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt[deg_inv_sqrt == float('inf')] = 0
        norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
        msg = norm.view(-1, 1) * x.index_select(0, row)
        out = torch.zeros_like(x).index_add_(0, col, msg)
        return out + self.bias


class SAGEConv(nn.Module):
    def __init__(self, in_channels, out_channels, aggr="mean"):
        super().__init__()
        self.aggr = aggr
        self.lin_l = nn.Linear(in_channels, out_channels)
        self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index[0], edge_index[1]
        index = dst.unsqueeze(-1).expand(-1, x.size(1))
        out = torch.zeros(x.size(0), x.size(1), dtype=x.dtype)
        out = out.scatter_reduce(0, index, x[src], reduce=self.aggr, include_self=False)
        return self.lin_l(out) + self.lin_r(x)


class GCN(nn.Module):
    def __init__(self, conv=GCNConv, **kw):
        super().__init__()
        self.conv1 = conv(6, 16, **kw)
        self.conv2 = conv(16, C, **kw)

    def forward(self, x, edge_index):
        x = F.relu(self.conv1(x, edge_index))
        x = F.dropout(x, p=0.5, training=self.training)
        return F.log_softmax(self.conv2(x, edge_index), dim=1)


train_mask = torch.zeros(N, dtype=torch.bool)
train_mask[:N // 2] = True
test_mask = ~train_mask
for name, kw in [("gcn", {}), ("sage-mean", {"conv": SAGEConv, "aggr": "mean"}),
                 ("sage-max", {"conv": SAGEConv, "aggr": "amax"})]:
    torch.manual_seed(0)
    model = GCN(**kw)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(60):
        model.train()
        optimizer.zero_grad()
        out = model(x, edge_index)
        loss = F.nll_loss(out[train_mask], labels[train_mask])
        loss.backward()
        optimizer.step()
    model.eval()
    pred = model(x, edge_index).argmax(dim=1)
    correct = (pred[test_mask] == labels[test_mask]).sum()
    acc = int(correct) / int(test_mask.sum())
    assert acc > 0.8
    print(f"{name}: loss {loss.item():.5f} accuracy {acc:.4f}")

# Dense adjacency and scatter_add_ degree agree with the index_add_ path.
A = torch.zeros(N, N)
A[edge_index[0], edge_index[1]] = 1.0
A_hat = A + torch.eye(N)
D = A_hat.sum(1)
deg = torch.zeros(N).scatter_add_(0, edge_index[1], torch.ones(edge_index.size(1))) + 1
print("degree agree", torch.equal(D, deg))
D_inv_sqrt = torch.diag(D.pow(-0.5))
A_norm = D_inv_sqrt @ A_hat @ D_inv_sqrt
print("A_norm row sums", A_norm.sum(1)[:4].tolist())
torch.manual_seed(0)
conv = GCNConv(6, 3)
dense = A_norm @ conv.lin(x) + conv.bias
print("dense == sparse", torch.allclose(dense, conv(x, edge_index), atol=1e-5))

# Graph-level readout: global mean/max pool by a batch vector.
batch = torch.tensor([0] * 15 + [1] * 25)
h = torch.randn(N, 4)
count = torch.bincount(batch).float().unsqueeze(1)
mean_pool = torch.zeros(2, 4).index_add_(0, batch, h) / count
max_pool = torch.full((2, 4), float("-inf")).scatter_reduce(0, batch.view(-1, 1).expand(-1, 4), h, reduce="amax")
print("mean pool", mean_pool.tolist())
print("max pool", max_pool.tolist())
print("sum via scatter", torch.zeros(2, 4).scatter(0, batch.view(-1, 1).expand(-1, 4), h, reduce="add").tolist())
print("prod", torch.ones(2, 4).scatter_reduce(0, batch.view(-1, 1).expand(-1, 4), h, reduce="prod")[0].tolist())
print("unique", torch.unique(edge_index[0], return_counts=True)[1][:8].tolist())
