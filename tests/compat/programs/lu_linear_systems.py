"""Linear systems through the LU factorization, as the numerical-linear-algebra tutorials write it in
PyTorch: factor once with torch.linalg.lu_factor and solve many right-hand sides with lu_solve
(left/right, adjoint), P, L, U from linalg.lu and lu_unpack checked against A, the determinant
from U's diagonal and the pivots' parity, a 1-D Poisson problem (-u'' = f) solved by finite
differences, inverse iteration for the smallest eigenvalue reusing one factorization, least squares
through the normal equations (against lstsq), a singular matrix reported through lu_factor_ex's
info, the deprecated torch.lu / torch.lu_solve spellings, and gradients through lu_solve
(a small inverse problem fitted by gradient descent, checked against the closed form)."""
import math

import torch

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)

# ---- factor once, solve many -------------------------------------------------------------
n = 6
A = torch.randn(n, n) + n * torch.eye(n) * 0.5
LU, pivots = torch.linalg.lu_factor(A)
print("LU", tuple(LU.shape), "pivots", pivots.tolist())
B = torch.randn(n, 3)
X = torch.linalg.lu_solve(LU, pivots, B)
print("residual", f"{(A @ X - B).abs().max().item():.2e}", "vs solve",
      f"{(X - torch.linalg.solve(A, B)).abs().max().item():.2e}")
Xr = torch.linalg.lu_solve(LU, pivots, B.T, left=False)  # X A = B^T
Xa = torch.linalg.lu_solve(LU, pivots, B, adjoint=True)  # A^T X = B
print("right", f"{(Xr @ A - B.T).abs().max().item():.2e}", "adjoint", f"{(A.T @ Xa - B).abs().max().item():.2e}")
print("x[:, 0]", [round(v, 6) for v in X[:, 0].tolist()])

P, L, U = torch.linalg.lu(A)
print("P L U == A", torch.allclose(P @ L @ U, A), "L unit lower", torch.equal(L.diagonal(), torch.ones(n)),
      torch.equal(L, L.tril()), "U upper", torch.equal(U, U.triu()))
P2, L2, U2 = torch.lu_unpack(LU, pivots)
print("lu_unpack matches", torch.equal(P, P2), torch.allclose(L, L2), torch.allclose(U, U2))
print("row order", P.T.argmax(dim=1).tolist())

# The determinant: det(P) det(L) det(U) = (-1)^(swaps) * prod(diag U).
swaps = (pivots != torch.arange(1, n + 1)).sum()
det_lu = (-1.0) ** swaps.item() * LU.diagonal().prod()
print("det", f"{det_lu.item():.8f}", f"{torch.linalg.det(A).item():.8f}")

# ---- a 1-D Poisson problem ----------------------------------------------------------------
m = 49
h = 1.0 / (m + 1)
xs = torch.linspace(h, 1 - h, m)
K = (2 * torch.eye(m) - torch.diag(torch.ones(m - 1), 1) - torch.diag(torch.ones(m - 1), -1)) / h**2
f = math.pi**2 * torch.sin(math.pi * xs)
u = torch.linalg.lu_solve(*torch.linalg.lu_factor(K), f.unsqueeze(-1)).squeeze(-1)
err = (u - torch.sin(math.pi * xs)).abs().max()
print("poisson max error", f"{err.item():.6e}", "u(0.5)", f"{u[m // 2].item():.8f}")

# ---- inverse iteration: the smallest eigenvalue of an SPD matrix -----------------------------
G = torch.randn(8, 8)
S = G @ G.T + 0.5 * torch.eye(8)
LU_S, piv_S = torch.linalg.lu_factor(S)
v = torch.ones(8, 1) / math.sqrt(8)
for it in range(60):
    w = torch.linalg.lu_solve(LU_S, piv_S, v)
    v = w / w.norm()
lam = (v.T @ S @ v).item()
print("inverse iteration", f"{lam:.8f}", "eigvalsh", f"{torch.linalg.eigvalsh(S)[0].item():.8f}")

