"""A physics-informed neural network, as the PINN tutorials write it: an MLP u(t, x) with
tanh/softplus/SiLU layers, the PDE residual of the viscous Burgers equation
u_t + u u_x - nu u_xx = 0 from repeated torch.autograd.grad(..., grad_outputs=ones_like,
create_graph=True), boundary/initial losses, Adam then L-BFGS on the sum (third derivatives of the
activations reach the weights); an ODE u'' = -u solved by the same trick, and d3/dx3 of tanh."""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


class PINN(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 20), act(), nn.Linear(20, 20), act(), nn.Linear(20, 1))
        for m in self.net:
            if isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, t, x):
        return self.net(torch.cat([t, x], dim=1))


def residual(model, t, x, nu=0.01 / math.pi):
    u = model(t, x)
    u_t = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
    return u_t + u * u_x - nu * u_xx


t_f = torch.rand(200, 1, requires_grad=True)
x_f = (torch.rand(200, 1) * 2 - 1).requires_grad_(True)
x_0 = torch.linspace(-1, 1, 50).unsqueeze(1)
t_0 = torch.zeros_like(x_0)
u_0 = -torch.sin(math.pi * x_0)
t_b = torch.rand(50, 1)
x_b = torch.where(torch.rand(50, 1) > 0.5, torch.ones(50, 1), -torch.ones(50, 1))

for act in (nn.Tanh, nn.Softplus, nn.SiLU):
    torch.manual_seed(1)
    model = PINN(act)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for it in range(60):
        opt.zero_grad()
        loss_f = residual(model, t_f, x_f).pow(2).mean()
        loss_0 = (model(t_0, x_0) - u_0).pow(2).mean()
        loss_b = model(t_b, x_b).pow(2).mean()
        loss = loss_f + loss_0 + loss_b
        loss.backward()
        opt.step()
        if it % 20 == 0 or it == 59:
            print(f"{act.__name__} it {it} loss {loss.item():.8f} pde {loss_f.item():.8f}")
    lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=10, history_size=10, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        l = residual(model, t_f, x_f).pow(2).mean() + (model(t_0, x_0) - u_0).pow(2).mean() + model(t_b, x_b).pow(2).mean()
        l.backward()
        return l

    for k in range(3):
        l = lbfgs.step(closure)
        print(f"{act.__name__} lbfgs {k} loss {l.item():.8f}")
    print(act.__name__, "first layer grad norm", f"{model.net[0].weight.grad.norm().item():.8f}")

# u'' + u = 0, u(0) = 0, u'(0) = 1 -> sin(x), trial solution u = x + x^2 N(x).
torch.manual_seed(3)
net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
xs = torch.linspace(0, 2, 40).view(-1, 1).requires_grad_()
opt = torch.optim.Adam(net.parameters(), lr=0.02)
for it in range(150):
    opt.zero_grad()
    u = xs + xs ** 2 * net(xs)
    du = torch.autograd.grad(u.sum(), xs, create_graph=True)[0]
    d2u = torch.autograd.grad(du.sum(), xs, create_graph=True)[0]
    loss = ((d2u + u) ** 2).mean()
    loss.backward()
    opt.step()
    if it % 50 == 0 or it == 149:
        print(f"ode it {it} loss {loss.item():.8f}")
with torch.no_grad():
    u = xs + xs ** 2 * net(xs)
print("ode max error vs sin", f"{(u - torch.sin(xs)).abs().max().item():.6f}")

# third derivative of tanh by repeated grad, against the closed form
x = torch.linspace(-2, 2, 5, requires_grad=True)
y = torch.tanh(x)
d1 = torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)[0]
d2 = torch.autograd.grad(d1, x, torch.ones_like(d1), create_graph=True)[0]
d3 = torch.autograd.grad(d2, x, torch.ones_like(d2))[0]
t = torch.tanh(x.detach())
print("d3 tanh", [round(v, 10) for v in d3.tolist()])
assert torch.allclose(d3, -2 * (1 - t ** 2) * (1 - 3 * t ** 2))
print("grad_fns", d1.grad_fn is not None, d2.requires_grad, d3.requires_grad)
