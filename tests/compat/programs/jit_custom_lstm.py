"""A custom LSTM written for TorchScript, as PyTorch's "custom_lstms.py" benchmark writes it: an
LSTMCell and a LayerNorm-LSTM cell as nn.Modules with explicit gates (torch.mm, chunk, sigmoid,
tanh), a layer that loops over time collecting outputs in a torch.jit.annotate(List[Tensor], [])
list, a stacked model built from scripted layers (torch.jit.script on each), the state passed as
Tuple[Tensor, Tensor], checked against nn.LSTM with copied weights, then trained on a
sequence task (the sum of a sliding window) with clipping through the scripted graph."""
from typing import List, Tuple

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


class LSTMCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.weight_ih = nn.Parameter(torch.randn(4 * hidden_size, input_size) * 0.3)
        self.weight_hh = nn.Parameter(torch.randn(4 * hidden_size, hidden_size) * 0.3)
        self.bias_ih = nn.Parameter(torch.randn(4 * hidden_size) * 0.1)
        self.bias_hh = nn.Parameter(torch.randn(4 * hidden_size) * 0.1)

    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        hx, cx = state
        gates = (torch.mm(input, self.weight_ih.t()) + self.bias_ih + torch.mm(hx, self.weight_hh.t()) + self.bias_hh)
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = torch.sigmoid(ingate)
        forgetgate = torch.sigmoid(forgetgate)
        cellgate = torch.tanh(cellgate)
        outgate = torch.sigmoid(outgate)
        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * torch.tanh(cy)
        return hy, (hy, cy)


class LayerNormLSTMCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.weight_ih = nn.Parameter(torch.randn(4 * hidden_size, input_size) * 0.3)
        self.weight_hh = nn.Parameter(torch.randn(4 * hidden_size, hidden_size) * 0.3)
        self.layernorm_i = nn.LayerNorm(4 * hidden_size)
        self.layernorm_h = nn.LayerNorm(4 * hidden_size)
        self.layernorm_c = nn.LayerNorm(hidden_size)

    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        hx, cx = state
        igates = self.layernorm_i(torch.mm(input, self.weight_ih.t()))
        hgates = self.layernorm_h(torch.mm(hx, self.weight_hh.t()))
        ingate, forgetgate, cellgate, outgate = (igates + hgates).chunk(4, 1)
        cy = self.layernorm_c(torch.sigmoid(forgetgate) * cx + torch.sigmoid(ingate) * torch.tanh(cellgate))
        hy = torch.sigmoid(outgate) * torch.tanh(cy)
        return hy, (hy, cy)


class LSTMLayer(nn.Module):
    def __init__(self, cell: nn.Module):
        super().__init__()
        self.cell = cell

    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        inputs = input.unbind(0)
        outputs = torch.jit.annotate(List[Tensor], [])
        for i in range(len(inputs)):
            out, state = self.cell(inputs[i], state)
            outputs += [out]
        return torch.stack(outputs), state


class StackedLSTM(nn.Module):
    def __init__(self, sizes: List[int], layer_norm: bool):
        super().__init__()
        cell = LayerNormLSTMCell if layer_norm else LSTMCell
        self.layers = nn.ModuleList(
            [torch.jit.script(LSTMLayer(cell(sizes[i], sizes[i + 1]))) for i in range(len(sizes) - 1)])
        self.hidden = sizes[1:]
        self.head = nn.Linear(sizes[-1], 1)

    def forward(self, x: Tensor) -> Tensor:
        out = x
        for layer, h in zip(self.layers, self.hidden):
            zeros = torch.zeros(x.shape[1], h)
            out, _ = layer(out, (zeros, zeros))
        return self.head(out).squeeze(-1)


# ---- the scripted cell equals nn.LSTM with the same weights ------------------------------------------
T, B, I, H = 7, 3, 4, 5
x = torch.randn(T, B, I)
layer = torch.jit.script(LSTMLayer(LSTMCell(I, H)))
ref = nn.LSTM(I, H)
with torch.no_grad():
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(ref, name + "_l0").copy_(getattr(layer.cell, name))
h0 = torch.randn(1, B, H)
c0 = torch.randn(1, B, H)
out, (hn, cn) = layer(x, (h0[0], c0[0]))
ref_out, (ref_h, ref_c) = ref(x, (h0, c0))
print("custom vs nn.LSTM", torch.allclose(out, ref_out, atol=1e-6), torch.allclose(hn, ref_h[0], atol=1e-6),
      torch.allclose(cn, ref_c[0], atol=1e-6), f"{out.sum().item():.6f}")
out.pow(2).sum().backward()
ref_out.pow(2).sum().backward()
print("gradients match", torch.allclose(layer.cell.weight_ih.grad, ref.weight_ih_l0.grad, atol=1e-5),
      f"{layer.cell.weight_hh.grad.norm().item():.6f}")

# ---- training stacked models on a sliding-window sum ---------------------------------------------------
torch.manual_seed(1)
seq = torch.rand(12, 32, 1) - 0.5
target = seq.squeeze(-1).cumsum(0)
target[3:] = target[3:] - target[:-3].clone()  # sum of the last 3 inputs
for layer_norm in (False, True):
    torch.manual_seed(2)
    model = StackedLSTM([1, 16, 16], layer_norm)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(16):
        loss = (model(seq) - target).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 8 == 0:
            print(f"layer_norm={layer_norm} step {step}: loss {loss.item():.6f} grad norm {norm.item():.6f}")
    print(f"layer_norm={layer_norm} final loss {loss.item():.6f}",
          "parameters", sum(p.numel() for p in model.parameters()))
