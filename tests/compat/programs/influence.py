"""Curvature tools as influence-function and second-order-optimisation scripts use them:
torch.autograd.functional.hvp/vhp/hessian/jacobian (vectorize=True, create_graph, tuples of
inputs, strict), Hessian-vector products by double backward through a logistic-regression loss,
conjugate gradient on H x = g for influence scores, the Gauss-Newton product J^T J v via
jacobian, torch.func.grad/jacrev/hessian, and a Hutchinson trace estimate with Rademacher probes."""
import torch
import torch.nn.functional as F
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)

n, d = 40, 5
X = torch.randn(n, d)
w_true = torch.randn(d)
y = (torch.sigmoid(X @ w_true) > torch.rand(n)).double()
w = torch.zeros(d, requires_grad=True)
opt = torch.optim.LBFGS([w], lr=1, max_iter=50, line_search_fn="strong_wolfe")
lam = 1e-2


def loss_fn(w, X=X, y=y):
    return F.binary_cross_entropy_with_logits(X @ w, y) + 0.5 * lam * w.pow(2).sum()


def closure():
    opt.zero_grad()
    l = loss_fn(w)
    l.backward()
    return l


opt.step(closure)
print(f"fitted loss {loss_fn(w).item():.10f} |grad| {torch.autograd.grad(loss_fn(w), w)[0].norm().item():.3e}")
w_hat = w.detach()

H = hessian(loss_fn, w_hat)
p = torch.sigmoid(X @ w_hat)
H_hand = X.T @ torch.diag(p * (1 - p)) @ X / n + lam * torch.eye(d)
print("hessian diag", [round(v, 10) for v in torch.diagonal(H).tolist()], torch.allclose(H, H_hand))
Hv = hessian(loss_fn, w_hat, vectorize=True)
print("vectorized hessian equal", torch.allclose(H, Hv), tuple(Hv.shape))

v = torch.randn(d)
_, hv = hvp(loss_fn, w_hat, v)
_, vh = vhp(loss_fn, w_hat, v)
print("hvp", [round(t, 10) for t in hv.tolist()], torch.allclose(hv, vh), torch.allclose(hv, H @ v))


# influence of each training point on a test loss: -g_test^T H^-1 g_i, H^-1 g_test by CG with hvps
def cg(hvp_fn, b, iters=20, tol=1e-12):
    x = torch.zeros_like(b)
    r = b.clone()
    p_ = r.clone()
    rs = r @ r
    for _ in range(iters):
        Ap = hvp_fn(p_)
        alpha = rs / (p_ @ Ap)
        x = x + alpha * p_
        r = r - alpha * Ap
        rs_new = r @ r
        if rs_new.sqrt() < tol:
            break
        p_ = r + (rs_new / rs) * p_
        rs = rs_new
    return x


x_test, y_test = torch.randn(1, d), torch.tensor([1.0])
w_var = w_hat.clone().requires_grad_(True)
g_test = torch.autograd.grad(loss_fn(w_var, x_test, y_test), w_var)[0]
g_train = torch.autograd.grad(loss_fn(w_var), w_var, create_graph=True)[0]


def hvp_fn(vec):
    return torch.autograd.grad(g_train, w_var, grad_outputs=vec, retain_graph=True)[0]


s_test = cg(hvp_fn, g_test)
print("cg residual", f"{(H @ s_test - g_test).norm().item():.3e}", torch.allclose(s_test, torch.linalg.solve(H, g_test)))
per_sample = torch.stack([torch.autograd.grad(F.binary_cross_entropy_with_logits(X[i] @ w_var, y[i]), w_var)[0]
                          for i in range(n)])
influence = -(per_sample @ s_test)
top = torch.topk(influence.abs(), 3)
print("top influence", top.indices.tolist(), [round(t, 8) for t in top.values.tolist()])

# jacobian of a small network's output w.r.t. two inputs (tuple), strict, vectorize, create_graph
W1 = torch.randn(3, 4)


def net(a, b):
    return torch.tanh(a @ W1) * b.sum()


a0, b0 = torch.randn(2, 3), torch.randn(2)
Ja, Jb = jacobian(net, (a0, b0))
Ja2, Jb2 = jacobian(net, (a0, b0), vectorize=True)
print("jacobian shapes", tuple(Ja.shape), tuple(Jb.shape), torch.allclose(Ja, Ja2) and torch.allclose(Jb, Jb2))
Jf = jacobian(net, (a0, b0), vectorize=True, strategy="forward-mode")
print("forward-mode equal", torch.allclose(Jf[0], Ja) and torch.allclose(Jf[1], Jb))
(Haa, Hab), (Hba, Hbb) = hessian(lambda a, b: net(a, b).pow(2).sum(), (a0, b0))
print("hessian blocks", tuple(Haa.shape), tuple(Hab.shape), tuple(Hba.shape), tuple(Hbb.shape),
      torch.allclose(Hab.reshape(6, 2), Hba.reshape(2, 6).T))
try:
    jacobian(lambda a, b: a * 2, (a0, b0), strict=True)
except RuntimeError as e:
    print("strict: RuntimeError")
_, jv = jvp(lambda a: net(a, b0), a0, torch.ones_like(a0))
print("jvp", [round(t, 8) for t in jv.flatten().tolist()[:4]])
out, vj = vjp(lambda a: net(a, b0), a0, torch.ones(2, 4))
print("vjp", [round(t, 8) for t in vj.flatten().tolist()[:4]], tuple(out.shape))

# create_graph: the Hessian itself is differentiable (d/dw of trace H)
w_cg = w_hat.clone().requires_grad_(True)
Hc = hessian(loss_fn, w_cg, create_graph=True)
(dtr,) = torch.autograd.grad(torch.trace(Hc), w_cg)
print("d trace(H)/dw", [round(t, 10) for t in dtr.tolist()], Hc.requires_grad)
_, hv_c = hvp(loss_fn, w_cg, v, create_graph=True)
print("hvp create_graph", hv_c.requires_grad, hv_c.grad_fn is not None)

# Gauss-Newton vector product J^T J v and a Hutchinson trace estimate
J = jacobian(lambda w_: torch.sigmoid(X @ w_), w_hat)
gn = J.T @ (J @ v)
print("gauss-newton", [round(t, 10) for t in gn.tolist()])
torch.manual_seed(1)
est = 0.0
for _ in range(200):
    z = torch.randint(0, 2, (d,)).double() * 2 - 1
    est += z @ hvp_fn(z)
print(f"hutchinson trace {est.item() / 200:.8f} exact {torch.trace(H).item():.8f}")

# torch.func style
gf = torch.func.grad(loss_fn)(w_hat)
Hf = torch.func.hessian(loss_fn)(w_hat)
Jr = torch.func.jacrev(lambda w_: torch.sigmoid(X @ w_))(w_hat)
print("func api", torch.allclose(gf, torch.autograd.grad(loss_fn(w_var), w_var)[0]), torch.allclose(Hf, H),
      torch.allclose(Jr, J))
