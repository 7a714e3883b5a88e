"""A linear-Gaussian state-space model, as the "Kalman filter in PyTorch" tutorials write it: a
constant-velocity tracker simulated with torch.distributions.MultivariateNormal, the Kalman filter
(predict / update with linalg.solve for the gain, the Joseph form for the covariance), the
marginal log-likelihood from the innovations (checked against MultivariateNormal.log_prob of the
stacked observations), the Rauch-Tung-Striebel smoother, the noise scales learned by gradient
ascent on the log-likelihood through the whole filter (parameters kept positive by softplus and
the process covariance built with torch.block_diag / torch.kron), and a batched filter over
several independent tracks with torch.vmap-free broadcasting. In float64."""
import math

import torch
import torch.nn.functional as F
from torch.distributions import MultivariateNormal

torch.set_default_dtype(torch.float64)
torch.manual_seed(0)

dt = 0.1
F1 = torch.tensor([[1.0, dt], [0.0, 1.0]])
Fm = torch.block_diag(F1, F1)  # (x, vx, y, vy)
Q1 = torch.tensor([[dt**3 / 3, dt**2 / 2], [dt**2 / 2, dt]])
H = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])


def process_cov(q):
    return torch.kron(torch.eye(2), Q1) * q


true_q, true_r = 0.5, 0.2
T = 40
x = torch.tensor([0.0, 1.0, 0.0, 0.5])
xs, ys = [], []
proc = MultivariateNormal(torch.zeros(4), covariance_matrix=process_cov(true_q) + 1e-9 * torch.eye(4))
obs = MultivariateNormal(torch.zeros(2), covariance_matrix=true_r**2 * torch.eye(2))
for t in range(T):
    x = Fm @ x + proc.sample()
    xs.append(x)
    ys.append(H @ x + obs.sample())
xs, ys = torch.stack(xs), torch.stack(ys)
print("simulated", tuple(xs.shape), tuple(ys.shape), f"final position {xs[-1, 0].item():.5f} {xs[-1, 2].item():.5f}")


def kalman_filter(ys, q, r, m0, P0):
    Q, R = process_cov(q), r**2 * torch.eye(2)
    m, P = m0, P0
    means, covs, preds, pred_covs = [], [], [], []
    loglik = torch.zeros(())
    I4 = torch.eye(4)
    for y in ys:
        m_pred = Fm @ m
        P_pred = Fm @ P @ Fm.T + Q
        S = H @ P_pred @ H.T + R
        K = torch.linalg.solve(S, H @ P_pred).T  # P_pred H^T S^-1 (S symmetric)
        v = y - H @ m_pred
        loglik = loglik - 0.5 * (v @ torch.linalg.solve(S, v) + torch.logdet(S) + 2 * math.log(2 * math.pi))
        m = m_pred + K @ v
        A = I4 - K @ H
        P = A @ P_pred @ A.T + K @ R @ K.T  # Joseph form
        means.append(m)
        covs.append(P)
        preds.append(m_pred)
        pred_covs.append(P_pred)
    return torch.stack(means), torch.stack(covs), torch.stack(preds), torch.stack(pred_covs), loglik


m0, P0 = torch.zeros(4), torch.eye(4)
means, covs, preds, pred_covs, ll = kalman_filter(ys, torch.tensor(true_q), torch.tensor(true_r), m0, P0)
rmse_obs = (ys - xs[:, [0, 2]]).pow(2).mean().sqrt()
rmse_kf = (means[:, [0, 2]] - xs[:, [0, 2]]).pow(2).mean().sqrt()
print(f"loglik {ll.item():.8f} rmse raw {rmse_obs.item():.6f} filtered {rmse_kf.item():.6f}")

# The same likelihood from the joint Gaussian of all observations.
n = 4 * T
big_F = torch.zeros(n, n)
Q, R = process_cov(torch.tensor(true_q)), true_r**2 * torch.eye(2)
powers = [torch.linalg.matrix_power(Fm, k) for k in range(T + 1)]
for i in range(T):
    for j in range(i + 1):
        big_F[4 * i:4 * i + 4, 4 * j:4 * j + 4] = powers[i - j]
noise_cov = torch.block_diag(*([Fm @ P0 @ Fm.T + Q] + [Q] * (T - 1)))
state_cov = big_F @ noise_cov @ big_F.T
big_H = torch.kron(torch.eye(T), H)
joint = MultivariateNormal(torch.zeros(2 * T), covariance_matrix=big_H @ state_cov @ big_H.T + torch.kron(torch.eye(T), R))
print("joint log_prob agrees", torch.allclose(joint.log_prob(ys.flatten()), ll), f"{joint.log_prob(ys.flatten()).item():.8f}")

# ---- Rauch-Tung-Striebel smoother ---------------------------------------------------------------
sm, sP = [means[-1]], [covs[-1]]
for t in range(T - 2, -1, -1):
    G = torch.linalg.solve(pred_covs[t + 1], Fm @ covs[t]).T
    sm.insert(0, means[t] + G @ (sm[0] - preds[t + 1]))
    sP.insert(0, covs[t] + G @ (sP[0] - pred_covs[t + 1]) @ G.T)
sm = torch.stack(sm)
rmse_s = (sm[:, [0, 2]] - xs[:, [0, 2]]).pow(2).mean().sqrt()
print(f"smoothed rmse {rmse_s.item():.6f}", "smoother beats filter", bool(rmse_s < rmse_kf),
      "velocity error", f"{(sm[:, [1, 3]] - xs[:, [1, 3]]).abs().mean().item():.6f}")
print("posterior std at t=20", [round(v, 6) for v in torch.stack(sP)[20].diagonal().sqrt().tolist()])

# ---- learning the noise scales by maximum likelihood ----------------------------------------------
raw_q = torch.tensor(0.0, requires_grad=True)
raw_r = torch.tensor(0.0, requires_grad=True)
opt = torch.optim.Adam([raw_q, raw_r], lr=0.1)
for step in range(30):
    q, r = F.softplus(raw_q), F.softplus(raw_r)
    *_, ll = kalman_filter(ys, q, r, m0, P0)
    loss = -ll / T
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step}: nll/T {loss.item():.6f} q {q.item():.5f} r {r.item():.5f} "
              f"grad {raw_q.grad.item():.6f} {raw_r.grad.item():.6f}")
print(f"learned q {F.softplus(raw_q).item():.5f} r {F.softplus(raw_r).item():.5f} (true {true_q} {true_r})")

# ---- several tracks at once: the same filter with a leading batch dim ---------------------------
torch.manual_seed(1)
B = 3
yb = ys.unsqueeze(0) + 0.05 * torch.randn(B, T, 2)
m, P = torch.zeros(B, 4), torch.eye(4).expand(B, 4, 4)
Q, R = process_cov(torch.tensor(true_q)), true_r**2 * torch.eye(2)
for t in range(T):
    m_pred = m @ Fm.T
    P_pred = Fm @ P @ Fm.T + Q
    S = H @ P_pred @ H.T + R
    K = torch.linalg.solve(S, H @ P_pred).transpose(-1, -2)
    v = yb[:, t] - m_pred @ H.T
    m = m_pred + (K @ v.unsqueeze(-1)).squeeze(-1)
    P = (torch.eye(4) - K @ H) @ P_pred
print("batched final means", [[round(v, 5) for v in row] for row in m[:, [0, 2]].tolist()])
print("batched covariance symmetric", torch.allclose(P, P.transpose(-1, -2), atol=1e-10),
      "positive definite", bool((torch.linalg.eigvalsh(P) > 0).all()))
