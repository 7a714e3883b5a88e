"""Adversarial examples, as the "FGSM tutorial" and robustness courses write them: a small CNN
trained on synthetic 12x12 images of bars (horizontal / vertical / diagonal), the fast gradient
sign attack (x.grad.sign(), torch.clamp to the valid range) at several epsilons, a projected
gradient descent attack with random start (torch.empty_like(...).uniform_, projection by
torch.max/torch.min onto the L-inf ball), the accuracy under attack, adversarial training with
FGSM examples mixed into each batch, and the robust accuracy it buys; gradients taken with
torch.autograd.grad and with requires_grad_ on detached inputs, the model kept in eval mode
during attacks."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_data(n, gen):
    labels = torch.randint(0, 3, (n,), generator=gen)
    imgs = 0.1 * torch.rand(n, 1, 12, 12, generator=gen)
    pos = torch.randint(2, 10, (n,), generator=gen)
    for i in range(n):
        p = pos[i].item()
        if labels[i] == 0:
            imgs[i, 0, p, 1:11] += 0.8
        elif labels[i] == 1:
            imgs[i, 0, 1:11, p] += 0.8
        else:
            idx = torch.arange(1, 11)
            imgs[i, 0, idx, idx] += 0.8
    return imgs.clamp(0, 1), labels


gen = torch.Generator().manual_seed(1)
X_train, y_train = make_data(384, gen)
X_test, y_test = make_data(128, gen)
print("data", tuple(X_train.shape), torch.bincount(y_train).tolist(), f"{X_train.mean().item():.6f}")


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 3 * 3, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def accuracy(model, X, y):
    model.eval()
    with torch.no_grad():
        return (model(X).argmax(1) == y).float().mean().item()


def fgsm(model, x, y, eps):
    model.eval()
    x = x.clone().detach().requires_grad_(True)
    loss = F.cross_entropy(model(x), y)
    model.zero_grad()
    loss.backward()
    return torch.clamp(x + eps * x.grad.sign(), 0, 1).detach()


def pgd(model, x, y, eps, alpha, steps, gen):
    model.eval()
    delta = torch.empty_like(x).uniform_(-eps, eps, generator=gen)
    x_adv = torch.clamp(x + delta, 0, 1).detach()
    for _ in range(steps):
        x_adv.requires_grad_(True)
        (g,) = torch.autograd.grad(F.cross_entropy(model(x_adv), y), x_adv)
        x_adv = x_adv.detach() + alpha * g.sign()
        x_adv = torch.max(torch.min(x_adv, x + eps), x - eps).clamp(0, 1)
    return x_adv.detach()


def train(model, epochs, adv_eps=0.0):
    opt = torch.optim.Adam(model.parameters(), lr=6e-3)
    order_gen = torch.Generator().manual_seed(5)
    for epoch in range(epochs):
        perm = torch.randperm(len(X_train), generator=order_gen)
        total = 0.0
        for i in range(0, len(X_train), 64):
            idx = perm[i:i + 64]
            xb, yb = X_train[idx], y_train[idx]
            if adv_eps > 0:
                xb = torch.cat([xb, fgsm(model, xb, yb, adv_eps)])
                yb = torch.cat([yb, yb])
            model.train()
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        print(f"  epoch {epoch} loss {total / len(X_train):.5f}")
    return model


torch.manual_seed(2)
print("standard training")
model = train(SmallCNN(), 3)
print(f"clean accuracy {accuracy(model, X_test, y_test):.4f}")
for eps in (0.05, 0.1, 0.2):
    x_adv = fgsm(model, X_test, y_test, eps)
    pert = (x_adv - X_test).abs().max().item()
    print(f"fgsm eps {eps}: accuracy {accuracy(model, x_adv, y_test):.4f} max perturbation {pert:.4f}")
x_pgd = pgd(model, X_test, y_test, 0.1, 0.025, 10, torch.Generator().manual_seed(7))
print(f"pgd eps 0.1: accuracy {accuracy(model, x_pgd, y_test):.4f} "
      f"linf {(x_pgd - X_test).abs().max().item():.4f}")

torch.manual_seed(2)
print("adversarial training")
robust = train(SmallCNN(), 3, adv_eps=0.1)
print(f"clean accuracy {accuracy(robust, X_test, y_test):.4f}")
x_adv = fgsm(robust, X_test, y_test, 0.1)
print(f"fgsm eps 0.1: accuracy {accuracy(robust, x_adv, y_test):.4f}")
x_pgd = pgd(robust, X_test, y_test, 0.1, 0.025, 10, torch.Generator().manual_seed(7))
print(f"pgd eps 0.1: accuracy {accuracy(robust, x_pgd, y_test):.4f}")
saliency = X_test[:4].clone().requires_grad_(True)
robust(saliency).gather(1, y_test[:4, None]).sum().backward()
print("saliency mass", [round(v, 5) for v in saliency.grad.abs().sum((1, 2, 3)).tolist()])
