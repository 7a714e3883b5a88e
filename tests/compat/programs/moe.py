"""A sparse mixture-of-experts layer as the Switch/Mixtral explainer posts write it: a router
Linear, torch.topk over softmax gates with renormalisation, per-expert dispatch via
torch.where(selected == i) / nonzero(as_tuple=True), index_add_ to combine, a one-hot
(F.one_hot) load-balancing auxiliary loss and a router z-loss with logsumexp, expert capacity
via cumsum of the one-hot mask, and gather/scatter for the dense formulation."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2024)


class Expert(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.w1 = nn.Linear(d, h, bias=False)
        self.w2 = nn.Linear(h, d, bias=False)
        self.w3 = nn.Linear(d, h, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoE(nn.Module):
    def __init__(self, d_model=16, hidden=32, num_experts=4, top_k=2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(d_model, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(d_model, hidden) for _ in range(num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros((batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype,
                                          device=hidden_states.device)
        expert_mask = torch.nn.functional.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        final_hidden_states = final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


def load_balancing_loss_func(gate_logits, num_experts, top_k):
    routing_weights = torch.nn.functional.softmax(gate_logits, dim=-1)
    _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    expert_mask = torch.nn.functional.one_hot(selected_experts, num_experts)
    tokens_per_expert = torch.mean(expert_mask.float(), dim=0)
    router_prob_per_expert = torch.mean(routing_weights, dim=0)
    overall_loss = torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0))
    return overall_loss * num_experts


def router_z_loss(logits):
    return torch.logsumexp(logits, dim=-1).square().mean()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.moe = SparseMoE()
        self.norm = nn.LayerNorm(16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        h = self.inp(x)
        m, logits = self.moe(self.norm(h))
        h = h + m
        return self.out(h.mean(1)), logits


X = torch.randn(96, 5, 8)
y = (X[:, :, 0].sum(1) > 0).long() + (X[:, :, 1].sum(1) > 1).long()
model = Model()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(40):
    idx = torch.randint(0, 96, (16,))
    logits, router_logits = model(X[idx])
    ce = F.cross_entropy(logits, y[idx])
    aux = load_balancing_loss_func(router_logits, 4, 2)
    z = router_z_loss(router_logits)
    loss = ce + 0.01 * aux + 0.001 * z
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 8 == 0 or step == 39:
        print(f"step {step} ce {ce.item():.5f} aux {aux.item():.5f} z {z.item():.5f}")

assert ce.item() < 0.9
with torch.no_grad():
    _, rl = model(X)
    counts = torch.bincount(rl.topk(2, dim=-1).indices.flatten(), minlength=4)
    print("tokens per expert", counts.tolist())
    assert counts.sum().item() == 96 * 5 * 2

# Dense formulation with gather/scatter: top-1 switch routing with capacity.
torch.manual_seed(1)
tokens = torch.randn(10, 4)
gate_logits = torch.randn(10, 3)
probs = gate_logits.softmax(-1)
top1 = probs.argmax(-1)
mask = F.one_hot(top1, 3)
position_in_expert = torch.cumsum(mask, dim=0) * mask
capacity = 3
keep = (position_in_expert <= capacity) & (mask > 0)
print("position", position_in_expert.tolist())
print("kept", keep.any(-1).tolist())
gate_val = probs.gather(1, top1.unsqueeze(1)).squeeze(1)
dispatch = torch.zeros(10, 3).scatter_(1, top1.unsqueeze(1), gate_val.unsqueeze(1))
print("dispatch", dispatch.sum(0).tolist())
nz = torch.nonzero(mask[:, 0], as_tuple=True)[0]
print("expert0 tokens", nz.tolist(), mask.nonzero().shape, torch.argwhere(mask[:, 1]).flatten().tolist())
vals, ids = torch.sort(top1, stable=True)
print("sorted", vals.tolist(), ids.tolist(), torch.argsort(top1, stable=True).tolist())
print("topk named", torch.topk(probs[0], k=2, largest=False, sorted=True))
