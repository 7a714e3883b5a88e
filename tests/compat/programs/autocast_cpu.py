"""CPU mixed precision as the "bfloat16 on CPU" posts write it: torch.autocast(device_type="cpu",
dtype=torch.bfloat16) around the forward, checking output dtypes of Linear/matmul (bfloat16) and
of softmax/log_softmax/layer_norm/losses (float32), the loss computed outside autocast in float32,
model.to(torch.bfloat16) for pure-bf16 inference, torch.get_autocast_dtype, nested
autocast(enabled=False) for a float32 island, and the gradient still arriving in float32 weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 4))
x = torch.randn(8, 16)
y = torch.randint(0, 4, (8,))
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    h = model[0](x)
    n = model[1](h)
    out = model(x)
    sm = out.softmax(-1)
    lsm = F.log_softmax(out, -1)
    mm = x @ x.T
    loss_in = F.cross_entropy(out, y)
    print("dtypes", h.dtype, out.dtype, mm.dtype, loss_in.dtype)
    print("enabled", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    with torch.autocast(device_type="cpu", enabled=False):
        f32 = model[0](x)
        print("island", f32.dtype, torch.is_autocast_enabled("cpu"))
print("values", [round(v, 2) for v in out.float()[0].tolist()])
loss = F.cross_entropy(out.float(), y)
loss.backward()
print("loss", round(loss.item(), 2), "grad dtype", model[0].weight.grad.dtype, model[0].weight.dtype)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(30):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        logits = model(x)
    loss = F.cross_entropy(logits.float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("first/last", round(losses[0], 2), round(losses[-1], 2))
assert losses[-1] < losses[0]
bf = nn.Linear(16, 4).to(torch.bfloat16)
print("pure bf16", bf(x.to(torch.bfloat16)).dtype, bf.weight.dtype)
t = torch.tensor([1.0, 2.5, 3.3333333]).bfloat16()
print("bf16 values", t.tolist(), t.float().tolist(), torch.finfo(torch.bfloat16).eps)
print((t * 3).tolist(), t.sum().item(), t.mean().item())
