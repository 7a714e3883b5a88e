"""Tensor quiz, the "what does this print?" exercises of PyTorch courses and interview-prep blogs:
dtype promotion with Python scalars, 0-d tensors and mixed dtypes (result_type, promote_types,
can_cast), integer division and modulo of negatives (div rounding modes, fmod vs remainder),
rounding half to even, in-place ops through views (diagonal, transpose, slices, unbind),
advanced indexing (broadcast index arrays, bool masks, index_put_ with accumulate, scatter_reduce),
torch.finfo fields, and the printing of edge values (nan, inf, -0.0, tiny and huge numbers,
set_printoptions precision / sci_mode / threshold / edgeitems / linewidth)."""
import torch

torch.manual_seed(0)

print("== promotion ==")
i = torch.tensor([1, 2, 3])
f = torch.tensor([1.0, 2.0, 3.0])
h = torch.tensor([1.0, 2.0], dtype=torch.float16)
d = torch.tensor(2.0, dtype=torch.float64)
b = torch.tensor([True, False, True])
cases = {
    "i * 2.5": i * 2.5,
    "i / 2": i / 2,
    "i // 2": i // 2,
    "i + True": i + True,
    "b + b": b + b,
    "b * 1.5": b * 1.5,
    "f + d(0-d)": f + d,
    "h + 1.0": h + 1.0,
    "h + d(0-d)": h + d,
    "h + f[:2]": h + f[:2],
    "i + f": i + f,
    "i ** 2": i ** 2,
    "i ** -1.0": i ** -1.0,
    "2 ** i": 2 ** i,
    "i.sum()": i.sum(),
    "b.sum()": b.sum(),
    "i.mean(dtype)": i.mean(dtype=torch.float32),
    "f.long()": f.long(),
    "h.sum()": h.sum(),
    "i > 1.5": i > 1.5,
}
for k, v in cases.items():
    print(f"{k:14s} -> {v.dtype} {v.tolist()}")
print("result_type", torch.result_type(i, 2.5), torch.result_type(h, d), torch.result_type(i, f))
print("promote_types", torch.promote_types(torch.float16, torch.float32),
      torch.promote_types(torch.int64, torch.float16), torch.promote_types(torch.bool, torch.int64))
print("can_cast", torch.can_cast(torch.float64, torch.float32), torch.can_cast(torch.float32, torch.int64),
      torch.can_cast(torch.int64, torch.float32))
try:
    i += 0.5
except RuntimeError as e:
    print("in-place promote error:", isinstance(e, RuntimeError))
print("i unchanged", i.tolist())

