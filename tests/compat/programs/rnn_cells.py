"""Recurrent cells unrolled by hand, as the sequence tutorials and course notebooks write them:
nn.RNNCell (tanh and relu), nn.GRUCell and nn.LSTMCell stepped over x[t] in a Python loop with
hx/cx carried (and the default zero state when hx is omitted, and unbatched 1-d inputs), the
outputs torch.stack'ed, checked against nn.RNN/nn.GRU/nn.LSTM after copying the weights
(weight_ih_l0 <- cell.weight_ih), a two-layer stacked LSTMCell with dropout between layers, a
sequence-to-one regressor trained with Adam and clip_grad_norm_, truncated BPTT with
h.detach(), the hidden state printed, and torch.manual_seed reproducibility of the cells' init."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T, B, I, H = 5, 3, 4, 6
x = torch.randn(T, B, I)

# --- RNNCell ---
rnn_cell = nn.RNNCell(I, H)
print(rnn_cell, [tuple(p.shape) for p in rnn_cell.parameters()])
hx = torch.randn(B, H)
outs = []
for t in range(T):
    hx = rnn_cell(x[t], hx)
    outs.append(hx)
out_cell = torch.stack(outs)
rnn = nn.RNN(I, H)
with torch.no_grad():
    rnn.weight_ih_l0.copy_(rnn_cell.weight_ih)
    rnn.weight_hh_l0.copy_(rnn_cell.weight_hh)
    rnn.bias_ih_l0.copy_(rnn_cell.bias_ih)
    rnn.bias_hh_l0.copy_(rnn_cell.bias_hh)
out_rnn, h_n = rnn(x, torch.stack(outs[:0] + [torch.zeros(B, H)]) if False else out_cell.new_zeros(1, B, H))
relu_cell = nn.RNNCell(I, H, nonlinearity="relu", bias=False)
h_relu = relu_cell(x[0])
print("relu cell", h_relu.min().item() >= 0, relu_cell.bias_ih, h_relu.shape)
print("rnn cell last", out_cell[-1].detach())
h0 = torch.zeros(B, H)
hx = h0
for t in range(T):
    hx = rnn_cell(x[t], hx)
print("cell vs nn.RNN", torch.allclose(hx, out_rnn[-1], atol=1e-6), (hx - h_n[0]).abs().max().item() < 1e-6)

# --- GRUCell ---
gru_cell = nn.GRUCell(I, H)
h = torch.zeros(B, H)
gru_outs = []
for t in range(T):
    h = gru_cell(x[t], h)
    gru_outs.append(h)
gru = nn.GRU(I, H, batch_first=True)
gru.load_state_dict({k + "_l0": v for k, v in gru_cell.state_dict().items()})
out_gru, hn_gru = gru(x.transpose(0, 1))
print("gru cell", h.detach()[0])
print("gru match", (out_gru.transpose(0, 1) - torch.stack(gru_outs)).abs().max().item() < 1e-6,
      list(gru.state_dict().keys()))
h_single = gru_cell(x[0, 0])
print("unbatched", h_single.shape, torch.allclose(h_single, gru_cell(x[0])[0]))

# --- LSTMCell ---
lstm_cell = nn.LSTMCell(I, H)
hx, cx = torch.zeros(B, H), torch.zeros(B, H)
lstm_outs = []
for t in range(T):
    hx, cx = lstm_cell(x[t], (hx, cx))
    lstm_outs.append(hx)
default_h, default_c = lstm_cell(x[0])
print("default state", torch.allclose(default_h, lstm_outs[0]), default_c.shape)
lstm = nn.LSTM(I, H)
for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
    getattr(lstm, name + "_l0").data.copy_(getattr(lstm_cell, name).data)
out_lstm, (h_n, c_n) = lstm(x)
print("lstm match", torch.allclose(out_lstm, torch.stack(lstm_outs), atol=1e-6), torch.allclose(c_n[0], cx, atol=1e-6))
print("lstm c", cx[1].detach())
gates = F.linear(x[0], lstm_cell.weight_ih, lstm_cell.bias_ih) + F.linear(torch.zeros(B, H), lstm_cell.weight_hh,
                                                                           lstm_cell.bias_hh)
i_g, f_g, g_g, o_g = gates.chunk(4, 1)
c_manual = torch.sigmoid(i_g) * torch.tanh(g_g)
h_manual = torch.sigmoid(o_g) * torch.tanh(c_manual)
print("manual gates", (h_manual - lstm_outs[0]).abs().max().item() < 1e-6)


# --- stacked LSTMCells with dropout, trained as a sequence-to-one regressor ---
class StackedLSTM(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=2, dropout=0.1):
        super().__init__()
        self.cells = nn.ModuleList(
            [nn.LSTMCell(input_size if i == 0 else hidden_size, hidden_size) for i in range(num_layers)])
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden_size, 1)
        self.hidden_size = hidden_size

    def forward(self, seq, state=None):
        batch = seq.size(1)
        if state is None:
            state = [(seq.new_zeros(batch, self.hidden_size), seq.new_zeros(batch, self.hidden_size))
                     for _ in self.cells]
        for t in range(seq.size(0)):
            inp = seq[t]
            new_state = []
            for i, cell in enumerate(self.cells):
                h, c = cell(inp, state[i])
                new_state.append((h, c))
                inp = self.dropout(h) if i < len(self.cells) - 1 else h
            state = new_state
        return self.head(inp).squeeze(-1), state


def make_batch(n, length=8):
    seq = torch.rand(length, n, 2)
    seq[:, :, 1] = (torch.rand(length, n) < 0.3).float()
    target = (seq[:, :, 0] * seq[:, :, 1]).sum(0)
    return seq, target


model = StackedLSTM(2, 12)
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for step in range(60):
    seq, target = make_batch(16)
    pred, _ = model(seq)
    loss = F.mse_loss(pred, target)
    opt.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    if step % 15 == 0 or step == 59:
        print(f"step {step:2d} loss {loss.item():.4f} grad norm {norm.item():.4f}")
model.eval()
with torch.no_grad():
    seq, target = make_batch(64)
    pred, state = model(seq)
    print("eval mse", F.mse_loss(pred, target).item(), len(state), state[1][0].shape)

# --- truncated BPTT with detach ---
cell = nn.GRUCell(1, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.01)
series = torch.sin(torch.linspace(0, 12, 61)).unsqueeze(-1).unsqueeze(-1)
h = torch.zeros(1, 8)
for chunk_start in range(0, 60, 10):
    h = h.detach()
    loss = 0.0
    for t in range(chunk_start, chunk_start + 10):
        h = cell(series[t], h)
        loss = loss + (head(h) - series[t + 1]).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"chunk {chunk_start // 10} loss {loss.item() / 10:.5f} h.requires_grad {h.requires_grad} "
          f"leaf {h.detach().is_leaf}")

torch.manual_seed(3)
a = nn.LSTMCell(3, 2).weight_hh.clone()
torch.manual_seed(3)
b = nn.LSTMCell(3, 2).weight_hh.clone()
print("seeded init", torch.equal(a, b), a)
