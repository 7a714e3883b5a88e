"""What scripts print while exploring tensors, as the "tensors" tutorial and notebooks do: reprs
of every dtype (bool, int64, float16/bfloat16/float64), scalars and empty tensors, large tensors
summarised with ..., numbers that switch to scientific notation, torch.set_printoptions
(precision, sci_mode, threshold, edgeitems, linewidth, profile), requires_grad and grad_fn in
reprs, torch.Size, dtypes and devices, named-tuple results (torch.return_types.max, sort, topk),
nested modules with extra_repr, parameters and state_dict keys, and f-string formatting."""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
print(x_data)
print(x_data.dtype, x_data.shape, x_data.device)
x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
x_rand = torch.rand_like(x_data, dtype=torch.float)
print(f"Random Tensor: \n {x_rand} \n")
shape = (2, 3,)
print(f"Random Tensor: \n {torch.rand(shape)} \n")
print(f"Ones Tensor: \n {torch.ones(shape)} \n")
print(f"Zeros Tensor: \n {torch.zeros(shape)}")
tensor = torch.rand(3, 4)
print(f"Shape of tensor: {tensor.shape}")
print(f"Datatype of tensor: {tensor.dtype}")
print(f"Device tensor is stored on: {tensor.device}")

tensor = torch.ones(4, 4)
print(f"First row: {tensor[0]}")
print(f"First column: {tensor[:, 0]}")
print(f"Last column: {tensor[..., -1]}")
tensor[:, 1] = 0
print(tensor)
t1 = torch.cat([tensor, tensor, tensor], dim=1)
print(t1)
y1 = tensor @ tensor.T
y2 = tensor.matmul(tensor.T)
y3 = torch.rand_like(y1)
torch.matmul(tensor, tensor.T, out=y3)
print(y3)
z1 = tensor * tensor
z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(z3)
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))
print(f"{tensor} \n")
tensor.add_(5)
print(tensor)

# numpy bridge: shared memory both ways
t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")

# dtypes
print(torch.tensor([True, False, True]))
print(torch.tensor([1, -2, 300]))
print(torch.tensor([1.5, -2.25], dtype=torch.float64))
print(torch.tensor([1.5, -2.25], dtype=torch.float16))
print(torch.tensor([1.5, -2.25], dtype=torch.bfloat16))
print(torch.tensor([1, 2], dtype=torch.float64))
print(torch.tensor(3.5), torch.tensor(7), torch.tensor(True))
print(torch.tensor([]), torch.zeros(0, 3), torch.zeros(2, 0))
print(torch.tensor([float("inf"), float("-inf"), float("nan"), 1.0]))
print(torch.tensor([1e-8, 1.0, 1e8]))
print(torch.tensor([123456.789, 0.001]))
print(torch.tensor([0.1, 0.25, 100.0]))
print(torch.tensor([1.0, 2.0, 3.0]))
print(torch.tensor([[1e10, 2e-5], [3.0, 4.0]], dtype=torch.float64))
print(torch.arange(2000))
print(torch.arange(1200.0).reshape(30, 40) / 7)
print(torch.zeros(3, 2, 2))
print(torch.tensor([1, 2, 3]).dtype, torch.tensor([1.0]).dtype, torch.tensor([True]).dtype)
print(torch.float32, torch.int64, torch.long, torch.double, torch.half, torch.bool)
print(torch.device("cpu"), repr(torch.device("cpu")))
print(torch.Size([2, 3]), torch.Size([]), len(torch.Size([4, 5, 6])), torch.Size([4, 5, 6])[1:])
print(torch.randn(2, 3).size(), torch.randn(2, 3).size(1), torch.randn(2, 3).shape[-1])

# gradients in reprs
w = torch.randn(3, requires_grad=True)
print(w)
y = (w * 2).sum()
print(y)
print(w * 2)
print(w.exp().mean())
print(w[0])
print(w.detach())
y.backward()
print(w.grad)
with torch.no_grad():
    print(w * 2)
print(torch.nn.Parameter(torch.ones(2)))
print(repr(torch.ones(2, requires_grad=True).sum().grad_fn).split(" ")[0])

# named tuples
v = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
print(v.max(dim=1))
print(torch.min(v, 0))
print(torch.sort(v, descending=True))
print(torch.topk(v, 2))
print(v.median(dim=1))
print(torch.kthvalue(v, 2, dim=1))
print(torch.mode(torch.tensor([1, 2, 2, 3])))
print(torch.std_mean(v, dim=1))
print(torch.aminmax(v))
print(torch.cummax(v, dim=1))
print(v.max(1).values, v.max(1)[1], v.max(1).indices)
vals, idx = v.sort(dim=1)
print(vals, idx)

