"""The PyTorch word_language_model example at toy size: a Dictionary/Corpus built from text,
batchify() with narrow + view(bsz, -1).t().contiguous(), get_batch with bptt, RNNModel with
getattr(nn, rnn_type) for LSTM and GRU (dropout between layers), tie_weights
(decoder.weight = encoder.weight), init_weights uniform_, init_hidden via weight.new_zeros,
repackage_hidden detaching tuples, manual SGD (p.data.add_(p.grad, alpha=-lr)) after
clip_grad_norm_, lr annealing by 4 when validation stalls, and math.exp perplexity."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1111)
text = ("the cat sat on the mat . the dog sat on the log . a cat saw a dog . the dog saw the cat on the mat . "
        "a bird sat on the dog . the cat and the dog and the bird sat on the log . ") * 12


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, text):
        self.dictionary = Dictionary()
        words = text.split() + ['<eos>']
        for word in words:
            self.dictionary.add_word(word)
        ids = [self.dictionary.word2idx[w] for w in words]
        n = len(ids)
        self.train = torch.tensor(ids[: int(n * 0.8)]).type(torch.int64)
        self.valid = torch.tensor(ids[int(n * 0.8):]).type(torch.int64)


corpus = Corpus(text)
print("vocab", len(corpus.dictionary), "train tokens", corpus.train.size(0))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    data = data.view(bsz, -1).t().contiguous()
    return data


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


bptt = 7


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


train_data = batchify(corpus.train, 8)
val_data = batchify(corpus.valid, 4)
ntokens = len(corpus.dictionary)
criterion = nn.NLLLoss()


def evaluate(model, data_source):
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(4)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


for rnn_type, tied in (("LSTM", True), ("GRU", False), ("RNN_TANH", False)):
    torch.manual_seed(1111)
    model = RNNModel(rnn_type, ntokens, 16, 16, 2, dropout=0.2, tie_weights=tied)
    print(rnn_type, "params", sum(p.numel() for p in model.parameters()), "tied",
          model.decoder.weight is model.encoder.weight, [k for k in model.state_dict()][:4])
    lr = 5.0
    best_val_loss = None
    for epoch in range(1, 5):
        model.train()
        total_loss = 0.
        hidden = model.init_hidden(8)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
        val_loss = evaluate(model, val_data)
        print('| epoch {:3d} | lr {:02.2f} | train loss {:5.3f} | valid loss {:5.3f} | valid ppl {:8.3f}'.format(
            epoch, lr, total_loss / (batch + 1), val_loss, math.exp(val_loss)))
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0
    assert best_val_loss < math.log(ntokens)

model.eval()
hidden = model.init_hidden(1)
input = torch.randint(ntokens, (1, 1), dtype=torch.long)
words = []
with torch.no_grad():
    for i in range(10):
        output, hidden = model(input, hidden)
        word_weights = output.squeeze().div(1.0).exp().cpu()
        word_idx = torch.multinomial(word_weights, 1)[0]
        input.fill_(word_idx)
        words.append(corpus.dictionary.idx2word[word_idx])
print("generated:", " ".join(words))
