"""The "Dive into Deep Learning" from-scratch chapters, written its way: synthetic_data with
torch.normal(0, 1, (n, len(w))) and y.reshape((-1, 1)), a data_iter generator over a shuffled
index list, linreg/squared_loss/sgd with param -= lr * param.grad / batch_size and
param.grad.zero_() under torch.no_grad(), softmax regression from scratch (X_exp / partition
with keepdim, cross_entropy by -torch.log(y_hat[range(len(y_hat)), y])), an Accumulator and
accuracy via y_hat.type(y.dtype) == y, an MLP from scratch with relu as torch.max(X, zeros_like)
and dropout_layer by (torch.rand(X.shape) > dropout).float() masks, weight decay by an l2_penalty
and by a per-group weight_decay in SGD, and the preliminaries' tensor one-liners (arange(12.0),
numel, sum(axis=...), cumsum, dot/mv/mm, norm, exp, X == Y, id() after in-place updates)."""
import random

import torch
from torch import nn

torch.manual_seed(0)
random.seed(0)

# --- preliminaries ---
x = torch.arange(12, dtype=torch.float32)
print(x, x.numel(), x.shape)
X = x.reshape(3, 4)
Y = torch.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
print(torch.cat((X, Y), dim=0).shape, torch.cat((X, Y), dim=1).shape)
print(X == Y)
print(X.sum(), X.sum(axis=0), X.sum(axis=[0, 1]), X.mean(axis=0))
print(X.cumsum(axis=0))
print(X.sum(axis=1, keepdims=True))
print(X / X.sum(axis=1, keepdims=True))
before = id(Y)
Y = Y + X
print(id(Y) == before)
Z = torch.zeros_like(Y)
before = id(Z)
Z[:] = X + Y
X += Y
print(id(Z) == before, Z[0])
a = torch.arange(4.0)
print(torch.dot(a, a), torch.mv(X, a), torch.mm(X, Y.T).shape, torch.norm(a), torch.abs(a).sum())
print(torch.exp(a), a.sum() / a.numel(), type(a.numpy()), a.item if False else float(a[1]))
A = X.numpy()
B = torch.from_numpy(A)
print(type(A), type(B), torch.tensor([3.5]).item(), float(torch.tensor([3.5])), int(torch.tensor([3.5])))

# --- automatic differentiation chapter ---
x = torch.arange(4.0)
x.requires_grad_(True)
y = 2 * torch.dot(x, x)
y.backward()
print(x.grad, x.grad == 4 * x)
x.grad.zero_()
y = x.sum()
y.backward()
print(x.grad)
x.grad.zero_()
y = x * x
y.sum().backward()
print(x.grad)
x.grad.zero_()
y = x * x
u = y.detach()
z = u * x
z.sum().backward()
print(x.grad == u)


def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c


a = torch.randn(size=(), requires_grad=True)
d = f(a)
d.backward()
print(a.grad == d / a)


# --- linear regression from scratch ---
def synthetic_data(w, b, num_examples):
    X = torch.normal(0, 1, (num_examples, len(w)))
    y = torch.matmul(X, w) + b
    y += torch.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 1000)
print("features:", features[0], "\nlabel:", labels[0])


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i:min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


lr, num_epochs, batch_size = 0.03, 3, 10
net, loss = linreg, squared_loss
for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)
        l.sum().backward()
        sgd([w, b], lr, batch_size)
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f"epoch {epoch + 1}, loss {float(train_l.mean()):f}")
print(f"error in estimating w: {true_w - w.reshape(true_w.shape)}")
print(f"error in estimating b: {true_b - b.item():f}")  # PyTorch names 2 - x RsubBackward1


# --- softmax regression from scratch (synthetic 4-class "images") ---
def make_images(n):
    y = torch.randint(0, 4, (n,))
    X = torch.rand(n, 1, 6, 6) * 0.5
    for c in range(4):
        r, col = divmod(c, 2)
        X[y == c, 0, r * 3:(r + 1) * 3, col * 3:(col + 1) * 3] += 0.6
    return X, y


train_X, train_y = make_images(256)
test_X, test_y = make_images(128)
train_iter = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(train_X, train_y), batch_size=32,
                                         shuffle=True)
test_iter = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(test_X, test_y), batch_size=64)

num_inputs, num_outputs = 36, 4
W = torch.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
b = torch.zeros(num_outputs, requires_grad=True)


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdim=True)
    return X_exp / partition


X = torch.normal(0, 1, (2, 5))
X_prob = softmax(X)
print(X_prob, X_prob.sum(1))


def net(X):
    return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)


y = torch.tensor([0, 2])
y_hat = torch.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
print(y_hat[[0, 1], y])


def cross_entropy(y_hat, y):
    return -torch.log(y_hat[range(len(y_hat)), y])


print(cross_entropy(y_hat, y))


def accuracy(y_hat, y):
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


print(accuracy(y_hat, y) / len(y))


class Accumulator:
    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def reset(self):
        self.data = [0.0] * len(self.data)

    def __getitem__(self, idx):
        return self.data[idx]


