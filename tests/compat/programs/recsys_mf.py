"""A matrix-factorisation recommender as the "collaborative filtering in PyTorch" posts write it:
user/item nn.Embedding tables trained with one Adam and dense biases with another (pylucid has no
sparse gradients, so not the sparse=True + SparseAdam variant), the dot product via (u * v).sum(1) plus global/user/item biases, nn.init.normal_(std=0.01),
an MSELoss on ratings, RMSE per epoch, and the other optimizers people swap in (NAdam, RAdam,
Adamax, Adagrad(lr_decay), Adadelta, AdamW(amsgrad=True), SGD(nesterov)), each a few steps."""
import torch
import torch.nn as nn

torch.manual_seed(0)
n_users, n_items, dim = 30, 40, 6
true_u, true_i = torch.randn(n_users, 3), torch.randn(n_items, 3)
users = torch.randint(0, n_users, (600,))
items = torch.randint(0, n_items, (600,))
ratings = (true_u[users] * true_i[items]).sum(1) + 3.0 + 0.1 * torch.randn(600)


class MF(nn.Module):
    def __init__(self, sparse=False):
        super().__init__()
        self.user_factors = nn.Embedding(n_users, dim, sparse=sparse)
        self.item_factors = nn.Embedding(n_items, dim, sparse=sparse)
        self.user_bias = nn.Parameter(torch.zeros(n_users))
        self.item_bias = nn.Parameter(torch.zeros(n_items))
        self.global_bias = nn.Parameter(torch.tensor(0.0))
        nn.init.normal_(self.user_factors.weight, std=0.1)
        nn.init.normal_(self.item_factors.weight, std=0.1)

    def forward(self, u, i):
        dot = (self.user_factors(u) * self.item_factors(i)).sum(1)
        return dot + self.user_bias[u] + self.item_bias[i] + self.global_bias


model = MF(sparse=False)
sparse_params = list(model.user_factors.parameters()) + list(model.item_factors.parameters())
dense_params = [model.user_bias, model.item_bias, model.global_bias]
opt_sparse = torch.optim.Adam(sparse_params, lr=0.05)
opt_dense = torch.optim.Adam(dense_params, lr=0.05)
loss_fn = nn.MSELoss()
for epoch in range(8):
    perm = torch.randperm(600)
    for b in range(0, 600, 100):
        idx = perm[b:b + 100]
        pred = model(users[idx], items[idx])
        loss = loss_fn(pred, ratings[idx])
        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        opt_sparse.step()
        opt_dense.step()
    with torch.no_grad():
        rmse = (model(users, items) - ratings).pow(2).mean().sqrt().item()
    print(f"epoch {epoch} rmse {rmse:.5f}")
assert rmse < 1.0

for name, make in [("NAdam", lambda p: torch.optim.NAdam(p, lr=0.01, momentum_decay=4e-3)),
                   ("RAdam", lambda p: torch.optim.RAdam(p, lr=0.01, weight_decay=0.01, decoupled_weight_decay=True)),
                   ("Adamax", lambda p: torch.optim.Adamax(p, lr=0.01)),
                   ("Adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
                   ("Adadelta", lambda p: torch.optim.Adadelta(p, lr=1.0, rho=0.9)),
                   ("AdamW-ams", lambda p: torch.optim.AdamW(p, lr=0.01, amsgrad=True)),
                   ("SGD-nesterov", lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True, dampening=0)),
                   ("RMSprop-centered", lambda p: torch.optim.RMSprop(p, lr=0.01, centered=True, momentum=0.5))]:
    torch.manual_seed(1)
    m = MF(sparse=False)
    opt = make(m.parameters())
    for step in range(15):
        loss = loss_fn(m(users[:200], items[:200]), ratings[:200])
        opt.zero_grad()
        loss.backward()
        opt.step()
    state = opt.state_dict()["state"][0]
    print(f"{name:16s} loss {loss.item():.6f} state {sorted(state.keys())}")
