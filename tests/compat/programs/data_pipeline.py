"""Data-loading recipes from the "imbalanced data" and "custom Dataset" posts: a map-style
Dataset with a transform, class weights from torch.bincount for WeightedRandomSampler(weights,
num_samples, replacement=True, generator=...), random_split with fractions [0.8, 0.2], Subset
and ConcatDataset, BatchSampler over SequentialSampler/RandomSampler, a collate_fn that pads
variable-length items with pad_sequence and returns lengths, DataLoader(drop_last, generator,
worker_init_fn unused with num_workers=0), an IterableDataset with get_worker_info, default_collate
of dicts, and a confusion matrix by bincount(minlength) with precision/recall/F1 per class."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                              SequentialSampler, Subset, WeightedRandomSampler, get_worker_info, random_split)
from torch.utils.data.dataloader import default_collate

torch.manual_seed(0)


class Seqs(Dataset):
    def __init__(self, n, transform=None):
        g = torch.Generator().manual_seed(n)
        self.lengths = torch.randint(2, 7, (n,), generator=g)
        self.labels = (torch.rand(n, generator=g) < 0.2).long()  # imbalanced: ~20% positives
        self.data = [torch.randn(int(l), 3, generator=g) + 1.5 * self.labels[i] for i, l in enumerate(self.lengths)]
        self.transform = transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        x = self.data[idx]
        if self.transform:
            x = self.transform(x)
        return x, self.labels[idx]


def collate(batch):
    xs, ys = zip(*batch)
    lengths = torch.tensor([len(x) for x in xs])
    return pad_sequence(xs, batch_first=True), lengths, torch.stack(ys)


ds = Seqs(200, transform=lambda x: (x - x.mean(0)) / (x.std(0) + 1e-5) * 0.5 + x.mean(0))
train_ds, val_ds = random_split(ds, [0.8, 0.2], generator=torch.Generator().manual_seed(42))
print("split", len(train_ds), len(val_ds), train_ds.indices[:6])
train_labels = ds.labels[train_ds.indices]
class_count = torch.bincount(train_labels)
class_weights = 1.0 / class_count.float()
sample_weights = class_weights[train_labels]
print("class_count", class_count.tolist(), "weights", [round(w, 6) for w in class_weights.tolist()])
sampler = WeightedRandomSampler(sample_weights, num_samples=len(sample_weights), replacement=True,
                                generator=torch.Generator().manual_seed(1))
drawn = torch.tensor(list(sampler))
print("sampled positives", ds.labels[torch.tensor(train_ds.indices)[drawn]].float().mean().item())
train_loader = DataLoader(train_ds, batch_size=16, sampler=sampler, collate_fn=collate, drop_last=True)
val_loader = DataLoader(val_ds, batch_size=64, shuffle=False, collate_fn=collate)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 16, batch_first=True)
        self.fc = nn.Linear(16, 2)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return self.fc(h[-1])


model = Model()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(4):
    model.train()
    tot = 0.0
    for x, lengths, y in train_loader:
        loss = F.cross_entropy(model(x, lengths), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        tot += loss.item()
    model.eval()
    with torch.no_grad():
        preds, ys = [], []
        for x, lengths, y in val_loader:
            preds.append(model(x, lengths).argmax(1))
            ys.append(y)
        preds, ys = torch.cat(preds), torch.cat(ys)
    cm = torch.bincount(ys * 2 + preds, minlength=4).reshape(2, 2)
    tp = cm.diag().float()
    precision = tp / cm.sum(0).clamp(min=1)
    recall = tp / cm.sum(1).clamp(min=1)
    f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-8)
    print(f"epoch {epoch} loss {tot / len(train_loader):.5f} cm {cm.tolist()} f1 {[round(v, 4) for v in f1.tolist()]}")
assert f1.mean().item() > 0.6

both = ConcatDataset([Subset(ds, range(0, 5)), Subset(ds, [10, 11])])
print("concat", len(both), both.cumulative_sizes, both[5][1].item(), both[6][0].shape)
print("batch sampler", list(BatchSampler(SequentialSampler(range(10)), batch_size=4, drop_last=False)))
print("random sampler", list(RandomSampler(range(6), generator=torch.Generator().manual_seed(3))))
print("random sampler n", list(RandomSampler(range(4), replacement=True, num_samples=6,
                                             generator=torch.Generator().manual_seed(3))))
print("weighted no repl", list(WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0], 3, replacement=False,
                                                     generator=torch.Generator().manual_seed(0))))


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        print("worker info", info)
        for i in range(self.n):
            yield {"x": torch.tensor([float(i), i * 2.0]), "y": i % 3}


for batch in DataLoader(Stream(5), batch_size=2):
    print({k: v.tolist() for k, v in batch.items()})
print(default_collate([{"a": 1, "b": torch.ones(2)}, {"a": 2, "b": torch.zeros(2)}]))
print(default_collate([(1.5, "s"), (2.5, "t")]))
gen = torch.Generator().manual_seed(7)
loader = DataLoader(range(10), batch_size=3, shuffle=True, generator=gen)
print("shuffled", [b.tolist() for b in loader], [b.tolist() for b in loader])
