"""Custom autograd Functions as the extending-autograd tutorial and user libraries write them,
checked with gradcheck and gradgradcheck: the classic forward(ctx, ...) style and the newer
forward + setup_context style, ctx.save_for_backward with non-tensor attributes on ctx,
ctx.needs_input_grad, ctx.mark_non_differentiable, ctx.set_materialize_grads(False),
ctx.mark_dirty for an in-place Function, once_differentiable (and the error its result raises
on double backward), a backward written with differentiable ops (so gradgradcheck passes), and
gradcheck catching a wrong backward."""
import torch
from torch.autograd import Function, gradcheck, gradgradcheck
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


inp = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
       torch.randn(30, 20, dtype=torch.double, requires_grad=True))
print("linear gradcheck", gradcheck(LinearFunction.apply, inp, eps=1e-6, atol=1e-4))
print("linear gradgradcheck", gradgradcheck(LinearFunction.apply, inp))
x = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
W = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
b = torch.randn(2, dtype=torch.double)
out = LinearFunction.apply(x, W, b)
out.pow(2).sum().backward()
print("no bias grad", b.grad is None, "W.grad", [round(v, 8) for v in W.grad.flatten().tolist()])
print(out.grad_fn.__class__.__name__ if False else "grad_fn set", out.requires_grad, out.is_leaf)


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


t = torch.randn(5, dtype=torch.double, requires_grad=True)
print("setup_context gradcheck", gradcheck(lambda a: MulConstant.apply(a, 3.5), (t,)))
print("setup_context gradgradcheck", gradgradcheck(lambda a: MulConstant.apply(a, 3.5), (t,)))


class Cube(Function):
    @staticmethod
    def forward(x):
        return x ** 3, 3 * x ** 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        _, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx
        if grad_dx is not None:
            result = result + grad_dx * 6 * x
        return result


xc = torch.tensor([0.5, -1.5, 2.0], dtype=torch.double, requires_grad=True)
print("cube gradcheck", gradcheck(Cube.apply, (xc,)), "gradgradcheck", gradgradcheck(Cube.apply, (xc,)))
y3, dy = Cube.apply(xc)
(g,) = torch.autograd.grad(y3.sum() + dy.sum(), xc, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), xc)
print("cube grads", g.tolist(), gg.tolist())


class Sort(Function):
    @staticmethod
    def forward(ctx, x):
        sorted_, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return sorted_, idx

    @staticmethod
    def backward(ctx, g1, g2):
        (idx,) = ctx.saved_tensors
        grad_input = torch.zeros_like(g1)
        grad_input.index_add_(0, idx, g1)
        return grad_input


xs = torch.tensor([3.0, 1.0, 2.0, 0.5], dtype=torch.double, requires_grad=True)
vals, idx = Sort.apply(xs)
print("sort", vals.tolist(), idx.tolist(), "idx requires grad", idx.requires_grad, idx.dtype)
(vals * torch.arange(4.0, dtype=torch.double)).sum().backward()
print("sort grad", xs.grad.tolist())
print("sort gradcheck", gradcheck(lambda a: Sort.apply(a)[0], (xs.detach().requires_grad_(),)))


class SimpleFunc(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        if g1 is not None:
            grad_input += g1
        if g2 is not None:
            grad_input += 2 * g2
        return grad_input


a = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)
o1, o2 = SimpleFunc.apply(a)
o1.sum().backward()
print("only first output used", a.grad.tolist())
a.grad = None
o1, o2 = SimpleFunc.apply(a)
(o1.sum() + o2.sum()).backward()
print("both used", a.grad.tolist())
o1, o2 = SimpleFunc.apply(a)
(ga,) = torch.autograd.grad(o2.sum(), a, create_graph=True)
print("once_differentiable result", ga.tolist(), ga.requires_grad)
try:
    ga.sum().backward()
except RuntimeError as e:
    print("double backward through once_differentiable: RuntimeError")


class AddOne_(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


base = torch.tensor([1.0, 2.0], requires_grad=True)
z = base * 2
z2 = AddOne_.apply(z)
print("mark_dirty", z2 is z, z.tolist(), z._version > 0)
z2.sum().backward()
print("mark_dirty grad", base.grad.tolist())


class BadSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # should be 2 * g * x


xb = torch.randn(3, dtype=torch.double, requires_grad=True)
print("bad backward, raise_exception=False:", gradcheck(BadSquare.apply, (xb,), raise_exception=False))
try:
    gradcheck(BadSquare.apply, (xb,))
except RuntimeError as e:
    print("bad backward raises:", type(e).__name__, "Jacobian mismatch" in str(e))


class Softplus(Function):
    """A backward written with differentiable ops: gradgradcheck passes."""

    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x)
        ctx.beta = beta
        return torch.log1p(torch.exp(beta * x)) / beta

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * torch.sigmoid(ctx.beta * x), None


xsp = torch.randn(6, dtype=torch.double, requires_grad=True)
print("softplus gradcheck", gradcheck(Softplus.apply, (xsp, 2.0)), "gradgradcheck", gradgradcheck(Softplus.apply, (xsp, 2.0)))
(g1,) = torch.autograd.grad(Softplus.apply(xsp, 2.0).sum(), xsp, create_graph=True)
(g2,) = torch.autograd.grad(g1.sum(), xsp, create_graph=True)
(g3,) = torch.autograd.grad(g2.sum(), xsp)
s = torch.sigmoid(2 * xsp.detach())
print("softplus third derivative matches", torch.allclose(g3, 4 * s * (1 - s) * (1 - 2 * s)))
print("input grads", gradcheck(Softplus.apply, (xsp, 2.0), check_undefined_grad=True, check_batched_grad=False))
