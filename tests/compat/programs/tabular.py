"""A tabular model as the fastai-style blog posts write it in plain PyTorch: a Dataset class
returning (categorical LongTensor, continuous FloatTensor, target), one nn.Embedding per
categorical column sized by the rule min(50, (n+1)//2) kept in an nn.ModuleList and an
nn.ModuleDict, embedding dropout, BatchNorm1d on the continuous columns, a ParameterList of
per-column scales, Linear-ReLU-BatchNorm-Dropout blocks, BCEWithLogitsLoss(pos_weight=...),
OneCycleLR, DataLoader with drop_last, early stopping on a validation AUC computed by ranking."""
import copy

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)
rng = np.random.RandomState(0)
N = 600
cards = {"city": 7, "job": 5, "weekday": 7}
cat_data = np.stack([rng.randint(0, c, N) for c in cards.values()], 1)
cont_data = rng.randn(N, 4).astype(np.float32) * np.array([1, 10, 0.1, 3], dtype=np.float32)
logit = (cat_data[:, 0] % 3 - 1) * 1.2 + cont_data[:, 0] + 0.1 * cont_data[:, 1] - (cat_data[:, 2] >= 5) * 1.5
y = (logit + 0.5 * rng.randn(N) > 0.5).astype(np.float32)
print("positives", y.mean())


class TabularDataset(Dataset):
    def __init__(self, cats, conts, y):
        self.cats = torch.from_numpy(cats).long()
        self.conts = torch.from_numpy(conts).float()
        self.y = torch.from_numpy(y).float().unsqueeze(1)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, idx):
        return self.cats[idx], self.conts[idx], self.y[idx]


class TabularModel(nn.Module):
    def __init__(self, emb_szs, n_cont, out_sz, layers, p=0.3, emb_drop=0.1):
        super().__init__()
        self.embeds = nn.ModuleList([nn.Embedding(ni, nf) for ni, nf in emb_szs])
        self.named_embeds = nn.ModuleDict({name: nn.Embedding(ni, 2) for name, (ni, _) in zip(cards, emb_szs)})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in range(n_cont)])
        self.emb_drop = nn.Dropout(emb_drop)
        self.bn_cont = nn.BatchNorm1d(n_cont)
        layerlist = []
        n_emb = sum(nf for ni, nf in emb_szs) + 2 * len(emb_szs)
        n_in = n_emb + n_cont
        for i in layers:
            layerlist.append(nn.Linear(n_in, i))
            layerlist.append(nn.ReLU(inplace=True))
            layerlist.append(nn.BatchNorm1d(i))
            layerlist.append(nn.Dropout(p))
            n_in = i
        layerlist.append(nn.Linear(layers[-1], out_sz))
        self.layers = nn.Sequential(*layerlist)

    def forward(self, x_cat, x_cont):
        embeddings = []
        for i, e in enumerate(self.embeds):
            embeddings.append(e(x_cat[:, i]))
        for i, (name, e) in enumerate(self.named_embeds.items()):
            embeddings.append(e(x_cat[:, i]))
        x = torch.cat(embeddings, 1)
        x = self.emb_drop(x)
        x_cont = torch.stack([x_cont[:, i] * s for i, s in enumerate(self.scales)], 1)
        x_cont = self.bn_cont(x_cont)
        x = torch.cat([x, x_cont], 1)
        return self.layers(x)


emb_szs = [(size, min(50, (size + 1) // 2)) for size in cards.values()]
print("emb_szs", emb_szs)
perm = rng.permutation(N)
tr, va = perm[:480], perm[480:]
train_ds = TabularDataset(cat_data[tr], cont_data[tr], y[tr])
valid_ds = TabularDataset(cat_data[va], cont_data[va], y[va])
train_dl = DataLoader(train_ds, batch_size=64, shuffle=True, drop_last=True)
valid_dl = DataLoader(valid_ds, batch_size=256)
model = TabularModel(emb_szs, 4, 1, [32, 16], p=0.2)
print(model)
print("param names", [n for n, _ in model.named_parameters()][:8])
print("n params", sum(p.numel() for p in model.parameters()))
pos_weight = torch.tensor([(1 - y[tr].mean()) / y[tr].mean()])
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
epochs = 12
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, steps_per_epoch=len(train_dl), epochs=epochs)


def auc(scores, labels):
    order = torch.argsort(scores, descending=True)
    labels = labels[order]
    tps = torch.cumsum(labels, 0)
    fps = torch.cumsum(1 - labels, 0)
    tpr = tps / tps[-1]
    fpr = fps / fps[-1]
    return torch.trapz(tpr, fpr).item()


best_auc, best_state, patience, bad = 0.0, None, 3, 0
for epoch in range(epochs):
    model.train()
    total = 0.0
    for cats, conts, target in train_dl:
        optimizer.zero_grad()
        loss = criterion(model(cats, conts), target)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item() * len(target)
    model.eval()
    with torch.no_grad():
        scores = torch.cat([model(c, x).squeeze(1) for c, x, _ in valid_dl])
        labels = torch.cat([t.squeeze(1) for _, _, t in valid_dl])
    val_auc = auc(scores, labels)
    acc = ((scores > 0).float() == labels).float().mean().item()
    print(f"epoch {epoch:2d} loss {total / (len(train_dl) * 64):.5f} val_auc {val_auc:.4f} acc {acc:.4f} "
          f"lr {scheduler.get_last_lr()[0]:.6f}")
    if val_auc > best_auc:
        best_auc, best_state, bad = val_auc, copy.deepcopy(model.state_dict()), 0
    else:
        bad += 1
        if bad >= patience:
            print("early stopping")
            break
model.load_state_dict(best_state)
print("best auc", round(best_auc, 4), "bn_cont running_var", model.bn_cont.running_var.tolist())
print("scales", [round(s.item(), 5) for s in model.scales])
print(model.named_embeds["job"].weight.shape, list(model.named_embeds.keys()), len(model.scales))
assert best_auc > 0.8