def evaluate_accuracy(net, data_iter):
    if isinstance(net, torch.nn.Module):
        net.eval()
    metric = Accumulator(2)
    with torch.no_grad():
        for X, y in data_iter:
            metric.add(accuracy(net(X), y), y.numel())
    return metric[0] / metric[1]


print("untrained acc", evaluate_accuracy(net, test_iter))


def train_epoch_ch3(net, train_iter, loss, updater):
    if isinstance(net, torch.nn.Module):
        net.train()
    metric = Accumulator(3)
    for X, y in train_iter:
        y_hat = net(X)
        l = loss(y_hat, y)
        if isinstance(updater, torch.optim.Optimizer):
            updater.zero_grad()
            l.mean().backward()
            updater.step()
        else:
            l.sum().backward()
            updater(X.shape[0])
        metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
    return metric[0] / metric[2], metric[1] / metric[2]


def updater(batch_size):
    return sgd([W, b], 0.1, batch_size)


for epoch in range(5):
    train_loss, train_acc = train_epoch_ch3(net, train_iter, cross_entropy, updater)
    test_acc = evaluate_accuracy(net, test_iter)
    print(f"epoch {epoch + 1} loss {train_loss:.4f} train acc {train_acc:.3f} test acc {test_acc:.3f}")
assert test_acc > 0.8

# --- concise softmax regression ---
net = nn.Sequential(nn.Flatten(), nn.Linear(36, 4))


def init_weights(m):
    if type(m) == nn.Linear:
        nn.init.normal_(m.weight, std=0.01)


net.apply(init_weights)
loss = nn.CrossEntropyLoss(reduction="none")
trainer = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(3):
    train_loss, train_acc = train_epoch_ch3(net, train_iter, loss, trainer)
    print(f"concise epoch {epoch + 1} loss {train_loss:.4f} acc {train_acc:.3f} "
          f"test {evaluate_accuracy(net, test_iter):.3f}")


# --- MLP from scratch with relu via torch.max and dropout_layer ---
def relu(X):
    a = torch.zeros_like(X)
    return torch.max(X, a)


def dropout_layer(X, dropout):
    assert 0 <= dropout <= 1
    if dropout == 1:
        return torch.zeros_like(X)
    if dropout == 0:
        return X
    mask = (torch.rand(X.shape) > dropout).float()
    return mask * X / (1.0 - dropout)


X = torch.arange(16, dtype=torch.float32).reshape((2, 8))
print(dropout_layer(X, 0.0))
print(dropout_layer(X, 0.5))
print(dropout_layer(X, 1.0))

num_hiddens = 32
W1 = nn.Parameter(torch.randn(num_inputs, num_hiddens, requires_grad=True) * 0.01)
b1 = nn.Parameter(torch.zeros(num_hiddens, requires_grad=True))
W2 = nn.Parameter(torch.randn(num_hiddens, num_outputs, requires_grad=True) * 0.01)
b2 = nn.Parameter(torch.zeros(num_outputs, requires_grad=True))
params = [W1, b1, W2, b2]


def mlp(X):
    X = X.reshape((-1, num_inputs))
    H = relu(X @ W1 + b1)
    H = dropout_layer(H, 0.2)
    return H @ W2 + b2


updater = torch.optim.SGD(params, lr=0.5)
loss = nn.CrossEntropyLoss(reduction="none")
for epoch in range(4):
    train_loss, train_acc = train_epoch_ch3(mlp, train_iter, loss, updater)
    print(f"mlp epoch {epoch + 1} loss {train_loss:.4f} acc {train_acc:.3f}")


# --- weight decay: l2_penalty by hand, then per-group weight_decay ---
def l2_penalty(w):
    return torch.sum(w.pow(2)) / 2


n_train, n_test, num_inputs_wd = 20, 100, 50
true_w, true_b = torch.ones((num_inputs_wd, 1)) * 0.01, 0.05
train_data = synthetic_data(true_w.reshape(-1), true_b, n_train)
test_data = synthetic_data(true_w.reshape(-1), true_b, n_test)


def train_wd(lambd):
    w = torch.normal(0, 1, size=(num_inputs_wd, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for epoch in range(50):
        for X, y in data_iter(5, *train_data):
            l = squared_loss(linreg(X, w, b), y) + lambd * l2_penalty(w)
            l.sum().backward()
            sgd([w, b], 0.003, 5)
    with torch.no_grad():
        test_l = squared_loss(linreg(test_data[0], w, b), test_data[1]).mean()
    print(f"lambd {lambd}: w L2 norm {torch.norm(w).item():.5f} test loss {test_l.item():.5f}")


train_wd(0)
train_wd(3)


def train_concise(wd):
    net = nn.Sequential(nn.Linear(num_inputs_wd, 1))
    for param in net.parameters():
        param.data.normal_()
    loss = nn.MSELoss(reduction="none")
    trainer = torch.optim.SGD([{"params": net[0].weight, "weight_decay": wd}, {"params": net[0].bias}], lr=0.003)
    for epoch in range(50):
        for X, y in data_iter(5, *train_data):
            trainer.zero_grad()
            l = loss(net(X), y)
            l.mean().backward()
            trainer.step()
    print(f"wd {wd}: w L2 norm {net[0].weight.norm().item():.5f}")


train_concise(0)
train_concise(3)
