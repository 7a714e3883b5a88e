"""Variable-length sequences the nn.utils.rnn way: pad_sequence, pack_padded_sequence (sorted and
enforce_sorted=False), pack_sequence, an LSTM and a GRU run on the PackedSequence and
pad_packed_sequence back; the final hidden states are checked against running each sequence
alone, then a small length-aware classifier is trained."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(4)
lengths = [5, 2, 7, 3]
seqs = [torch.randn(n, 3) for n in lengths]
padded = pad_sequence(seqs, batch_first=True)
print("padded", list(padded.shape), f"sum {padded.sum().item():.6f}")
print("pad value -1 time-major", list(pad_sequence(seqs, padding_value=-1.0).shape))

lstm = nn.LSTM(3, 4, batch_first=True)
packed = pack_padded_sequence(padded, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
print("batch_sizes", packed.batch_sizes.tolist(), "sorted_indices", packed.sorted_indices.tolist())
out, (h, c) = lstm(packed)
unpacked, out_lengths = pad_packed_sequence(out, batch_first=True)
print("unpacked", list(unpacked.shape), "lengths", out_lengths.tolist())
for i, s in enumerate(seqs):
    o, (hi, ci) = lstm(s.unsqueeze(0))
    assert torch.allclose(h[0, i], hi[0, 0], atol=1e-6) and torch.allclose(c[0, i], ci[0, 0], atol=1e-6)
    assert torch.allclose(unpacked[i, :lengths[i]], o[0], atol=1e-6)
    assert (unpacked[i, lengths[i]:] == 0).all()
print("final h", [round(v, 5) for v in h[0, :, 0].tolist()])

order = sorted(range(4), key=lambda i: -lengths[i])
gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)
packed2 = pack_sequence([seqs[i] for i in order])
out2, h2 = gru(packed2)
pad2, len2 = pad_packed_sequence(out2, padding_value=0.0)
print("gru packed", list(pad2.shape), len2.tolist(), "h", list(h2.shape), f"{h2.abs().sum().item():.5f}")


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8, padding_idx=0)
        self.rnn = nn.LSTM(8, 16, batch_first=True)
        self.out = nn.Linear(16, 2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.emb(tokens), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.rnn(packed)
        return self.out(h[-1])


# Class 1 when the sequence contains token 9, padded with 0 to the longest.
data, labels, lens = [], [], []
for i in range(64):
    n = int(torch.randint(2, 9, (1,)))
    s = torch.randint(1, 9, (n,))
    if i % 2:
        s[torch.randint(0, n, (1,))] = 9
    data.append(s)
    labels.append(i % 2)
    lens.append(n)
tokens = pad_sequence(data, batch_first=True)
labels = torch.tensor(labels)
model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for epoch in range(40):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens, torch.tensor(lens)), labels)
    loss.backward()
    opt.step()
    if epoch % 10 == 0 or epoch == 39:
        print(f"epoch {epoch} loss {loss.item():.5f}")
acc = (model(tokens, torch.tensor(lens)).argmax(1) == labels).float().mean().item()
print(f"accuracy {acc:.4f}")
assert acc > 0.9
