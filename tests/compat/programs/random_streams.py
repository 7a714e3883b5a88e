"""Seeded randomness as reproducibility sections and data-prep scripts use it, where every draw
must equal PyTorch's for the seed: torch.manual_seed then randn/rand/randint/randperm/normal/
bernoulli/multinomial (with and without replacement), the in-place samplers (uniform_, normal_,
exponential_, geometric_, log_normal_, cauchy_, random_, bernoulli_), *_like factories, a
torch.Generator passed as generator= (separate from the global stream), get_rng_state /
set_rng_state replay, torch.random.fork_rng, initial_seed, F.dropout / nn.Dropout masks,
a shuffled train/validation split with randperm, and the seed_everything helper people copy
(random.seed, np.random.seed, torch.manual_seed)."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


seed_everything(42)
print("initial_seed", torch.initial_seed())
print("randn", torch.randn(2, 3))
print("rand", torch.rand(4))
print("randint", torch.randint(0, 10, (6,)), torch.randint(5, (2, 2)), torch.randint(-3, 3, (3,)))
print("randperm", torch.randperm(10), torch.randperm(3).dtype)
print("normal", torch.normal(0.0, 2.0, size=(3,)), torch.normal(torch.zeros(3), torch.ones(3)))
print("normal mean tensor", torch.normal(mean=torch.arange(1.0, 4.0), std=0.1))
p = torch.tensor([0.1, 0.5, 0.9, 0.3])
print("bernoulli", torch.bernoulli(p), torch.bernoulli(torch.full((2, 3), 0.5)))
weights = torch.tensor([0.1, 0.2, 0.3, 0.4])
print("multinomial", torch.multinomial(weights, 3), torch.multinomial(weights, 6, replacement=True))
print("multinomial 2d", torch.multinomial(torch.tensor([[0.2, 0.8], [0.9, 0.1]]), 4, replacement=True))

t = torch.empty(5)
print("uniform_", t.uniform_(-1, 1))
print("normal_", t.normal_(mean=2.0, std=0.5))
print("exponential_", t.exponential_(lambd=2.0))
print("geometric_", t.geometric_(0.3))
print("log_normal_", t.log_normal_(0.0, 0.5))
print("cauchy_", t.cauchy_())
print("random_", torch.empty(4).random_(0, 10), torch.empty(3, dtype=torch.int64).random_(100))
print("bernoulli_", torch.empty(6).bernoulli_(0.3))
x = torch.ones(2, 2)
print("like", torch.randn_like(x), torch.rand_like(x), torch.randint_like(x, 0, 5))
print("float64", torch.randn(3, dtype=torch.float64), torch.rand(2, dtype=torch.float64))

g = torch.Generator().manual_seed(7)
a = torch.randn(3, generator=g)
b = torch.rand(3, generator=g)
c = torch.randperm(5, generator=g)
d = torch.randint(0, 100, (3,), generator=g)
g2 = torch.Generator()
g2.manual_seed(7)
print("generator", a, b, c, d)
print("generator replay", torch.equal(a, torch.randn(3, generator=g2)), g.initial_seed())
print("global after generator", torch.rand(2))

state = torch.get_rng_state()
first = torch.randn(4)
torch.set_rng_state(state)
second = torch.randn(4)
print("replay", torch.equal(first, second), first)
gstate = g.get_state()
u = torch.rand(2, generator=g)
g.set_state(gstate)
print("generator state replay", torch.equal(u, torch.rand(2, generator=g)))

with torch.random.fork_rng():
    torch.manual_seed(123)
    inside = torch.rand(2)
print("fork_rng", inside, torch.rand(2))

torch.manual_seed(0)
h = torch.ones(3, 8)
print("F.dropout", F.dropout(h, p=0.5, training=True))
drop = nn.Dropout(p=0.25)
print("nn.Dropout train", drop(h))
drop.eval()
print("nn.Dropout eval", torch.equal(drop(h), h))
print("dropout2d", F.dropout2d(torch.ones(1, 4, 2, 2), p=0.5, training=True)[0, :, 0, 0])
print("alpha_dropout", F.alpha_dropout(torch.ones(6), p=0.5, training=True))

torch.manual_seed(1)
n = 20
data = torch.arange(n * 2, dtype=torch.float32).view(n, 2)
perm = torch.randperm(n)
train_idx, val_idx = perm[:15], perm[15:]
print("split", train_idx.tolist(), val_idx.tolist(), data[val_idx][:, 0])
print("shuffled rows", data[torch.randperm(n)][:3])
sub = torch.randint(0, n, (5,))
print("bootstrap", sub, data[sub].mean(0))

torch.manual_seed(2)
lin = nn.Linear(3, 2)
torch.manual_seed(2)
lin2 = nn.Linear(3, 2)
print("init reproducible", torch.equal(lin.weight, lin2.weight), lin.weight, lin.bias)
print("python/numpy rngs untouched by torch", random.random() == random.random(), np.random.rand() < 1.0)
