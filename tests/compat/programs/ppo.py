"""PPO on a toy continuous-control task as the "PPO from scratch" posts write it: an actor-critic
with a shared body, a Normal policy with a learned log_std nn.Parameter
(torch.distributions.Normal(mu, log_std.exp()), log_prob(...).sum(-1), entropy().sum(-1)) and a
discrete Categorical head on the side, rollouts stored in lists and torch.stack'ed, GAE with
reversed(range(T)), advantage normalisation, the clipped surrogate with torch.clamp(ratio,
1 - eps, 1 + eps) and torch.min, value-loss clipping, minibatches from torch.randperm(...).split,
Adam with eps=1e-5, and nn.utils.clip_grad_norm_(..., 0.5)."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical, Normal

torch.manual_seed(0)
np.random.seed(0)


class PointEnv:
    """Move a point toward the origin; reward = -distance; also pick a discrete 'mode'."""

    def __init__(self):
        self.state = None

    def reset(self):
        self.state = np.random.uniform(-1, 1, size=2).astype(np.float32)
        self.t = 0
        return self.state.copy()

    def step(self, action, mode):
        self.state = np.clip(self.state + 0.1 * np.clip(action, -1, 1), -2, 2).astype(np.float32)
        self.t += 1
        reward = -float(np.linalg.norm(self.state)) + (0.1 if mode == int(self.state[0] > 0) else 0.0)
        done = self.t >= 20
        return self.state.copy(), reward, done


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=2, act_dim=2, hidden=32):
        super().__init__()
        self.critic = nn.Sequential(layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
                                    layer_init(nn.Linear(hidden, 1), std=1.0))
        self.actor_mean = nn.Sequential(layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
                                        layer_init(nn.Linear(hidden, act_dim), std=0.01))
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))
        self.mode_head = layer_init(nn.Linear(obs_dim, 2), std=0.01)

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None, mode=None):
        action_mean = self.actor_mean(x)
        action_logstd = self.actor_logstd.expand_as(action_mean)
        action_std = torch.exp(action_logstd)
        probs = Normal(action_mean, action_std)
        cat = Categorical(logits=self.mode_head(x))
        if action is None:
            action = probs.sample()
            mode = cat.sample()
        logprob = probs.log_prob(action).sum(1) + cat.log_prob(mode)
        entropy = probs.entropy().sum(1) + cat.entropy()
        return action, mode, logprob, entropy, self.critic(x)


env = PointEnv()
agent = ActorCritic()
optimizer = torch.optim.Adam(agent.parameters(), lr=3e-3, eps=1e-5)
num_steps, gamma, gae_lambda, clip_coef, ent_coef, vf_coef = 80, 0.99, 0.95, 0.2, 0.01, 0.5
obs = torch.tensor(env.reset())
returns_log = []
for update in range(1, 9):
    frac = 1.0 - (update - 1.0) / 8
    optimizer.param_groups[0]["lr"] = frac * 3e-3
    obs_buf, act_buf, mode_buf, logp_buf, rew_buf, done_buf, val_buf = [], [], [], [], [], [], []
    ep_ret, ep_rets = 0.0, []
    for step in range(num_steps):
        with torch.no_grad():
            action, mode, logprob, _, value = agent.get_action_and_value(obs.unsqueeze(0))
        next_obs, reward, done = env.step(action[0].numpy(), mode.item())
        obs_buf.append(obs)
        act_buf.append(action[0])
        mode_buf.append(mode[0])
        logp_buf.append(logprob[0])
        rew_buf.append(torch.tensor(reward, dtype=torch.float32))
        done_buf.append(torch.tensor(float(done)))
        val_buf.append(value.flatten()[0])
        ep_ret += reward
        if done:
            ep_rets.append(ep_ret)
            ep_ret = 0.0
            next_obs = env.reset()
        obs = torch.tensor(next_obs)
    b_obs, b_act, b_mode = torch.stack(obs_buf), torch.stack(act_buf), torch.stack(mode_buf)
    b_logp, rewards, dones, values = torch.stack(logp_buf), torch.stack(rew_buf), torch.stack(done_buf), \
        torch.stack(val_buf)
    with torch.no_grad():
        next_value = agent.get_value(obs.unsqueeze(0)).reshape(1)
        advantages = torch.zeros_like(rewards)
        lastgaelam = 0
        for t in reversed(range(num_steps)):
            if t == num_steps - 1:
                nextnonterminal = 1.0 - dones[t]
                nextvalues = next_value
            else:
                nextnonterminal = 1.0 - dones[t]
                nextvalues = values[t + 1]
            delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
        returns = advantages + values
    clipfracs = []
    for epoch in range(4):
        for mb_inds in torch.randperm(num_steps).split(20):
            _, _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_act[mb_inds],
                                                                              b_mode[mb_inds])
            logratio = newlogprob - b_logp[mb_inds]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > clip_coef).float().mean().item()]
            mb_adv = advantages[mb_inds]
            mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss1 = -mb_adv * ratio
            pg_loss2 = -mb_adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            newvalue = newvalue.view(-1)
            v_loss_unclipped = (newvalue - returns[mb_inds]) ** 2
            v_clipped = values[mb_inds] + torch.clamp(newvalue - values[mb_inds], -clip_coef, clip_coef)
            v_loss_clipped = (v_clipped - returns[mb_inds]) ** 2
            v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ent_coef * entropy_loss + v_loss * vf_coef
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimizer.step()
    returns_log.append(float(np.mean(ep_rets)))
    print(f"update {update} mean return {np.mean(ep_rets):.4f} v_loss {v_loss.item():.5f} pg_loss {pg_loss.item():.5f} "
          f"kl {approx_kl.item():.6f} clipfrac {np.mean(clipfracs):.4f} logstd {agent.actor_logstd.tolist()}")
assert all(r == r for r in returns_log) and max(returns_log[4:]) > min(returns_log[:4])
