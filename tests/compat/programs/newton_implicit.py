"""Newton's method and implicit differentiation, as the "implicit layers" tutorials write them in
PyTorch: a nonlinear system solved by Newton steps (Jacobian from torch.autograd.functional.jacobian,
each step through linalg.lu_factor / lu_solve), the derivative of its root with respect to a
parameter by the implicit function theorem (checked against unrolled autograd through the Newton
iterations and against finite differences), Newton's method for logistic regression with the
Hessian from torch.func.hessian checked against the hand-derived X^T diag(p(1-p)) X, and a
deep-equilibrium fixed-point layer z = tanh(W z + x) as a custom autograd.Function whose backward
solves the adjoint linear system, passed through torch.autograd.gradcheck. All in float64."""
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)

# ---- Newton's method for F(x; theta) = 0 ---------------------------------------------------------
n = 4
A = torch.randn(n, n) * 0.3 + 2 * torch.eye(n)
c = torch.randn(n)


def F(x, theta):
    return A @ x + 0.2 * x**3 - theta * c - torch.sin(x)


def newton(theta, x0, iters=8, create_graph=False):
    x = x0
    history = []
    for _ in range(iters):
        J = torch.autograd.functional.jacobian(lambda v: F(v, theta), x, create_graph=create_graph)
        LU, piv = torch.linalg.lu_factor(J)
        x = x - torch.linalg.lu_solve(LU, piv, F(x, theta).unsqueeze(-1)).squeeze(-1)
        history.append(F(x, theta).norm().item())
    return x, history


theta = torch.tensor(1.5)
x_star, hist = newton(theta, torch.zeros(n))
print("newton residuals", [f"{h:.3e}" for h in hist[:4]], "converged", hist[-1] < 1e-12)
print("root", [round(v, 8) for v in x_star.tolist()])

# dx*/dtheta = -(dF/dx)^-1 dF/dtheta
Jx = torch.autograd.functional.jacobian(lambda v: F(v, theta), x_star)
Jt = torch.autograd.functional.jacobian(lambda t: F(x_star, t), theta)
dx_implicit = -torch.linalg.solve(Jx, Jt)
th = theta.clone().requires_grad_(True)
x_unrolled, _ = newton(th, torch.zeros(n), create_graph=True)
dx_unrolled = torch.stack([torch.autograd.grad(x_unrolled[i], th, retain_graph=True)[0] for i in range(n)])
eps = 1e-6
dx_fd = (newton(theta + eps, x_star)[0] - newton(theta - eps, x_star)[0]) / (2 * eps)
print("implicit", [round(v, 8) for v in dx_implicit.tolist()])
print("unrolled agrees", torch.allclose(dx_implicit, dx_unrolled, atol=1e-10),
      "finite differences agree", torch.allclose(dx_implicit, dx_fd, atol=1e-7))

# ---- Newton's method for logistic regression ----------------------------------------------------
torch.manual_seed(1)
m, d = 200, 3
X = torch.cat([torch.ones(m, 1), torch.randn(m, d - 1)], dim=1)
w_true = torch.tensor([-0.5, 1.5, -2.0])
y = torch.bernoulli(torch.sigmoid(X @ w_true))


def nll(w):
    z = X @ w
    return (torch.nn.functional.softplus(z) - y * z).sum()


w = torch.zeros(d)
for it in range(8):
    g = torch.func.grad(nll)(w)
    H = torch.func.hessian(nll)(w)
    p = torch.sigmoid(X @ w)
    g_hand = X.T @ (p - y)
    H_hand = X.T @ (X * (p * (1 - p)).unsqueeze(1))
    if it == 0:
        print("grad matches hand derivative", torch.allclose(g, g_hand), "hessian matches", torch.allclose(H, H_hand))
    w = w - torch.linalg.solve(H, g)
    if it % 2 == 1:
        gn = g.norm().item()
        print(f"newton iter {it + 1}: nll {nll(w).item():.8f} |grad| " + (f"{gn:.3e}" if gn > 1e-10 else "< 1e-10"))
print("w", [round(v, 6) for v in w.tolist()])
cov = torch.linalg.inv(torch.func.hessian(nll)(w))
print("standard errors", [round(v, 6) for v in cov.diagonal().sqrt().tolist()])

# ---- a deep-equilibrium layer with an implicit backward ------------------------------------------


class FixedPoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, W):
        z = torch.zeros_like(x)
        for _ in range(200):
            z_next = torch.tanh(z @ W.T + x)
            if (z_next - z).abs().max() < 1e-13:
                z = z_next
                break
            z = z_next
        ctx.save_for_backward(z, W)
        return z

    @staticmethod
    def backward(ctx, grad_z):
        z, W = ctx.saved_tensors
        s = 1 - z**2  # tanh' at the fixed point
        eye = torch.eye(W.shape[0])
        gx_rows = []
        for b in range(z.shape[0]):
            J = s[b].unsqueeze(1) * W  # d f / d z
            gx_rows.append(torch.linalg.solve((eye - J).T, grad_z[b]) * s[b])
        u = torch.stack(gx_rows)  # dL/d(pre-activation)
        return u, u.T @ z


torch.manual_seed(2)
k = 5
W = (torch.randn(k, k) * 0.25).requires_grad_(True)
x = torch.randn(3, k, requires_grad=True)
z = FixedPoint.apply(x, W)
print("fixed point", torch.allclose(z, torch.tanh(z @ W.T + x), atol=1e-12), "z sum", f"{z.sum().item():.8f}")
print("gradcheck", torch.autograd.gradcheck(FixedPoint.apply, (x, W), eps=1e-6, atol=1e-6))


class DEQ(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.inp = nn.Linear(2, dim)
        self.W = nn.Parameter(torch.randn(dim, dim) * 0.1)
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        return self.out(FixedPoint.apply(self.inp(x), self.W)).squeeze(-1)


torch.manual_seed(3)
Xs = torch.randn(64, 2)
ys = torch.sin(Xs[:, 0]) * Xs[:, 1]
model = DEQ(8)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(60):
    loss = (model(Xs) - ys).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"deq step {step}: loss {loss.item():.6f}")
print(f"deq final loss {loss.item():.6f}", "spectral norm of W", f"{torch.linalg.matrix_norm(model.W, 2).item():.6f}")
