"""A sequence-to-sequence model in the style of the translation tutorial: a GRU encoder and a
GRU decoder with dot-product attention over the encoder outputs, trained with teacher forcing
(mini-batches of equal-length sequences) on NLLLoss (log_softmax outputs) to reverse short digit sequences, then decoded greedily."""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

random.seed(0)
torch.manual_seed(0)
SOS, EOS, n_tokens, hidden_size, max_len = 0, 1, 12, 48, 8


def make_pair():
    n = 5
    src = [random.randint(2, n_tokens - 1) for _ in range(n)]
    return src + [EOS], list(reversed(src)) + [EOS]


pairs = [make_pair() for _ in range(200)]


class EncoderRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(n_tokens, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, input):
        return self.gru(self.embedding(input))


class AttnDecoderRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(n_tokens, hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, n_tokens)

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input)                        # (B, 1, H)
        scores = torch.bmm(hidden.permute(1, 0, 2), encoder_outputs.transpose(1, 2))  # (B, 1, S)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, encoder_outputs)           # (B, 1, H)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return F.log_softmax(self.out(output.squeeze(1)), dim=-1), hidden, weights


encoder, decoder = EncoderRNN(), AttnDecoderRNN()
enc_opt = optim.Adam(encoder.parameters(), lr=0.005)
dec_opt = optim.Adam(decoder.parameters(), lr=0.005)
criterion = nn.NLLLoss()


def train_batch(src, tgt, teacher_forcing):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    enc_out, hidden = encoder(src)
    dec_in = torch.full((src.size(0), 1), SOS, dtype=torch.long)
    loss = 0
    for t in range(tgt.size(1)):
        out, hidden, _ = decoder.forward_step(dec_in, hidden, enc_out)
        loss += criterion(out, tgt[:, t])
        dec_in = tgt[:, t:t + 1] if teacher_forcing else out.topk(1)[1].detach()
    loss.backward()
    enc_opt.step()
    dec_opt.step()
    return loss.item() / tgt.size(1)


def evaluate(src):
    with torch.no_grad():
        enc_out, hidden = encoder(torch.tensor([src]))
        dec_in, decoded = torch.tensor([[SOS]]), []
        for _ in range(max_len):
            out, hidden, attn = decoder.forward_step(dec_in, hidden, enc_out)
            _, topi = out.topk(1)
            if topi.item() == EOS:
                break
            decoded.append(topi.item())
            dec_in = topi.detach()
    return decoded


epoch_losses = []
sources = torch.tensor([p[0] for p in pairs])
targets = torch.tensor([p[1] for p in pairs])
for epoch in range(12):
    total = 0.0
    perm = torch.randperm(len(pairs))
    for i in range(0, len(pairs), 20):
        idx = perm[i:i + 20]
        total += train_batch(sources[idx], targets[idx], teacher_forcing=random.random() < 0.5)
    epoch_losses.append(total / (len(pairs) // 20))
    if epoch % 3 == 2:
        print(f"epoch {epoch} loss {epoch_losses[-1]:.5f}")
assert epoch_losses[-1] < epoch_losses[0] * 0.6
correct = sum(evaluate(src) == tgt[:-1] for src, tgt in pairs[:50])
print("reversed correctly", correct, "of 50")
print("example", pairs[0][0][:-1], "->", evaluate(pairs[0][0]))
