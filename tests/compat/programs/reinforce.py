"""Policy-gradient reinforcement learning as in the REINFORCE and actor-critic tutorials, on a
small deterministic corridor environment written here: a policy network gives
torch.distributions.Categorical over actions (sample, log_prob, entropy), returns are
discounted and normalised, and a Gaussian policy (torch.distributions.Normal with rsample and
log_prob) is fitted to a target action; kl_divergence between two Normals is checked."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, Categorical, Normal, kl_divergence

torch.manual_seed(0)


class Corridor:
    """Walk from cell 0 to cell 5; action 1 moves right, 0 left; reward 1 at the goal, -0.01 per step."""

    def reset(self):
        self.pos = 0
        return self._obs()

    def _obs(self):
        return F.one_hot(torch.tensor(self.pos), 6).float()

    def step(self, action):
        self.pos = max(0, min(5, self.pos + (1 if action == 1 else -1)))
        done = self.pos == 5
        return self._obs(), (1.0 if done else -0.01), done


policy = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=0.02)
env, gamma = Corridor(), 0.9
lengths = []
for episode in range(40):
    obs, log_probs, rewards, entropies = env.reset(), [], [], []
    for t in range(30):
        dist = Categorical(logits=policy(obs))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        entropies.append(dist.entropy())
        obs, r, done = env.step(action.item())
        rewards.append(r)
        if done:
            break
    R, returns = 0.0, []
    for r in reversed(rewards):
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    if len(returns) > 1:
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    loss = -(torch.stack(log_probs) * returns).sum() - 0.01 * torch.stack(entropies).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    lengths.append(len(rewards))
    if episode % 10 == 9:
        print(f"episode {episode} length {len(rewards)} loss {loss.item():.5f}")
print("mean length first 10", sum(lengths[:10]) / 10, "last 10", sum(lengths[-10:]) / 10)
assert sum(lengths[-10:]) < sum(lengths[:10])
probs = torch.softmax(policy(F.one_hot(torch.arange(6), 6).float()), dim=-1)
print("p(right)", [round(v, 4) for v in probs[:, 1].tolist()])

# A Gaussian policy trained by the reparameterisation trick.
mu = torch.zeros(3, requires_grad=True)
log_std = torch.zeros(3, requires_grad=True)
target = torch.tensor([1.0, -0.5, 2.0])
opt = torch.optim.SGD([mu, log_std], lr=0.1)
for step in range(50):
    dist = Normal(mu, log_std.exp())
    a = dist.rsample((16,))
    loss = ((a - target) ** 2).mean() - 0.01 * dist.entropy().sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("normal mean", [round(v, 4) for v in mu.tolist()], "std", [round(v, 4) for v in log_std.exp().tolist()])
d1, d2 = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0])), Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
print("kl", [round(v, 6) for v in kl_divergence(d1, d2).tolist()], "log_prob", [round(v, 6) for v in d1.log_prob(torch.tensor([0.3, -1.0])).tolist()])
b = Bernoulli(probs=torch.tensor([0.2, 0.9]))
print("bernoulli", b.sample((4,)).tolist(), [round(v, 6) for v in b.log_prob(torch.tensor([1.0, 0.0])).tolist()],
      [round(v, 6) for v in b.entropy().tolist()])
c = Categorical(probs=torch.tensor([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]]))
print("categorical", c.sample((3,)).tolist(), [round(v, 6) for v in c.entropy().tolist()], c.probs.shape, c.logits.shape)
