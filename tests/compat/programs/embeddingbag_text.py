"""The "text classification with torchtext" tutorial without torchtext: a vocabulary built with
collections.Counter, text_pipeline/label_pipeline, collate_batch producing a flat token tensor and
offsets via torch.tensor(offsets[:-1]).cumsum(dim=0), nn.EmbeddingBag(mode="mean") with
uniform_ init, SGD + StepLR(1.0, gamma=0.1), clip_grad_norm_, random_split, and predict()."""
import time
from collections import Counter

import torch
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.dataset import random_split

torch.manual_seed(7)
words = {0: "ball goal team score match player win league coach kick".split(),
         1: "stock market price bank trade money shares profit loss fund".split(),
         2: "atom cell gene lab study science data theory test brain".split()}
common = "the a of and to in is it".split()
g = torch.Generator().manual_seed(0)
train_iter = []
for i in range(300):
    label = i % 3
    n = int(torch.randint(4, 12, (1,), generator=g))
    toks = []
    for _ in range(n):
        if torch.rand(1, generator=g).item() < 0.6:
            toks.append(words[label][int(torch.randint(0, 10, (1,), generator=g))])
        else:
            toks.append(common[int(torch.randint(0, 8, (1,), generator=g))])
    train_iter.append((label + 1, " ".join(toks)))

counter = Counter()
for _, line in train_iter:
    counter.update(line.split())
itos = ["<unk>"] + sorted(counter, key=lambda w: (-counter[w], w))
stoi = {w: i for i, w in enumerate(itos)}
vocab = lambda toks: [stoi.get(t, 0) for t in toks]
text_pipeline = lambda x: vocab(x.split())
label_pipeline = lambda x: int(x) - 1
print("vocab size", len(itos), text_pipeline("the goal of science xyz"))


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for (_label, _text) in batch:
        label_list.append(label_pipeline(_label))
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


num_class = len(set([label for (label, text) in train_iter]))
model = TextClassificationModel(len(itos), 16, num_class)
print(model)
EPOCHS, LR, BATCH_SIZE = 5, 5, 16
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
num_train = int(len(train_iter) * 0.8)
split_train_, split_valid_ = random_split(train_iter, [num_train, len(train_iter) - num_train],
                                          generator=torch.Generator().manual_seed(42))
print("split sizes", len(split_train_), len(split_valid_), split_valid_.indices[:5])
train_dataloader = DataLoader(split_train_, batch_size=BATCH_SIZE, shuffle=True, collate_fn=collate_batch)
valid_dataloader = DataLoader(split_valid_, batch_size=BATCH_SIZE, shuffle=False, collate_fn=collate_batch)


def train(dataloader):
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    return total_acc / total_count


def evaluate(dataloader):
    model.eval()
    total_acc, total_count, total_loss = 0, 0, 0.0
    with torch.no_grad():
        for idx, (label, text, offsets) in enumerate(dataloader):
            predicted_label = model(text, offsets)
            total_loss += criterion(predicted_label, label).item()
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count, total_loss


total_accu = None
for epoch in range(1, EPOCHS + 1):
    epoch_start_time = time.time()
    train_acc = train(train_dataloader)
    accu_val, loss_val = evaluate(valid_dataloader)
    if total_accu is not None and total_accu > accu_val:
        scheduler.step()
    else:
        total_accu = accu_val
    print("| end of epoch {:3d} | train {:8.3f} | valid accuracy {:8.3f} | loss {:.5f} | lr {}".format(
        epoch, train_acc, accu_val, loss_val, scheduler.get_last_lr()))


def predict(text, text_pipeline):
    with torch.no_grad():
        text = torch.tensor(text_pipeline(text))
        output = model(text, torch.tensor([0]))
        return output.argmax(1).item() + 1


assert accu_val > 0.9
print("predict", predict("the team won the match with a late goal", text_pipeline),
      predict("bank shares and market profit", text_pipeline))

# The other EmbeddingBag modes and forms.
bag = nn.EmbeddingBag(10, 3, mode="sum")
inp = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offs = torch.tensor([0, 4])
print(bag(inp, offs).shape, torch.allclose(bag(inp, offs)[0], bag.weight[[1, 2, 4, 5]].sum(0)))
bag_max = nn.EmbeddingBag.from_pretrained(torch.arange(30.).view(10, 3), mode="max")
print(bag_max(torch.tensor([[1, 2], [4, 3]])))
ws = torch.tensor([0.5, 1.0, 2.0, 0.1, 1.0, 1.0, 1.0, 1.0])
print(bag(inp, offs, per_sample_weights=ws).shape)
print(nn.functional.embedding_bag(inp, bag.weight, offs, mode="mean").shape)
bag_inc = nn.EmbeddingBag(10, 3, mode="mean", include_last_offset=True, padding_idx=0)
print(bag_inc(torch.tensor([0, 2, 4, 5, 4, 3]), torch.tensor([0, 2, 6])).shape)
