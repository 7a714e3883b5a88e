"""A character-level language model: one model with nn.LSTM (two layers, dropout between them)
and one with nn.RNN, each over nn.Embedding, trained with truncated sequences, Adam and
nn.utils.clip_grad_norm_, then used to generate text greedily carrying the hidden state."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
text = "hello world, hello there, hello again. the world says hello back to you. " * 6
chars = sorted(set(text))
char_to_ix = {ch: i for i, ch in enumerate(chars)}
ix_to_char = {i: ch for i, ch in enumerate(chars)}
encoded = torch.tensor([char_to_ix[c] for c in text])
vocab_size, seq_len, hidden = len(chars), 24, 64


class CharModel(nn.Module):
    def __init__(self, cell="lstm"):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, 32)
        if cell == "lstm":
            self.rnn = nn.LSTM(32, hidden, num_layers=2, batch_first=True, dropout=0.1)
        else:
            self.rnn = nn.RNN(32, hidden, nonlinearity="tanh", batch_first=True)
        self.fc = nn.Linear(hidden, vocab_size)

    def forward(self, x, state=None):
        out, state = self.rnn(self.embed(x), state)
        return self.fc(out), state


def batches(batch_size=8):
    starts = torch.randint(0, len(encoded) - seq_len - 1, (batch_size,))
    x = torch.stack([encoded[s:s + seq_len] for s in starts])
    y = torch.stack([encoded[s + 1:s + seq_len + 1] for s in starts])
    return x, y


def train(model, steps=60):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    first = None
    for step in range(steps):
        model.train()
        x, y = batches()
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab_size), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        first = loss.item() if first is None else first
        if step % 20 == 0 or step == steps - 1:
            print(f"step {step:3d} loss {loss.item():.4f} grad norm {norm.item():.4f}")
    return first, loss.item()


@torch.no_grad()
def generate(model, prompt="hello", n=30):
    model.eval()
    x = torch.tensor([[char_to_ix[c] for c in prompt]])
    logits, state = model(x)
    out = prompt
    for _ in range(n):
        ix = logits[0, -1].argmax().item()
        out += ix_to_char[ix]
        logits, state = model(torch.tensor([[ix]]), state)
    return out


for cell in ("lstm", "rnn"):
    model = CharModel(cell)
    first, last = train(model)
    assert last < first * 0.8, (first, last)
    sample = generate(model)
    print(cell, "sample:", repr(sample))
    h = model.rnn(model.embed(encoded[:10].unsqueeze(0)))[1]
    shapes = [tuple(t.shape) for t in h] if isinstance(h, tuple) else [tuple(h.shape)]
    print(cell, "state shapes", shapes)