print("== division ==")
a = torch.tensor([-7, -3, 3, 7])
print("a // 2", (a // 2).tolist())
print("a % 3", (a % 3).tolist())
print("fmod", torch.fmod(a, 3).tolist(), "remainder", torch.remainder(a, 3).tolist())
print("trunc div", torch.div(a, 2, rounding_mode="trunc").tolist(),
      "floor div", torch.div(a, 2, rounding_mode="floor").tolist())
print("true div", torch.div(a, 2).tolist())
fa = torch.tensor([-7.5, -3.0, 3.0, 7.5])
print("float //", (fa // 2).tolist(), "float %", (fa % -2).tolist())
print("fmod float", torch.fmod(fa, -2).tolist())
print("round", torch.round(torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.675])).tolist())
print("round(decimals=2)", torch.round(torch.tensor([2.675, 1.005, -3.14159]), decimals=2))
print("floor/ceil/trunc", torch.floor(fa).tolist(), torch.ceil(fa).tolist(), torch.trunc(fa).tolist())
try:
    torch.tensor([1, 2]) // torch.tensor([0, 1])
except RuntimeError as e:
    print("int zero div:", isinstance(e, RuntimeError))
print("float zero div", (torch.tensor([1.0, -1.0, 0.0]) / 0).tolist())

print("== views and in-place ==")
m = torch.arange(12.0).reshape(3, 4)
row = m[1]
row += 100
print(m)
m.t()[0].mul_(-1)
print(m[:, 0].tolist(), m.is_contiguous(), m.t().is_contiguous())
m.diagonal().fill_(0.5)
print(m)
col = m[:, 1:3]
col.zero_()
print(m, col.stride(), col.storage_offset())
first, second, third = m.unbind(0)
third.add_(1)
print(m[2].tolist())
e = torch.zeros(3).expand(2, 3)
try:
    e.add_(1)
except RuntimeError as err:
    print("expanded in-place:", isinstance(err, RuntimeError))
v = m.view(-1)
v[::5] = -1
print(m)
n = torch.ones(2, 3)
n[n > 0] = torch.tensor([1.0, 2, 3, 4, 5, 6])
print(n)
print(m.flatten().data_ptr() == m.data_ptr(), m.t().flatten().data_ptr() == m.data_ptr())
print(torch.arange(6).view(2, 3).t().contiguous().view(-1).tolist())
try:
    torch.arange(6).view(2, 3).t().view(-1)
except RuntimeError as err:
    print("view of non-contiguous:", isinstance(err, RuntimeError))
print(torch.arange(6).view(2, 3).t().reshape(-1).tolist())

print("== indexing ==")
x = torch.arange(24).reshape(2, 3, 4)
print(x[[0, 1], [1, 2]].tolist())
print(x[:, [0, 2], 1:3].shape, x[..., [1, 3]].shape, x[[[0], [1]], :, [0, 3]].shape)
print(x[:, [0, 2]][:, :, [1, 3]].tolist())
print(x[torch.tensor([[0, 1], [1, 0]])].shape)
print(x[x % 5 == 0].tolist())
print(x[None, 1, ..., None].shape, x[1, :, -1].tolist(), x[-1, -1, -2:].tolist())
y = torch.zeros(5)
idx = torch.tensor([0, 1, 1, 3, 3, 3])
y[idx] += 1
print("y[idx] += 1", y.tolist())
y.zero_()
y.index_put_((idx,), torch.ones(6), accumulate=True)
print("index_put_ accumulate", y.tolist())
print("index_add_", torch.zeros(5).index_add_(0, idx, torch.arange(6.0)).tolist())
src = torch.tensor([5.0, 1.0, 7.0, 2.0, 9.0, 4.0])
grp = torch.tensor([0, 1, 0, 1, 2, 2])
for red in ["sum", "prod", "mean", "amax", "amin"]:
    r = torch.zeros(3).scatter_reduce(0, grp, src, reduce=red, include_self=False)
    print("scatter_reduce", red, r.tolist())
print("scatter_reduce include_self", torch.ones(3).scatter_reduce(0, grp, src, reduce="mean").tolist())
s = torch.zeros(3, 4).scatter_(1, torch.tensor([[1], [3], [0]]), 1.0)
print(s)
print("gather", torch.gather(x[0], 1, torch.tensor([[3, 0], [1, 1], [2, 0]])).tolist())
print("take", torch.take(x, torch.tensor([0, 23, 11])).tolist())
print("take_along_dim", torch.take_along_dim(x[0], x[0].argmax(1, keepdim=True), dim=1).tolist())
print("where", torch.where(x[0] > 5, x[0], -x[0]).tolist())
print("nonzero", torch.nonzero(x[0] % 4 == 1).tolist(), torch.nonzero(x[0] > 9, as_tuple=True))
print("argwhere", torch.argwhere(x[1] < 14).tolist())
try:
    x[2]
except IndexError as err:
    print("IndexError", "out of range" in str(err) or "out of bounds" in str(err))

print("== einsum / broadcasting ==")
A = torch.randn(2, 3)
B = torch.randn(3, 4)
print(torch.allclose(torch.einsum("ij,jk->ik", A, B), A @ B))
print(torch.einsum("ii", torch.arange(9.0).view(3, 3)), torch.einsum("ij->j", A).shape,
      torch.einsum("i,j->ij", torch.arange(2.0), torch.arange(3.0)).tolist())
print(torch.einsum("bij,bjk->bik", torch.randn(5, 2, 3), torch.randn(5, 3, 2)).shape)
print(torch.einsum("...ij->...ji", torch.randn(2, 3, 4)).shape)
print(torch.broadcast_shapes((3, 1), (1, 4), (2, 1, 1)))
try:
    torch.ones(2, 3) + torch.ones(3, 2)
except RuntimeError as err:
    print("broadcast error:", isinstance(err, RuntimeError))
print(torch.arange(3).unsqueeze(1) - torch.arange(4))
w = torch.arange(10.0)
print(w.unfold(0, 4, 3))
print(torch.arange(16.0).view(4, 4).unfold(0, 2, 2).unfold(1, 2, 2).shape)

print("== finfo / iinfo ==")
for dt in [torch.float32, torch.float64, torch.float16, torch.bfloat16]:
    fi = torch.finfo(dt)
    print(dt, fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.smallest_normal, fi.resolution)
print(torch.finfo(torch.float32))
print(torch.iinfo(torch.int64).max, torch.iinfo(torch.int64).min, torch.iinfo(torch.int64).bits)
print(torch.tensor(3e38) * 10, torch.tensor(1e-45), torch.tensor(1e-46))
print(torch.tensor(65504.0, dtype=torch.float16) * 2, torch.tensor(1 / 3, dtype=torch.bfloat16))
print(torch.tensor([1e-8], dtype=torch.float16), torch.tensor(0.1, dtype=torch.float64).item())

print("== printing ==")
print(torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1.5]))
print(torch.tensor([-0.0]), torch.tensor(-0.0), torch.tensor([0.0, -0.0]).sum())
print(torch.tensor([1e-10, 1.0, 1e10]))
print(torch.tensor([1e-5, 1.0]))
print(torch.tensor([123456789.0, 1.0]))
print(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.25, 2.5]), torch.tensor([100.0, 2.5]))
print(torch.tensor([0.1, 0.25], dtype=torch.float64))
print(torch.tensor([1.0, float("nan")]), torch.tensor([1e20, float("inf")]))
print(torch.tensor([[1, -2], [300, 4]]), torch.tensor([True, False]), torch.tensor([]))
print(torch.empty(0, 3), torch.zeros(2, 0), torch.tensor(7), torch.tensor(2.5))
print(torch.tensor([0.001, 0.002]), torch.tensor([1e-4, 5e-4]), torch.tensor([1e5, 1e-3]))
print(torch.tensor([12345.678, 0.5]), torch.tensor([-1e-3, 1e3]))
print(torch.randn(3, dtype=torch.float64))
print(torch.tensor([1.5, 2.5], dtype=torch.float16), torch.tensor([1.5, 2.5], dtype=torch.bfloat16))
print(torch.tensor([1, 2], dtype=torch.float64), torch.arange(3, dtype=torch.float32))
torch.set_printoptions(precision=2)
print(torch.tensor([3.14159, 2.71828, 1e-3]))
torch.set_printoptions(sci_mode=True)
print(torch.tensor([3.14159, 100.0]))
torch.set_printoptions(sci_mode=False, precision=6)
print(torch.tensor([1e-7, 1.0, 1e7]))
torch.set_printoptions(threshold=10, edgeitems=2)
print(torch.arange(30.0))
print(torch.arange(60).view(6, 10))
torch.set_printoptions(linewidth=40, threshold=1000, edgeitems=3)
print(torch.arange(20.0) / 3)
torch.set_printoptions(profile="default")
print(torch.arange(20.0) / 3)
print(repr(torch.tensor([1.0, 2.0], requires_grad=True) * 2))
print(str(torch.zeros(2, 2, dtype=torch.float64)))
print(f"{torch.tensor(3.14159):.2f}", f"{torch.tensor(7)}", f"{torch.tensor([1.5, 2.0])}")
print(torch.tensor(1.0).item(), torch.tensor(0.1).item(), torch.tensor(1e-3).double().item())
print(torch.tensor([0.1, 0.2]).sum().item(), (torch.tensor(0.1) + torch.tensor(0.2)).item())