# ---- batched systems, tall and wide factorizations ---------------------------------------------
Ab = torch.randn(4, 5, 5) + 3 * torch.eye(5)
bb = torch.randn(4, 5, 2)
LUb, pivb, info = torch.linalg.lu_factor_ex(Ab)
xb = torch.linalg.lu_solve(LUb, pivb, bb)
print("batched", tuple(xb.shape), "info", info.tolist(), f"{(Ab @ xb - bb).abs().max().item():.2e}")
print("batched pivots", pivb.tolist())
tall, wide = torch.randn(7, 4), torch.randn(3, 6)
for name, M in (("tall", tall), ("wide", wide)):
    Pm, Lm, Um = torch.linalg.lu(M)
    print(name, tuple(Pm.shape), tuple(Lm.shape), tuple(Um.shape), torch.allclose(Pm @ Lm @ Um, M),
          f"{Um.abs().sum().item():.6f}")

# ---- least squares through the normal equations ------------------------------------------------
Xd = torch.randn(40, 3)
beta = torch.tensor([[1.5], [-2.0], [0.5]])
yd = Xd @ beta + 0.1 * torch.randn(40, 1)
LU_n, piv_n = torch.linalg.lu_factor(Xd.T @ Xd)
beta_hat = torch.linalg.lu_solve(LU_n, piv_n, Xd.T @ yd)
print("normal equations", [round(b, 6) for b in beta_hat.squeeze().tolist()],
      "lstsq agrees", torch.allclose(beta_hat, torch.linalg.lstsq(Xd, yd).solution))

# ---- a singular matrix ---------------------------------------------------------------------
Sg = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
LU_g, piv_g, info_g = torch.linalg.lu_factor_ex(Sg)
print("singular info", info_g.item(), "U diag", [round(d, 6) for d in LU_g.diagonal().tolist()])
try:
    torch.linalg.lu_factor(Sg)
except RuntimeError as e:
    print("lu_factor raised", "zero pivot" if "is zero" in str(e) else str(e))

# ---- the deprecated spellings ----------------------------------------------------------------
import warnings  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    LU_old, piv_old = torch.lu(A)
    x_old = torch.lu_solve(B, LU_old, piv_old)
    LU_i, piv_i, info_i = A.lu(get_infos=True)
    print("deprecated lu", torch.equal(LU_old, LU), torch.equal(piv_old, pivots), info_i.item(),
          torch.allclose(x_old, X), torch.allclose(B.lu_solve(LU_i, piv_i), X))

# ---- gradients through lu_solve: fit a diagonal so that A(d) x = b hits a target ---------------
torch.manual_seed(1)
A0 = torch.randn(5, 5)
b = torch.randn(5, 1)
x_target = torch.randn(5, 1)
d = torch.full((5,), 4.0, requires_grad=True)
opt = torch.optim.Adam([d], lr=0.1)
for step in range(150):
    Ad = A0 + torch.diag(d)
    x = torch.linalg.lu_solve(*torch.linalg.lu_factor(Ad), b)
    loss = (x - x_target).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} loss {loss.item():.6f}")
print("final loss", f"{loss.item():.6f}", "d", [round(v, 4) for v in d.tolist()])

# The gradient of the solve wrt A is -A^-T g x^T (g = dloss/dx): check it through LU.
Ag = (A0 + 4 * torch.eye(5)).requires_grad_()
LU_a, piv_a = torch.linalg.lu_factor(Ag)
xa = torch.linalg.lu_solve(LU_a, piv_a, b)
g = 2 * (xa - x_target)
(xa - x_target).pow(2).sum().backward()
closed = -torch.linalg.solve(Ag.detach().T, g.detach()) @ xa.detach().T
print("grad wrt A matches closed form", torch.allclose(Ag.grad, closed), f"{Ag.grad.norm().item():.8f}")
print("grad_fn", type(xa.grad_fn).__name__, type(LU_a.grad_fn).__name__)
