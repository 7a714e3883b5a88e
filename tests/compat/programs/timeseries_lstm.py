"""Time-series forecasting as the LSTM tutorials write it: sliding windows over a noisy sine
stacked with torch.stack, nn.LSTM(batch_first=True) with explicit h0/c0 zeros built from
x.size(0), the last time step through nn.Sequential(OrderedDict(...)), torch.chunk/split of
the series, a Flatten/Unflatten/Identity head, DataLoader batches, autoregressive multi-step
forecasting under torch.no_grad() with torch.cat, classification of the next move with
F.one_hot(...).float() targets, torch.bucketize, argmax(dim, keepdim=True) and clamp_."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

t = torch.arange(0, 400, dtype=torch.float32)
series = torch.sin(t * 0.1) + 0.5 * torch.sin(t * 0.031) + 0.05 * torch.randn(400)
train_part, test_part = torch.split(series, [320, 80])
print("parts", train_part.shape, test_part.shape, [c.shape[0] for c in torch.chunk(series, 3)])

# normalise with the training statistics
mean, std = train_part.mean(), train_part.std()
norm = (series - mean) / std
print("mean %.5f std %.5f" % (mean.item(), std.item()))

seq_len = 20


def create_sequences(data, seq_length):
    xs, ys = [], []
    for i in range(len(data) - seq_length):
        xs.append(data[i:i + seq_length])
        ys.append(data[i + seq_length])
    return torch.stack(xs).unsqueeze(-1), torch.stack(ys).unsqueeze(-1)


X_train, y_train = create_sequences(norm[:320], seq_len)
X_test, y_test = create_sequences(norm[320 - seq_len:], seq_len)
print("windows", X_train.shape, y_train.shape, X_test.shape)


class LSTMModel(nn.Module):
    def __init__(self, input_dim=1, hidden_dim=32, layer_dim=2, output_dim=1):
        super(LSTMModel, self).__init__()
        self.hidden_dim = hidden_dim
        self.layer_dim = layer_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim, layer_dim, batch_first=True)
        self.head = nn.Sequential(OrderedDict([
            ("fc1", nn.Linear(hidden_dim, 16)),
            ("act", nn.ReLU()),
            ("id", nn.Identity()),
            ("fc2", nn.Linear(16, output_dim)),
        ]))

    def forward(self, x):
        h0 = torch.zeros(self.layer_dim, x.size(0), self.hidden_dim).requires_grad_()
        c0 = torch.zeros(self.layer_dim, x.size(0), self.hidden_dim).requires_grad_()
        out, (hn, cn) = self.lstm(x, (h0.detach(), c0.detach()))
        out = self.head(out[:, -1, :])
        return out


model = LSTMModel()
print(model)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(X_train, y_train), batch_size=50, shuffle=True)
for epoch in range(12):
    model.train()
    epoch_loss = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item() * xb.size(0)
    if epoch % 3 == 2:
        model.eval()
        with torch.no_grad():
            test_loss = criterion(model(X_test), y_test).item()
        print(f"Epoch [{epoch + 1}/12], Train Loss: {epoch_loss / len(X_train):.5f}, Test Loss: {test_loss:.5f}")
assert test_loss < 0.2

# autoregressive forecast of the test part
model.eval()
with torch.no_grad():
    window = norm[320 - seq_len:320].clone().view(1, seq_len, 1)
    preds = []
    for _ in range(15):
        nxt = model(window)
        preds.append(nxt.item())
        window = torch.cat((window[:, 1:, :], nxt.view(1, 1, 1)), dim=1)
forecast = torch.tensor(preds) * std + mean
print("forecast", [round(v, 4) for v in forecast[:5].tolist()])
print("forecast mae %.5f" % (forecast - test_part[:15]).abs().mean().item())

# next move as a 3-class problem: down / flat / up, with one-hot targets
diff = norm[1:] - norm[:-1]
boundaries = torch.tensor([-0.05, 0.05])
classes = torch.bucketize(diff, boundaries)
print("class counts", torch.bincount(classes, minlength=3).tolist())
Xc, _ = create_sequences(norm[:-1], seq_len)
yc = classes[seq_len - 1:len(norm) - 1 - 1]
yc = yc[:Xc.size(0)]
targets = F.one_hot(yc, num_classes=3).float()
print("one-hot", targets.shape, targets[:2].tolist())


class MoveClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(1, 16, batch_first=True)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16, 6), nn.Unflatten(1, (2, 3)))

    def forward(self, x):
        _, (h_n, _) = self.lstm(x)
        logits = self.head(h_n[-1])
        return logits.mean(dim=1)


clf = MoveClassifier()
opt = torch.optim.RMSprop(clf.parameters(), lr=1e-3)
for step in range(40):
    opt.zero_grad()
    logits = clf(Xc)
    loss = F.binary_cross_entropy_with_logits(logits, targets)
    loss.backward()
    opt.step()
    if step % 10 == 9:
        with torch.no_grad():
            pred = logits.argmax(dim=1, keepdim=True)
            acc = (pred.squeeze(1) == yc).float().mean()
        print(f"step {step + 1} loss {loss.item():.5f} acc {acc.item():.4f}")
with torch.no_grad():
    probs = torch.sigmoid(clf(Xc[:4]))
    probs.clamp_(0.05, 0.95)
print("probs", [[round(p, 4) for p in row] for row in probs.tolist()])
