"""The "Tensors" page of the PyTorch basics tutorial and the numpy-bridge idioms people copy from
it: from_numpy/numpy() sharing memory in both directions, torch.as_tensor without a copy,
torch.tensor copying, ones_like/rand_like(dtype=...), in-place ops with a trailing underscore,
agg.item(), tensor.T, torch.cat/stack, t.new_tensor/new_ones/new_full, type conversions
(.long(), .to(float64), .type(torch.FloatTensor)), comparison/arg functions on ties and NaN,
and printing of tensors of each dtype."""
import numpy as np
import torch

data = [[1, 2], [3, 4]]
x_data = torch.tensor(data)
np_array = np.array(data)
x_np = torch.from_numpy(np_array)
print(x_data, x_np.dtype)
x_ones = torch.ones_like(x_data)
print(f"Ones Tensor: \n {x_ones} \n")
torch.manual_seed(0)
x_rand = torch.rand_like(x_data, dtype=torch.float)
print(f"Random Tensor: \n {x_rand} \n")
shape = (2, 3,)
print(torch.rand(shape), torch.ones(shape), torch.zeros(shape), sep="\n")
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
z1 = tensor * tensor
z2 = tensor.mul(tensor)
z3 = torch.rand_like(tensor)
torch.mul(tensor, tensor, out=z3)
print(y3, z3, sep="\n")
agg = tensor.sum()
agg_item = agg.item()
print(agg_item, type(agg_item))
print(f"{tensor} \n")
tensor.add_(5)
print(tensor)
t = torch.ones(5)
print(f"t: {t}")
n = t.numpy()
print(f"n: {n}")
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")
n = np.ones(5)
t = torch.from_numpy(n)
np.add(n, 1, out=n)
print(f"t: {t}")
print(f"n: {n}")
a = np.arange(4.0)
at = torch.as_tensor(a)
ct = torch.tensor(a)
a[0] = 100
print("as_tensor shares", at[0].item(), "tensor copies", ct[0].item())
base = torch.tensor([1.5, 2.5], dtype=torch.float64)
print(base.new_tensor([1, 2]), base.new_ones(3), base.new_full((2,), 7), base.new_zeros(2, 1).shape)
print(torch.tensor([1.7, -2.2]).long(), torch.tensor([1, 2]).to(torch.float64),
      torch.tensor([1, 2]).type(torch.FloatTensor), torch.tensor([0.0, 1.5]).bool())
print(torch.tensor([3, 1, 3]).argmax(), torch.tensor([1.0, float("nan"), 2.0]).argmax(),
      torch.tensor([1.0, float("nan"), 2.0]).max(), torch.tensor([2.0, 5.0, 5.0]).argmax())
print(torch.tensor([True, False]), torch.tensor([1, 2], dtype=torch.int64), torch.tensor(3.5),
      torch.tensor([1e-8, 1e8]), torch.tensor([[1.123456789, 2.0]], dtype=torch.float64))
print(torch.arange(12).reshape(3, 4).T.contiguous().view(-1), torch.arange(6).reshape(2, 3).flip(1))
print(torch.zeros(2, 0), torch.empty(0).shape, torch.tensor([]).dtype)
print(torch.tensor([float("inf"), -float("inf"), float("nan")]), torch.tensor([1, 2]).float().mean())
print(torch.full((2, 2), 1.5).half(), torch.tensor([0.1, 0.2]).bfloat16())
