"""A CTC sequence recogniser as the speech / handwriting-OCR blog posts build it, on synthetic
"spectrograms": each label is drawn as a few noisy frames of its own pattern, separated by
silence. Conv1d front end + bidirectional GRU + Linear, log_softmax(2) in (T, N, C) layout,
nn.CTCLoss(blank=0, zero_infinity=True) with padded 2-D targets and per-sample lengths (and the
concatenated 1-D form, reduction='none'/'sum', checked against each other), AdamW with
clip_grad_norm_, a ChainedScheduler of ConstantLR warm-up and PolynomialLR decay, greedy decoding
with unique_consecutive, and the character error rate by edit distance."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_labels = 5  # classes 1..5, 0 is the CTC blank
feat = 12
patterns = torch.randn(n_labels + 1, feat)
patterns[0] = 0.0


def make_sample(gen):
    length = int(torch.randint(2, 6, (1,), generator=gen))
    labels = torch.randint(1, n_labels + 1, (length,), generator=gen)
    frames = []
    for lab in labels.tolist():
        frames += [0] * int(torch.randint(0, 3, (1,), generator=gen))
        frames += [lab] * int(torch.randint(2, 4, (1,), generator=gen))
    frames += [0] * int(torch.randint(1, 3, (1,), generator=gen))
    x = patterns[torch.tensor(frames)] + 0.4 * torch.randn(len(frames), feat, generator=gen)
    return x, labels


def collate(samples):
    xs, ys = zip(*samples)
    x_lens = torch.tensor([len(x) for x in xs])
    y_lens = torch.tensor([len(y) for y in ys])
    x = nn.utils.rnn.pad_sequence(xs, batch_first=True)
    y = nn.utils.rnn.pad_sequence(ys, batch_first=True, padding_value=0)
    return x, y, x_lens, y_lens


g = torch.Generator().manual_seed(1234)
train = [make_sample(g) for _ in range(96)]
test = [make_sample(g) for _ in range(24)]
x0, y0, xl0, yl0 = collate(train[:4])
print("batch", tuple(x0.shape), tuple(y0.shape), xl0.tolist(), yl0.tolist())
print(y0)


class CTCModel(nn.Module):
    def __init__(self, feat, hidden, n_classes):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(feat, hidden, kernel_size=3, padding=1), nn.BatchNorm1d(hidden),
                                  nn.GELU())
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, x, lengths):
        h = self.conv(x.transpose(1, 2)).transpose(1, 2)
        packed = nn.utils.rnn.pack_padded_sequence(h, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.fc(out).log_softmax(2).transpose(0, 1)  # (T, N, C) for CTC


model = CTCModel(feat, 24, n_labels + 1)
print(model)
print("parameters", sum(p.numel() for p in model.parameters()))
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
print(ctc)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2)
warmup = torch.optim.lr_scheduler.ConstantLR(optimizer, factor=0.3, total_iters=4)
decay = torch.optim.lr_scheduler.PolynomialLR(optimizer, total_iters=60, power=2.0)
scheduler = torch.optim.lr_scheduler.ChainedScheduler([warmup, decay])


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(2).transpose(0, 1)  # (N, T)
    out = []
    for seq, n in zip(best, lengths.tolist()):
        collapsed = torch.unique_consecutive(seq[:n])
        out.append(collapsed[collapsed != 0].tolist())
    return out


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
    return d[len(b)]


def evaluate(samples):
    model.eval()
    x, y, xl, yl = collate(samples)
    with torch.no_grad():
        lp = model(x, xl)
        loss = ctc(lp, y, xl, yl)
    hyps = greedy_decode(lp, xl)
    refs = [yy[:n].tolist() for yy, n in zip(y, yl.tolist())]
    errors = sum(edit_distance(h, r) for h, r in zip(hyps, refs))
    model.train()
    return loss.item(), errors / int(yl.sum()), hyps[:3], refs[:3]


loss0, cer0, _, _ = evaluate(test)
print(f"before: loss {loss0:.4f} cer {cer0:.3f}")
step = 0
for epoch in range(5):
    perm = torch.randperm(len(train))
    total = 0.0
    for i in range(0, len(train), 16):
        x, y, xl, yl = collate([train[j] for j in perm[i:i + 16].tolist()])
        log_probs = model(x, xl)
        loss = ctc(log_probs, y, xl, yl)
        optimizer.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
        optimizer.step()
        scheduler.step()
        total += loss.item()
        step += 1
        if step in (1, 2, 5, 6):
            print(f"step {step} loss {loss.item():.5f} grad-norm {norm.item():.4f} lr {scheduler.get_last_lr()[0]:.6f}")
    print(f"epoch {epoch} mean loss {total / 6:.5f} lr {optimizer.param_groups[0]['lr']:.6f}")
loss1, cer1, hyps, refs = evaluate(test)
print(f"after: loss {loss1:.4f} cer {cer1:.3f}")
print("hyps", hyps)
print("refs", refs)
assert loss1 < loss0 and cer1 < cer0

print("== CTC loss forms ==")
torch.manual_seed(5)
T, N, C = 12, 3, 6
logits = torch.randn(T, N, C, dtype=torch.float64, requires_grad=True)
lp = logits.log_softmax(2)
targets = torch.tensor([[1, 2, 2, 3], [4, 4, 0, 0], [5, 1, 3, 0]])
tl = torch.tensor([4, 2, 3])
il = torch.tensor([12, 9, 7])
none = F.ctc_loss(lp, targets, il, tl, reduction="none")
print("none", none)
flat = torch.cat([targets[i, :n] for i, n in enumerate(tl.tolist())])
print("1-D targets equal", torch.allclose(F.ctc_loss(lp, flat, il, tl, reduction="none"), none))
print("sum", F.ctc_loss(lp, targets, tuple(il.tolist()), tuple(tl.tolist()), reduction="sum"))
print("mean", F.ctc_loss(lp, targets, il, tl), (none / tl).mean())
impossible = F.ctc_loss(lp, torch.tensor([[1, 1, 1, 1, 1, 1, 1]]).expand(3, 7), torch.tensor([12, 5, 12]),
                        torch.tensor([7, 7, 7]), reduction="none")
print("impossible", impossible)
print("zero_infinity", F.ctc_loss(lp, torch.tensor([[1, 1, 1, 1, 1, 1, 1]]).expand(3, 7), torch.tensor([12, 5, 12]),
                                  torch.tensor([7, 7, 7]), reduction="none", zero_infinity=True))
none.sum().backward()
print("grad sums per frame vanish", bool(logits.grad[:, 1].sum(1).abs().max() < 1e-12))
print("grad (sample 1, frame 0)", logits.grad[0, 1])
print("grad beyond input length", logits.grad[9:, 1].abs().max().item())
print("gradcheck", torch.autograd.gradcheck(
    lambda z: F.ctc_loss(z.log_softmax(2), targets, il, tl, reduction="sum"), (logits.detach().requires_grad_(),)))
