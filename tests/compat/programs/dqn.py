"""Deep Q-learning as in the reinforcement-learning (DQN) tutorial, on a small deterministic grid
world written here: a replay memory of namedtuple Transitions in a deque, epsilon-greedy action
selection with policy_net(state).max(1).indices.view(1, 1), batches built with
torch.cat/tuple(map(...)), non-final masks, state_action_values by gather, next-state values from
a target network under no_grad with max(1).values, nn.SmoothL1Loss, AdamW(amsgrad=True),
clip_grad_value_ and a soft target update through state_dict() / load_state_dict()."""
import math
import random
from collections import deque, namedtuple
from itertools import count

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

random.seed(0)
torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class GridWorld:
    """A 5x5 grid: start at (0, 0), reward 1 at (4, 4), -0.1 for hitting a wall; 4 actions."""
    size = 5

    def reset(self):
        self.pos = [0, 0]
        self.t = 0
        return self.obs()

    def obs(self):
        o = [0.0] * (2 * self.size)
        o[self.pos[0]] = 1.0
        o[self.size + self.pos[1]] = 1.0
        return o

    def step(self, a):
        dr, dc = [(-1, 0), (1, 0), (0, -1), (0, 1)][a]
        r, c = self.pos[0] + dr, self.pos[1] + dc
        reward = -0.01
        if 0 <= r < self.size and 0 <= c < self.size:
            self.pos = [r, c]
        else:
            reward = -0.1
        self.t += 1
        done = self.pos == [self.size - 1, self.size - 1]
        if done:
            reward = 1.0
        return self.obs(), reward, done, self.t >= 30


Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory(object):
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_observations, n_actions):
        super(DQN, self).__init__()
        self.layer1 = nn.Linear(n_observations, 64)
        self.layer2 = nn.Linear(64, 64)
        self.layer3 = nn.Linear(64, n_actions)

    def forward(self, x):
        x = F.relu(self.layer1(x))
        x = F.relu(self.layer2(x))
        return self.layer3(x)


BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 32, 0.95, 0.9, 0.05, 300, 0.01, 1e-3
env = GridWorld()
n_actions, n_observations = 4, 2 * GridWorld.size
policy_net = DQN(n_observations, n_actions).to(device)
target_net = DQN(n_observations, n_actions).to(device)
target_net.load_state_dict(policy_net.state_dict())
optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
memory = ReplayMemory(2000)
steps_done = 0


def select_action(state):
    global steps_done
    sample = random.random()
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
    steps_done += 1
    if sample > eps_threshold:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    else:
        return torch.tensor([[random.randrange(n_actions)]], device=device, dtype=torch.long)


def optimize_model():
    if len(memory) < BATCH_SIZE:
        return None
    transitions = memory.sample(BATCH_SIZE)
    batch = Transition(*zip(*transitions))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), device=device,
                                  dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(BATCH_SIZE, device=device)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected_state_action_values = (next_state_values * GAMMA) + reward_batch
    criterion = nn.SmoothL1Loss()
    loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()
    return loss.item()


episode_durations, losses = [], []
for i_episode in range(40):
    state = torch.tensor(env.reset(), dtype=torch.float32, device=device).unsqueeze(0)
    for t in count():
        action = select_action(state)
        observation, reward, terminated, truncated = env.step(action.item())
        reward = torch.tensor([reward], device=device)
        done = terminated or truncated
        next_state = None if terminated else torch.tensor(observation, dtype=torch.float32,
                                                          device=device).unsqueeze(0)
        memory.push(state, action, next_state, reward)
        state = next_state
        l = optimize_model()
        if l is not None:
            losses.append(l)
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)
        if done:
            episode_durations.append(t + 1)
            break
    if i_episode % 8 == 7:
        print(f"episode {i_episode + 1} duration {episode_durations[-1]} "
              f"mean loss {sum(losses[-20:]) / max(1, len(losses[-20:])):.6f}")

print("durations", episode_durations)
durations_t = torch.tensor(episode_durations, dtype=torch.float)
means = durations_t.view(4, 10).mean(1)
print("mean durations per 10 episodes", [round(v, 3) for v in means.tolist()])
assert means[-1] < means[0]
with torch.no_grad():
    q = policy_net(torch.tensor(env.reset()).unsqueeze(0))
print("Q(start)", [round(v, 5) for v in q[0].tolist()])
print("greedy action", q.argmax(dim=1, keepdim=True).tolist(), q.max(1))
sd = target_net.state_dict()
print([k for k in sd], sd["layer3.bias"].shape)
print("target/policy gap", max((target_net.state_dict()[k] - policy_net.state_dict()[k]).abs().max().item()
                               for k in sd))