# print options
torch.set_printoptions(precision=2)
print(torch.tensor([1.23456, 2.34567]))
torch.set_printoptions(sci_mode=True)
print(torch.tensor([1.23456, 2.34567]))
torch.set_printoptions(sci_mode=False)
print(torch.tensor([1e-8, 1.0, 1e8]))
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(10.0))
print(torch.arange(24).reshape(4, 6))
torch.set_printoptions(linewidth=40)
torch.set_printoptions(threshold=1000)
print(torch.arange(30.0) / 3)
torch.set_printoptions(profile="default")
print(torch.arange(30.0) / 3)
torch.set_printoptions(precision=6)
print(torch.tensor([1 / 3, 2 / 3]))
torch.set_printoptions(profile="short")
print(torch.tensor([1 / 3, 2 / 3]))
torch.set_printoptions(profile="default")


# modules
class Block(nn.Module):
    def __init__(self, dim, scale=0.5):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(0.1))
        self.scale = scale

    def extra_repr(self):
        return f"scale={self.scale}"

    def forward(self, x):
        return x + self.scale * self.ff(self.norm(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8, padding_idx=0)
        self.blocks = nn.ModuleList([Block(8) for _ in range(2)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "reg": nn.Linear(8, 1, bias=False)})
        self.conv = nn.Sequential(OrderedDict([
            ("conv1", nn.Conv2d(1, 4, 3, stride=2, padding=1)),
            ("bn1", nn.BatchNorm2d(4)),
            ("relu1", nn.ReLU(inplace=True)),
            ("pool", nn.MaxPool2d(2)),
            ("convt", nn.ConvTranspose2d(4, 2, kernel_size=4, stride=2, padding=1, bias=False)),
            ("flat", nn.Flatten()),
        ]))
        self.rnn = nn.LSTM(8, 16, num_layers=2, batch_first=True, dropout=0.2)
        self.gru = nn.GRU(8, 4, bidirectional=True)
        self.misc = nn.Sequential(nn.LeakyReLU(0.2), nn.Softmax(dim=-1), nn.Identity(), nn.Tanh(),
                                  nn.AdaptiveAvgPool2d((1, 1)), nn.AvgPool2d(2), nn.Conv1d(2, 2, 3, padding="same"),
                                  nn.BatchNorm1d(5, momentum=0.2), nn.GroupNorm(2, 4), nn.Unflatten(1, (2, 2)),
                                  nn.Dropout2d(0.5), nn.ELU(alpha=0.5), nn.Hardtanh(-2, 2), nn.Softplus(beta=2),
                                  nn.MultiheadAttention(8, 2), nn.CrossEntropyLoss(label_smoothing=0.1),
                                  nn.MSELoss(reduction="sum"), nn.PReLU(), nn.Upsample(scale_factor=2, mode="nearest"),
                                  nn.Embedding(5, 3, max_norm=1.0), nn.LayerNorm([4, 4], elementwise_affine=False))
        self.register_buffer("steps", torch.zeros(1))


net = Net()
print(net)
print(net.blocks[0].ff[0])
print(net.heads["cls"].weight.shape, net.conv.conv1.weight.shape)
print(list(net.state_dict().keys()))
print([(n, tuple(p.shape)) for n, p in net.named_parameters()][:6])
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
print(net.heads["reg"].weight)
print(nn.Linear(2, 2).weight.grad)
print(F.one_hot(torch.tensor([0, 2, 1]), 3))
print(torch.tensor([[0.5, 0.5]]).t().contiguous().is_contiguous(), torch.tensor([1, 2]).numel())
print(torch.finfo(torch.float32).eps, torch.finfo(torch.float16).max, torch.iinfo(torch.int64).max)
loss = torch.tensor(0.123456789)
print(f"loss: {loss:>7f}  [{64:>5d}/{1000:>5d}]")
print(f"{loss.item():.3e} {torch.tensor(2.5):.2f} {torch.tensor(3):d}")
print("%.4f" % torch.tensor(0.5), "{:.3f}".format(torch.tensor(1.0 / 3)))
print(str(torch.tensor([1.0, 2.0])), repr(torch.tensor(1.0)), str(torch.tensor(5)))
print(torch.tensor([1.0, 2.0]).tolist(), torch.tensor(2.0).tolist(), torch.tensor([[1, 2]]).numpy())
print(torch.zeros(2, 3).type(), torch.zeros(2, dtype=torch.long).type(), torch.zeros(1).type(torch.int64).dtype)
print(torch.is_tensor(loss), torch.is_floating_point(loss), torch.numel(torch.zeros(2, 3)))
