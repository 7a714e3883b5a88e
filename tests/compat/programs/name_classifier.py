"""The "NLP from scratch: classifying names with a character-level RNN" tutorial: names turned
into one-hot tensors with torch.zeros and index assignment (letterToIndex, lineToTensor), a
hand-written RNN cell (nn.Linear on torch.cat of input and hidden, nn.LogSoftmax) trained with
nn.NLLLoss and the tutorial's manual update p.data.add_(p.grad.data, alpha=-lr), random
examples by torch.randint-free random.choice, predictions read with topk, then an nn.RNN
version trained on whole padded batches; prints losses, a confusion matrix and predictions."""
import random
import string

import torch
import torch.nn as nn

random.seed(1)
torch.manual_seed(1)

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)

# Synthetic "languages": each has its own favourite syllables, so the endings carry the class.
syllables = {
    "Italian": ["ri", "ni", "lo", "cci", "tti", "no"],
    "Japanese": ["ka", "to", "mo", "shi", "ya", "ki"],
    "Russian": ["ov", "sky", "in", "ev", "ko", "vich"],
    "Scottish": ["mac", "son", "ie", "gor", "ach", "an"],
}
all_categories = list(syllables)
n_categories = len(all_categories)


def make_name(lang):
    parts = [random.choice(syllables[lang]) for _ in range(random.randint(2, 3))]
    return "".join(parts).capitalize()


category_lines = {c: [make_name(c) for _ in range(40)] for c in all_categories}


def letterToIndex(letter):
    return all_letters.find(letter)


def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(letterToTensor("J").nonzero().tolist())
print(lineToTensor("Jones").size())


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = torch.tanh(self.i2h(combined))
        output = self.softmax(self.i2o(combined))
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


n_hidden = 64
rnn = RNN(n_letters, n_hidden, n_categories)
print(rnn)

output, next_hidden = rnn(letterToTensor("A"), rnn.initHidden())
print([round(v, 5) for v in output[0].tolist()])


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


print(categoryFromOutput(output))


def randomTrainingExample():
    category = random.choice(all_categories)
    line = random.choice(category_lines[category])
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    line_tensor = lineToTensor(line)
    return category, line, category_tensor, line_tensor


criterion = nn.NLLLoss()
learning_rate = 0.01


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


n_iters, print_every = 1500, 300
current_loss, all_losses = 0, []
for it in range(1, n_iters + 1):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss
    if it % print_every == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = "✓" if guess == category else "✗ (%s)" % category
        print("%d %d%% %.4f %s / %s %s" % (it, it / n_iters * 100, loss, line, guess, correct))
        all_losses.append(current_loss / print_every)
        current_loss = 0
print("avg losses", ["%.4f" % l for l in all_losses])
assert all_losses[-1] < all_losses[0]

confusion = torch.zeros(n_categories, n_categories)


def evaluate(line_tensor):
    hidden = rnn.initHidden()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    return output


with torch.no_grad():
    for category in all_categories:
        for line in category_lines[category][:20]:
            output = evaluate(lineToTensor(line))
            guess, guess_i = categoryFromOutput(output)
            confusion[all_categories.index(category)][guess_i] += 1
for i in range(n_categories):
    confusion[i] = confusion[i] / confusion[i].sum()
print(confusion)
print("diag", confusion.diag().mean().item())


def predict(input_line, n_predictions=3):
    print("\n> %s" % input_line)
    with torch.no_grad():
        output = evaluate(lineToTensor(input_line))
        topv, topi = output.topk(n_predictions, 1, True)
        for i in range(n_predictions):
            value = topv[0][i].item()
            category_index = topi[0][i].item()
            print("(%.4f) %s" % (value, all_categories[category_index]))


predict("Kashimoto")
predict("Macgorson")
predict("Ivanovich")


# The same task with nn.RNN over a padded batch, reading the last real step of each name.
class BatchedRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(n_letters, n_hidden, nonlinearity="tanh", batch_first=False)
        self.h2o = nn.Linear(n_hidden, n_categories)

    def forward(self, x, lengths):
        out, h_n = self.rnn(x)
        last = out[lengths - 1, torch.arange(x.size(1))]
        return nn.functional.log_softmax(self.h2o(last), dim=1)


names = [(l, all_categories.index(c)) for c in all_categories for l in category_lines[c]]
max_len = max(len(l) for l, _ in names)
X = torch.zeros(max_len, len(names), n_letters)
for b, (l, _) in enumerate(names):
    X[:len(l), b] = lineToTensor(l)[:, 0]
lengths = torch.tensor([len(l) for l, _ in names])
y = torch.tensor([c for _, c in names])
model = BatchedRNN()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(60):
    opt.zero_grad()
    loss = criterion(model(X, lengths), y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if epoch % 15 == 0 or epoch == 59:
        print(f"batched epoch {epoch} loss {loss.item():.5f}")
with torch.no_grad():
    acc = (model(X, lengths).argmax(dim=1) == y).float().mean()
print(f"batched accuracy {acc:.4f}")
