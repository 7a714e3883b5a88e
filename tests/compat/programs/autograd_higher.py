"""Autograd beyond loss.backward(), as gradient-checking scripts use it: torch.autograd.grad with
create_graph=True for second derivatives and Hessian-vector products, the
torch.autograd.functional jacobian/hessian/vjp/jvp helpers, custom torch.autograd.Function
subclasses (ctx.save_for_backward, ctx.needs_input_grad, ctx.mark_non_differentiable) and
gradcheck; every number is compared with its hand derivative."""
import torch
from torch.autograd import Function
from torch.autograd.functional import hessian, jacobian, jvp, vjp

torch.manual_seed(5)
torch.set_default_dtype(torch.float64)

# d/dx and d2/dx2 of f(x) = x^3 sin(x) by double backward.
x = torch.tensor([0.3, -1.2, 2.5], requires_grad=True)
f = (x ** 3 * torch.sin(x)).sum()
(g,) = torch.autograd.grad(f, x, create_graph=True)
(h,) = torch.autograd.grad(g.sum(), x)
xd = x.detach()
g_hand = 3 * xd ** 2 * torch.sin(xd) + xd ** 3 * torch.cos(xd)
h_hand = 6 * xd * torch.sin(xd) + 6 * xd ** 2 * torch.cos(xd) - xd ** 3 * torch.sin(xd)
print("grad", [round(v, 10) for v in g.tolist()])
print("second", [round(v, 10) for v in h.tolist()])
assert torch.allclose(g, g_hand) and torch.allclose(h, h_hand)

# Hessian-vector product of a quadratic form plus a log-sum-exp, by double backward.
A = torch.randn(4, 4)
A = A @ A.T
w = torch.randn(4, requires_grad=True)
v = torch.randn(4)


def energy(w):
    return 0.5 * w @ A @ w + torch.logsumexp(w, 0)


(gw,) = torch.autograd.grad(energy(w), w, create_graph=True)
(hvp,) = torch.autograd.grad(gw, w, grad_outputs=v)
p = torch.softmax(w.detach(), 0)
H_hand = A + torch.diag(p) - torch.outer(p, p)
print("hvp", [round(t, 10) for t in hvp.tolist()])
assert torch.allclose(hvp, H_hand @ v)
H = hessian(energy, w.detach())
print(f"hessian trace {torch.trace(H).item():.10f} symmetric {torch.allclose(H, H.T)}")
assert torch.allclose(H, H_hand)


def model(x):
    return torch.stack([x[0] * x[1], torch.exp(x[2]) - x[0], x[1] ** 2])


x0 = torch.tensor([1.0, 2.0, 0.5])
J = jacobian(model, x0)
J_hand = torch.tensor([[2.0, 1.0, 0.0], [-1.0, 0.0, torch.exp(torch.tensor(0.5)).item()], [0.0, 4.0, 0.0]])
print("jacobian", [[round(t, 10) for t in row] for row in J.tolist()])
assert torch.allclose(J, J_hand)
_, vj = vjp(model, x0, torch.ones(3))
_, jv = jvp(model, x0, torch.ones(3))
print("vjp", [round(t, 10) for t in vj.tolist()], "jvp", [round(t, 10) for t in jv.tolist()])
assert torch.allclose(vj, J.sum(0)) and torch.allclose(jv, J.sum(1))


class SmoothClamp(Function):
    """y = x for |x| < 1, else sign(x) * (2 - 1/|x|); returns also the (non-differentiable) mask."""

    @staticmethod
    def forward(ctx, x, scale):
        inside = x.abs() < 1
        y = torch.where(inside, x, torch.sign(x) * (2 - 1 / x.abs())) * scale
        ctx.save_for_backward(x, scale)
        ctx.mark_non_differentiable(inside)
        return y, inside

    @staticmethod
    def backward(ctx, grad_y, grad_inside):
        x, scale = ctx.saved_tensors
        inside = x.abs() < 1
        dy_dx = torch.where(inside, torch.ones_like(x), 1 / x ** 2)
        grad_x = grad_y * dy_dx * scale if ctx.needs_input_grad[0] else None
        grad_scale = None
        if ctx.needs_input_grad[1]:
            base = torch.where(inside, x, torch.sign(x) * (2 - 1 / x.abs()))
            grad_scale = (grad_y * base).sum().reshape(scale.shape)
        return grad_x, grad_scale


xs = torch.tensor([-3.0, -0.5, 0.2, 1.5, 4.0], requires_grad=True)
scale = torch.tensor([2.0], requires_grad=True)
y, inside = SmoothClamp.apply(xs, scale)
print("custom forward", [round(t, 10) for t in y.tolist()], "inside", inside.tolist(),
      "mask requires grad", inside.requires_grad)
(y ** 2).sum().backward()
print("custom grad x", [round(t, 10) for t in xs.grad.tolist()], f"grad scale {scale.grad.item():.10f}")
assert torch.autograd.gradcheck(lambda a, b: SmoothClamp.apply(a, b)[0], (xs.detach().requires_grad_(), scale))
only_x = torch.tensor([0.5, 2.0], requires_grad=True)
y2, _ = SmoothClamp.apply(only_x, torch.tensor([1.0]))
y2.sum().backward()
print("needs_input_grad path", only_x.grad.tolist())


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


z = torch.tensor([0.1, 0.7], requires_grad=True)
out = Exp.apply(z)
(gz,) = torch.autograd.grad(out.sum(), z, create_graph=True)
(ggz,) = torch.autograd.grad(gz.sum(), z)
print("custom exp double backward", [round(t, 10) for t in ggz.tolist()])
assert torch.allclose(ggz, z.detach().exp())
assert torch.autograd.gradgradcheck(Exp.apply, (z,))
