"""MAML on few-shot image classification, the way the omniglot/miniImageNet reference code
writes it: a conv net (conv2d, batch_norm in training mode, relu, max_pool2d) run functionally
on a list of fast weights, several inner SGD steps with torch.autograd.grad(create_graph=True),
cross_entropy on the query set, and the meta-update through all inner steps; also with a
LayerNorm head through torch.func.functional_call."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)
n_way, k_shot, q = 3, 2, 3


def make_task():
    protos = torch.randn(n_way, 1, 8, 8)
    xs = protos.repeat_interleave(k_shot, 0) + 0.3 * torch.randn(n_way * k_shot, 1, 8, 8)
    xq = protos.repeat_interleave(q, 0) + 0.3 * torch.randn(n_way * q, 1, 8, 8)
    ys = torch.arange(n_way).repeat_interleave(k_shot)
    yq = torch.arange(n_way).repeat_interleave(q)
    return xs, ys, xq, yq


def conv_block(x, w, b, gamma, beta):
    x = F.conv2d(x, w, b, padding=1)
    x = F.batch_norm(x, None, None, gamma, beta, training=True)
    return F.max_pool2d(F.relu(x), 2)


def net(x, params):
    x = conv_block(x, *params[0:4])
    x = conv_block(x, *params[4:8])
    return F.linear(x.flatten(1), params[8], params[9])


def init():
    ps = []
    for cin, cout in ((1, 8), (8, 8)):
        w = torch.empty(cout, cin, 3, 3)
        nn.init.kaiming_normal_(w)
        ps += [w, torch.zeros(cout), torch.ones(cout), torch.zeros(cout)]
    w = torch.empty(n_way, 8 * 2 * 2)
    nn.init.xavier_uniform_(w)
    ps += [w, torch.zeros(n_way)]
    return [p.requires_grad_() for p in ps]


params = init()
meta_opt = torch.optim.Adam(params, lr=1e-3)
for step in range(8):
    meta_opt.zero_grad()
    accs, losses = [], []
    for _ in range(2):
        xs, ys, xq, yq = make_task()
        fast = params
        for _ in range(3):
            loss = F.cross_entropy(net(xs, fast), ys)
            grads = torch.autograd.grad(loss, fast, create_graph=True)
            fast = [p - 0.4 * g for p, g in zip(fast, grads)]
        logits = net(xq, fast)
        losses.append(F.cross_entropy(logits, yq))
        accs.append((logits.argmax(1) == yq).float().mean().item())
    meta_loss = torch.stack(losses).mean()
    meta_loss.backward()
    meta_opt.step()
    print(f"step {step} meta loss {meta_loss.item():.6f} acc {sum(accs) / len(accs):.4f} "
          f"|g conv1| {params[0].grad.norm().item():.6f}")


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.ln = nn.Linear(16, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.gelu(self.ln(self.fc1(x))))


torch.manual_seed(1)
head = Head()
opt = torch.optim.SGD(head.parameters(), lr=0.1)
x, y = torch.randn(12, 6), torch.randint(0, 3, (12,))
for step in range(5):
    opt.zero_grad()
    p = dict(head.named_parameters())
    for _ in range(2):
        g = torch.autograd.grad(F.cross_entropy(functional_call(head, p, (x[:6],)), y[:6]), list(p.values()),
                                create_graph=True)
        p = {k: v - 0.5 * gi for (k, v), gi in zip(p.items(), g)}
    outer = F.cross_entropy(functional_call(head, p, (x[6:],)), y[6:])
    outer.backward()
    opt.step()
    print(f"head step {step} outer {outer.item():.6f} |g ln| {head.ln.weight.grad.norm().item():.6f}")
